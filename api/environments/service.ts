import type { Context } from 'koa';
import type { EnvironmentFields, EnvironmentStore } from '../../db/environments/store.ts';
import { assertDestinationAllowed, EgressPolicy } from '../../lib/egress/policy.ts';
import { AppError, HostNotAllowedError, SecretRequiredError } from '../../lib/errors.ts';
import type { Logger } from '../../lib/logger.ts';
import { assertSecretResent } from '../../lib/secret-destination.ts';
import { SupersetApiError, SupersetClient, SupersetUnavailableError, type SupersetCapabilities } from '../../lib/superset/index.ts';
import { describeUpstreamAnswer, upstreamReason } from '../../lib/upstream-reason.ts';
import { can, type Principal } from '../auth/principal.ts';
import type { SecurityEventInput, SecurityEventService } from '../auth/security-events.ts';
import { toEnvironmentView, type EnvironmentView } from './schemas.ts';
import type { Supersets } from './upstream.ts';
import { supersetObserver } from '../../lib/telemetry/upstream.ts';

/** Who asked, for the security events every environment change writes and the protection rule. */
export interface Actor {
  ctx?: Context;
  principal?: Principal;
}

/**
 * What stopped an environment test, in Switchyard's words: of what Superset answered only the
 * status and a short, sanitised reason (upstream-reason.ts), never its body; the password the
 * test sent is masked should Superset repeat it.
 */
function testFailure(err: AppError, secrets: string[]): { code: string; detail: string } {
  if (err instanceof SupersetApiError)
    return {
      code: err.code,
      detail: `${err.title}: Superset answered ${describeUpstreamAnswer(err.upstreamStatus, err.upstreamMessage, secrets)}`,
    };
  if (err instanceof SupersetUnavailableError && err.upstreamStatus !== undefined)
    return {
      code: err.code,
      detail: `Superset failed (${err.reason.replace(/_/g, ' ')}): ${describeUpstreamAnswer(err.upstreamStatus, err.upstreamMessage, secrets)}`,
    };
  return { code: err.code, detail: upstreamReason(err.message, secrets) ?? err.title };
}

/**
 * Setting or clearing `protected`, deleting a protected environment, and changing where a protected
 * environment's service account goes are an administrator's call.
 */
const PROTECT_PERMISSION = 'admin:settings:WRITE';

/** The fields that decide which host receives a protected environment's credentials, and which ones. */
const CONNECTION_FIELDS = ['base_url', 'username', 'password', 'verify_tls'] as const;

function assertMayChangeProtection(actor: Actor, what: string): void {
  // No principal: the deployment itself (bootstrap, tests' setup), which has every right.
  if (actor.principal && !can(actor.principal, PROTECT_PERMISSION))
    throw new ProtectionChangeForbidden(
      `${what} needs the permission ${PROTECT_PERMISSION} (an administrator's): a protected environment's tasks wait for a second person, and only an administrator decides which environments do`,
    );
}

/**
 * Repointing a protected environment (another host, account or password, TLS off) would send the
 * approved writes of other people, and its backups' reads, wherever the caller chose.
 */
function assertMayRepointProtected(actor: Actor, before: { protected: boolean }, input: EnvironmentInput): void {
  const fields = CONNECTION_FIELDS.filter((f) => input[f] !== undefined);
  if (before.protected && fields.length)
    assertMayChangeProtection(
      actor,
      `Changing ${fields.join(', ')} of a protected environment (where its service account's credentials go)`,
    );
}

class ProtectionChangeForbidden extends AppError {
  constructor(detail: string) {
    super(403, 'protection_admin_only', 'Forbidden', detail);
  }
}

export interface EnvironmentInput {
  name?: string;
  base_url?: string;
  username?: string;
  password?: string;
  verify_tls?: boolean;
  timeout_seconds?: number;
  description?: string | null;
  protected?: boolean;
}

export interface EnvironmentTestReport {
  env_id: string;
  ok: boolean;
  reachable: boolean;
  login: boolean;
  version: string | null;
  missing_permissions: string[];
  checked_permissions: string[];
  /** What the instance can do, probed (list filters and columns, security API, thumbnails); null when the check stopped earlier. */
  capabilities: SupersetCapabilities | null;
  latency_ms: number;
  error: { code: string; detail: string } | null;
}

