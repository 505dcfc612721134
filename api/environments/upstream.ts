import type { EnvironmentRow, EnvironmentStore } from '../../db/environments/store.ts';
import { NotFoundError, UpstreamUnavailableError } from '../../lib/errors.ts';
import type { NextAction } from '../../contracts/outcomes.ts';
import {
  classifySupersetFailure,
  SupersetCircuitOpenError,
  type SupersetClient,
  type SupersetClientPool,
} from '../../lib/superset/index.ts';
import { upstreamReason } from '../../lib/upstream-reason.ts';

/**
 * The stable 503 the endpoints answer when an environment's Superset cannot serve them:
 * `code: upstream_unavailable`, plus `env_id`, `reason` (network, timeout, server_error,
 * bad_response, too_large, auth_failed, forbidden, import_refused, refused) and `upstream_status`
 * when Superset answered. `upstream_detail` is one bounded line without markup or tokens
 * (upstream-reason.ts), never Superset's body. `next_actions` says what to do: check that
 * Superset, test the environment, retry. While the environment's circuit is open (the API decided
 * an outage: lib/superset/transport/circuit.ts) the detail says since when, and `circuit: open`,
 * `checked_at` and `retry_at` are set.
 */
export class EnvironmentUnavailableError extends UpstreamUnavailableError {
  override name = 'EnvironmentUnavailableError';
  readonly reason: string;
  constructor(env: Pick<EnvironmentRow, 'id' | 'name'>, reason: string, upstreamDetail: string, upstreamStatus?: number, cause?: unknown) {
    const open = cause instanceof SupersetCircuitOpenError ? cause : undefined;
    super(
      'Superset',
      open
        ? `The Superset of environment '${env.name}' ${open.message.replace(/^Superset at \S+ /, '')}`
        : `The Superset of environment '${env.name}' is unavailable (${reason.replace(/_/g, ' ')})`,
      cause,
    );
    this.reason = reason;
    Object.assign(this.extra ?? {}, {
      env_id: env.id,
      reason,
      upstream_detail: upstreamReason(upstreamDetail) ?? reason.replace(/_/g, ' '),
      ...(upstreamStatus !== undefined ? { upstream_status: upstreamStatus } : {}),
      ...(open ? { circuit: 'open', checked_at: open.checkedAt.toISOString(), retry_at: open.retryAt.toISOString() } : {}),
      next_actions: unavailableActions(env.id),
    });
  }
}

export interface UseOptions {
  /**
   * What Superset's 404 means here, named for the caller's 404 (e.g. "Dashboard 7 in environment
   * 'prod'"). Without it Superset's own 404 passes through as a 404.
   */
  notFound?: (env: EnvironmentRow) => string;
}

/**
 * The API's one way to Superset: look the environment up (404 when unknown), take its pooled
 * client, run the work, and map what Superset did wrong (classifySupersetFailure) to the
 * endpoint's answer: a 404 stays a 404, everything else is EnvironmentUnavailableError (503).
 *
 *   const items = await app.supersets.use(envId, (client, env) => client.databases.list());
 */
export class Supersets {
  private readonly store: EnvironmentStore;
  private readonly pool: SupersetClientPool;

  constructor(deps: { store: EnvironmentStore; pool: SupersetClientPool }) {
    this.store = deps.store;
    this.pool = deps.pool;
  }

  async use<T>(envId: string, work: (client: SupersetClient, env: EnvironmentRow) => Promise<T>, opts: UseOptions = {}): Promise<T> {
    const env = await this.store.get(envId);
    const client = this.pool.clientFor(env.id, this.store.connection(env));
    try {
      return await work(client, env);
    } catch (err) {
      const failure = classifySupersetFailure(err);
      if (!failure) throw err;
      if (failure.reason === 'not_found') throw opts.notFound ? new NotFoundError(opts.notFound(env)) : err;
      throw new EnvironmentUnavailableError(env, failure.reason, (err as Error).message, failure.upstream?.status, err);
    }
  }

  /** The environment's Superset answered a connection test: its circuit closes, so the next request goes out. */
  reachable(envId: string): void {
    this.pool.resetCircuit(envId);
  }

  /** Drops the environment's pooled client (its settings changed, or it was deleted). */
  evict(envId: string): void {
    this.pool.evict(envId);
  }

  close(): void {
    this.pool.close();
  }
}

/** What to do about an environment whose Superset is unavailable: look at it, test it, then ask again. */
export function unavailableActions(envId: string): NextAction[] {
  return [
    {
      action: 'test_environment',
      description:
        "Check the environment's Superset, then retry; the connection test says whether it answers and what the service account may do",
      request: { method: 'POST', path: `/api/environments/${envId}/test`, body: {} },
    },
  ];
}
