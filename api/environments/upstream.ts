import type { EnvironmentRow } from '../../db/environments/repository.ts';
import { UpstreamUnavailableError } from '../../lib/errors.ts';
import {
  SupersetApiError,
  SupersetAuthError,
  SupersetForbiddenError,
  SupersetNotFoundError,
  SupersetUnavailableError,
} from '../../lib/superset/errors.ts';

/**
 * The stable 503 the read endpoints answer when an environment's Superset cannot serve them:
 * `code: upstream_unavailable`, plus `env_id`, `reason` (network, timeout, server_error,
 * bad_response, too_large, auth_failed, forbidden, refused) and `upstream_status` when Superset answered.
 */
export class EnvironmentUnavailableError extends UpstreamUnavailableError {
  override name = 'EnvironmentUnavailableError';
  readonly reason: string;
  constructor(env: Pick<EnvironmentRow, 'id' | 'name'>, reason: string, upstreamDetail: string, upstreamStatus?: number, cause?: unknown) {
    super('Superset', `The Superset of environment '${env.name}' is unavailable (${reason.replace(/_/g, ' ')})`, cause);
    this.reason = reason;
    Object.assign(this.extra ?? {}, {
      env_id: env.id,
      reason,
      upstream_detail: upstreamDetail,
      ...(upstreamStatus !== undefined ? { upstream_status: upstreamStatus } : {}),
    });
  }
}

/**
 * Runs an upstream read for an environment. Superset's 404 passes through (the caller turns it
 * into its own 404); every other failure becomes EnvironmentUnavailableError (503).
 */
export async function fromUpstream<T>(env: Pick<EnvironmentRow, 'id' | 'name'>, work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (err) {
    throw asUnavailable(env, err);
  }
}

export function asUnavailable(env: Pick<EnvironmentRow, 'id' | 'name'>, err: unknown): unknown {
  if (err instanceof SupersetNotFoundError || err instanceof EnvironmentUnavailableError) return err;
  if (err instanceof SupersetUnavailableError)
    return new EnvironmentUnavailableError(env, err.reason, err.message, err.upstreamStatus, err);
  if (err instanceof SupersetApiError) {
    const reason = err instanceof SupersetAuthError ? 'auth_failed' : err instanceof SupersetForbiddenError ? 'forbidden' : 'refused';
    return new EnvironmentUnavailableError(env, reason, err.message, err.upstreamStatus, err);
  }
  return err;
}