/** Environments: CRUD (the store encrypts the password at rest, bound to its row) and the connection test. */
export class EnvironmentService {
  private readonly store: EnvironmentStore;
  private readonly supersets: Supersets;
  private readonly logger: Logger;
  private readonly events: SecurityEventService;
  private readonly egress: EgressPolicy;

  constructor(deps: {
    store: EnvironmentStore;
    supersets: Supersets;
    logger: Logger;
    events: SecurityEventService;
    /** Where Superset may be (ALLOWED_UPSTREAM_HOSTS): checked on every base_url stored and by the test's client. */
    egress?: EgressPolicy;
  }) {
    this.egress = deps.egress ?? EgressPolicy.OPEN;
    this.store = deps.store;
    this.supersets = deps.supersets;
    this.events = deps.events;
    this.logger = deps.logger;
  }

  async list(page: number, pageSize: number) {
    const { rows, total } = await this.store.list(page, pageSize);
    return { items: rows.map(toEnvironmentView), total, page, page_size: pageSize, has_next: page * pageSize < total };
  }

  async get(id: string): Promise<EnvironmentView> {
    return toEnvironmentView(await this.store.get(id));
  }

  private audit(actor: Actor, ev: Omit<SecurityEventInput, 'actorId' | 'actorUsername'>): Promise<void> {
    return this.events.record(actor.ctx, {
      ...ev,
      actorId: actor.principal?.userId ?? null,
      actorUsername: actor.principal?.username ?? null,
    });
  }

  async create(
    input: Required<Pick<EnvironmentInput, 'name' | 'base_url' | 'username' | 'password'>> & EnvironmentInput,
    actor: Actor = {},
  ): Promise<EnvironmentView> {
    if (input.protected) assertMayChangeProtection(actor, 'Creating a protected environment');
    await assertDestinationAllowed(this.egress, input.base_url, 'body.base_url');
    const row = await this.store.create({
      name: input.name,
      base_url: input.base_url,
      username: input.username,
      password: input.password,
      verify_tls: input.verify_tls ?? true,
      timeout_seconds: input.timeout_seconds ?? 30,
      description: input.description ?? null,
      protected: input.protected ?? false,
    });
    this.logger.info({ env_id: row.id, name: row.name, base_url: row.base_url }, 'environment created');
    await this.audit(actor, {
      type: 'ENVIRONMENT_CREATED',
      outcome: 'success',
      detail: { env_id: row.id, name: row.name, base_url: row.base_url, username: row.username, verify_tls: row.verify_tls },
    });
    return toEnvironmentView(row);
  }

  /**
   * Changes only the fields given. A change of where the password is sent (base URL origin or
   * path, TLS verification off) without the password is refused before anything is saved; the
   * store checks under a row lock, so a concurrent change cannot slip in between.
   */
  async update(id: string, input: EnvironmentInput, actor: Actor = {}): Promise<EnvironmentView> {
    const patch: Partial<EnvironmentFields> = {};
    if (input.name !== undefined) patch.name = input.name;
    if (input.base_url !== undefined) patch.base_url = input.base_url;
    if (input.username !== undefined) patch.username = input.username;
    if (input.password !== undefined) patch.password = input.password;
    if (input.verify_tls !== undefined) patch.verify_tls = input.verify_tls;
    if (input.timeout_seconds !== undefined) patch.timeout_seconds = input.timeout_seconds;
    if (input.description !== undefined) patch.description = input.description;
    if (input.protected !== undefined) patch.protected = input.protected;
    if (input.base_url !== undefined) await assertDestinationAllowed(this.egress, input.base_url, 'body.base_url');
    let changed;
    try {
      changed = await this.store.update(id, patch, (before) => {
        // Checked under the row lock with the secret rule: the flag read is the one being changed.
        if (input.protected !== undefined && input.protected !== before.protected)
          assertMayChangeProtection(actor, input.protected ? 'Protecting an environment' : "Clearing an environment's protection");
        assertMayRepointProtected(actor, before, input);
        assertSecretResent({
          before: { url: before.base_url, verifyTls: before.verify_tls },
          after: { url: input.base_url, verifyTls: input.verify_tls },
          secretSent: input.password !== undefined,
          secretField: 'body.password',
          urlField: 'body.base_url',
        });
      });
    } catch (err) {
      const reason =
        err instanceof SecretRequiredError
          ? 'secret_required'
          : err instanceof ProtectionChangeForbidden
            ? 'protection_admin_only'
            : undefined;
      if (reason) {
        await this.audit(actor, {
          type: 'ENVIRONMENT_UPDATED',
          outcome: 'failure',
          detail: { env_id: id, reason, requested: Object.keys(input), base_url_requested: input.base_url ?? null },
        });
      }
      throw err;
    }
    const { before, row } = changed;
    this.supersets.evict(id);
    const fields = Object.keys(patch);
    this.logger.info({ env_id: id, changed: fields }, 'environment updated');
    await this.audit(actor, {
      type: 'ENVIRONMENT_UPDATED',
      outcome: 'success',
      detail: {
        env_id: id,
        name: row.name,
        changed: fields,
        ...(before.base_url !== row.base_url ? { base_url: { from: before.base_url, to: row.base_url } } : {}),
      },
    });
    return toEnvironmentView(row);
  }

  async remove(id: string, actor: Actor = {}): Promise<void> {
    const row = await this.store.get(id);
    if (row.protected) assertMayChangeProtection(actor, 'Deleting a protected environment');
    await this.store.remove(id);
    this.supersets.evict(id);
    this.logger.info({ env_id: id }, 'environment deleted');
    await this.audit(actor, {
      type: 'ENVIRONMENT_DELETED',
      outcome: 'success',
      detail: { env_id: id, name: row.name, base_url: row.base_url },
    });
  }

  /**
   * Reachability (the version file, or any answer at all), login, Superset version, the
   * permissions the service account lacks and what the instance can do (its capabilities, the
   * same probe the migration relies on). Uses a fresh client, so the login is real.
   */
  async test(id: string, actor: Actor = {}): Promise<EnvironmentTestReport> {
    const row = await this.store.get(id);
    const started = Date.now();
    const { connection } = this.store.connection(row);
    const client = new SupersetClient(connection, { retry: { attempts: 1 }, egress: this.egress, observe: supersetObserver(id) });
    const report: EnvironmentTestReport = {
      env_id: id,
      ok: false,
      reachable: false,
      login: false,
      version: null,
      missing_permissions: [],
      checked_permissions: [],
      capabilities: null,
      latency_ms: 0,
      error: null,
    };
    try {
      report.version = await client.instance.version();
      report.reachable = true;
      await client.login();
      report.login = true;
      const probe = await client.instance.probePermissions();
      report.checked_permissions = probe.checked;
      report.missing_permissions = probe.missing;
      report.capabilities = await client.instance.probeCapabilities();
      report.ok = probe.missing.length === 0;
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      // Superset answered something (even an error) only if this is not a transport failure.
      const answered = err instanceof SupersetApiError || (err instanceof SupersetUnavailableError && err.upstreamStatus !== undefined);
      if (answered || !(err instanceof SupersetUnavailableError || err instanceof HostNotAllowedError)) report.reachable = true;
      report.error = testFailure(err, [connection.password]);
    } finally {
      client.close();
      report.latency_ms = Date.now() - started;
    }
    // The person was told to test the environment before retrying: an answer closes its circuit.
    if (report.reachable) this.supersets.reachable(id);
    this.logger.info(
      { env_id: id, ok: report.ok, reachable: report.reachable, login: report.login, version: report.version },
      'environment tested',
    );
    await this.audit(actor, {
      type: 'ENVIRONMENT_TESTED',
      outcome: report.ok ? 'success' : 'failure',
      detail: {
        env_id: id,
        name: row.name,
        base_url: row.base_url,
        reachable: report.reachable,
        login: report.login,
        error: report.error?.code ?? null,
      },
    });
    return report;
  }
}
