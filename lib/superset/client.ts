/**
 * The one Superset REST client, used by the API and by Temporal activities.
 *
 * - Login with JWT (`provider` db by default), access token renewed from the refresh token or by a
 *   fresh login before it expires and on any 401; one login at a time per client (single flight).
 * - Mutating calls carry the CSRF token, the Flask `session` cookie it belongs to and a Referer: a
 *   bearer token does not exempt a call from Superset's CSRF check. A stale CSRF token is renewed once.
 * - `Accept: application/json` everywhere: Superset answers errors with HTML pages when the
 *   caller accepts HTML.
 * - Rison `q=` (the `rison` package), paging through lists, a deadline per request from the
 *   environment's `timeout_seconds`, retries with backoff on GETs only, and only for what
 *   `classifySupersetFailure` calls retryable.
 * - The wire is undici: a connection pool per instance, header and body deadlines plus an overall
 *   one, a size cap enforced while the answer is read, `FormData` for imports, and no redirect
 *   handling at all (a 3xx comes back as an answer).
 * - Errors become the typed errors of ./errors.ts.
 * - Requests only go to the environment's own origin: URLs are the configured base URL plus fixed
 *   paths whose variable parts are integers or `[A-Za-z0-9_-]` tokens; redirects are never
 *   followed, except a thumbnail's digest redirect, and only to the same origin and path family.
 * - TLS certificates are verified unless the environment says `verify_tls: false`.
 * - With an egress policy (ALLOWED_UPSTREAM_HOSTS) every connection goes through it: a refused
 *   host or address fails the call with HostNotAllowedError before anything is sent.
 * - Secrets (password, tokens, cookies) are never logged.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { FormData, Pool, type Dispatcher } from 'undici';
import { egressConnector } from '../egress/connect.ts';
import { egressRefusal, type EgressPolicy } from '../egress/policy.ts';
import { RASTER_TYPES, rasterTypeOf } from './raster.ts';
import { encodeRison } from './rison.ts';
import {
  classifySupersetFailure,
  normaliseErrorBody,
  SupersetApiError,
  SupersetAuthError,
  SupersetForbiddenError,
  SupersetImportError,
  SupersetNotFoundError,
  SupersetUnavailableError,
  type UnavailableReason,
  type UpstreamContext,
} from './errors.ts';
import type {
  ChartDataQueryContext,
  ChartDataResponse,
  ChartListItem,
  DashboardChart,
  DashboardDataset,
  DashboardDetail,
  DashboardListItem,
  DatabaseInfo,
  DatasetDetail,
  DatasetListItem,
  DatasetRelatedObjects,
  DatasetUpdate,
  ImportOptions,
  ListQuery,
  ListResponse,
  ListCapabilities,
  PermissionProbe,
  RlsRule,
  RlsRuleWrite,
  SupersetCapabilities,
  SqlLabQuery,
  SqlLabResult,
  SupersetConnection,
  Thumbnail,
  UpstreamAccount,
  UpstreamRole,
} from './types.ts';

export interface ClientLogger {
  debug(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
}

export interface RetryPolicy {
  /** Attempts for a GET, the first included (default 3). Mutating calls are tried once. */
  attempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /** Retry a GET that hit its deadline (default false: a caller waiting on the API should not wait 3x). */
  onTimeout: boolean;
}

export interface SupersetClientOptions {
  logger?: ClientLogger;
  retry?: Partial<RetryPolicy>;
  /** Largest JSON answer accepted (default 64 MiB). */
  maxJsonBytes?: number;
  /** Largest export/thumbnail accepted (default 512 MiB). */
  maxBinaryBytes?: number;
  /** Concurrent connections to the instance (default 8). */
  maxSockets?: number;
  /** Pages fetched at once by listAll (default 4). */
  listConcurrency?: number;
  /** How long probed capabilities are trusted before the release is read again (default CAPABILITIES_RECHECK_MS). */
  capabilitiesRecheckMs?: number;
  /** Where connections may go (lib/egress/policy.ts); none: anywhere. */
  egress?: EgressPolicy;
}

export type Resource = 'dashboard' | 'chart' | 'dataset' | 'database';

const DEFAULT_RETRY: RetryPolicy = { attempts: 3, baseDelayMs: 150, maxDelayMs: 2_000, onTimeout: false };
const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
/** How long probed capabilities are trusted before the release is read again (a changed release re-probes). */
export const CAPABILITIES_RECHECK_MS = 5 * 60_000;
/** Superset clamps page_size to 100 (FAB_API_MAX_PAGE_SIZE). */
export const MAX_PAGE_SIZE = 100;
const USERNAME_TTL_MS = 60_000;

/** Dashboard list columns this project reads; unknown names are dropped by Superset, so older releases are fine. */
export const DASHBOARD_LIST_COLUMNS = [
  'id',
  'uuid',
  'dashboard_title',
  'slug',
  'url',
  'published',
  'status',
  'thumbnail_url',
  'certified_by',
  'certification_details',
  'changed_on_utc',
  'changed_on_delta_humanized',
  'changed_by.id',
  'changed_by.first_name',
  'changed_by.last_name',
  'changed_by_name',
  'created_by.id',
  'created_by.first_name',
  'created_by.last_name',
  'owners.id',
  'owners.first_name',
  'owners.last_name',
  'owners.email',
  'tags.id',
  'tags.name',
  'tags.type',
  'is_managed_externally',
];

export const DATASET_LIST_COLUMNS = [
  'id',
  'uuid',
  'table_name',
  'schema',
  'catalog',
  'sql',
  'kind',
  'description',
  'explore_url',
  'datasource_type',
  'database.id',
  'database.database_name',
  'database.uuid',
  'owners.id',
  'owners.first_name',
  'owners.last_name',
  'changed_by_name',
  'changed_on_utc',
];

export const DATABASE_LIST_COLUMNS = [
  'id',
  'uuid',
  'database_name',
  'backend',
  'expose_in_sqllab',
  'allow_dml',
  'allow_run_async',
  'allow_multi_catalog',
];

/** Parses and checks a configured base URL: http(s), no credentials, query or fragment; trailing slashes dropped. */
export function normaliseBaseUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw new TypeError('base_url is not a URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new TypeError('base_url must be http or https');
  if (url.username || url.password) throw new TypeError('base_url must not carry credentials');
  if (url.search || url.hash) throw new TypeError('base_url must not carry a query or fragment');
  if (!url.hostname) throw new TypeError('base_url needs a host');
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}

/** One path segment from an id: a non-negative integer, or an `[A-Za-z0-9_-]` token (slug, uuid, digest). */
export function seg(value: number | string): string {
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value) || value < 0) throw new TypeError(`not an id: ${value}`);
    return String(value);
  }
  if (!/^[A-Za-z0-9_-]{1,255}$/.test(value)) throw new TypeError('identifier may only hold letters, digits, _ and -');
  return value;
}

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

interface CallSpec {
  method: Method;
  path: string;
  q?: unknown;
  query?: Record<string, string | number | boolean>;
  json?: unknown;
  form?: FormData;
  accept?: string;
  /** Statuses returned to the caller instead of raised (thumbnails: 202, 302, 404). */
  pass?: number[];
  /** Skip authentication (version file, health). */
  anonymous?: boolean;
  maxBytes?: number;
}

/** An answer as read off the wire: status, headers (lower-case names) and the whole body. */
interface WireResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

interface AuthState {
  accessToken: string;
  refreshToken?: string;
  /** Epoch ms; 0 when the token carries no `exp`. */
  expiresAt: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Reading the answer went over the size cap. */
class TooLarge extends Error {}

export class SupersetClient {
  readonly baseUrl: string;
  private readonly base: URL;
  private readonly conn: SupersetConnection;
  /** Keep-alive connections for reads. */
  private readonly pool: Pool;
  /**
   * Mutating calls get a connection of their own, closed after the answer: they are never
   * retried, so a kept-alive socket the server closed meanwhile must not fail them.
   */
  private readonly freshPool: Pool;
  private readonly retry: RetryPolicy;
  private readonly timeoutMs: number;
  private readonly logger?: ClientLogger;
  private readonly maxJsonBytes: number;
  private readonly maxBinaryBytes: number;
  private readonly listConcurrency: number;
  private readonly capabilitiesRecheckMs: number;
  private auth?: AuthState;
  private authFlight?: Promise<AuthState>;
  private csrf?: string;
  private csrfFlight?: Promise<string>;
  private readonly cookies = new Map<string, string>();
  private readonly listQueues = new Map<string, Promise<unknown>>();
  private readonly usernames = new Map<string, { at: number; value: Promise<{ ids: number[]; aliases: string[]; exact: boolean }> }>();
  private caps?: { value: SupersetCapabilities; checkedAt: number };
  private capsFlight?: Promise<SupersetCapabilities>;
  private closed = false;

  constructor(conn: SupersetConnection, opts: SupersetClientOptions = {}) {
    this.baseUrl = normaliseBaseUrl(conn.baseUrl);
    this.base = new URL(this.baseUrl);
    this.conn = conn;
    this.retry = { ...DEFAULT_RETRY, ...opts.retry };
    this.timeoutMs = Math.max(1, conn.timeoutSeconds ?? 30) * 1000;
    this.logger = opts.logger;
    this.maxJsonBytes = opts.maxJsonBytes ?? 64 * 1024 * 1024;
    this.maxBinaryBytes = opts.maxBinaryBytes ?? 512 * 1024 * 1024;
    this.listConcurrency = Math.max(1, opts.listConcurrency ?? 4);
    this.capabilitiesRecheckMs = opts.capabilitiesRecheckMs ?? CAPABILITIES_RECHECK_MS;
    const tls = { rejectUnauthorized: conn.verifyTls !== false, timeout: this.timeoutMs };
    const connect = opts.egress?.restricted ? egressConnector(opts.egress, tls) : tls;
    const connections = Math.max(1, opts.maxSockets ?? 8);
    this.pool = new Pool(this.base.origin, { connections, connect, keepAliveTimeout: 10_000 });
    this.freshPool = new Pool(this.base.origin, { connections, connect });
  }

  /** Drops pooled connections. The client must not be used afterwards. */
  close(): void {
    this.closed = true;
    for (const p of [this.pool, this.freshPool]) void p.destroy().catch(() => undefined);
  }

  // ---------------------------------------------------------------------------------------------
  // authentication

  /** Logs in now (otherwise the first call does). Throws SupersetAuthError on refused credentials. */
  async login(): Promise<void> {
    this.auth = undefined;
    this.csrf = undefined;
    await this.ensureAuth(true);
  }

  private async ensureAuth(force = false): Promise<AuthState> {
    if (!force && this.auth && (this.auth.expiresAt === 0 || this.auth.expiresAt - Date.now() > 30_000)) return this.auth;
    this.authFlight ??= this.authenticate(force).finally(() => (this.authFlight = undefined));
    return this.authFlight;
  }

  private async authenticate(force: boolean): Promise<AuthState> {
    const previous = this.auth;
    if (!force && previous?.refreshToken) {
      try {
        const res = await this.exchange({ method: 'POST', path: '/api/v1/security/refresh', anonymous: true }, previous.refreshToken);
        if (res.status === 200) {
          const body = this.parseJson<{ access_token?: string }>(res, { method: 'POST', path: '/api/v1/security/refresh' });
          if (body.access_token) {
            this.auth = { ...previous, accessToken: body.access_token, expiresAt: jwtExpiry(body.access_token) };
            return this.auth;
          }
        }
      } catch (err) {
        if (err instanceof SupersetUnavailableError) throw err;
      }
    }
    this.auth = undefined;
    this.csrf = undefined;
    this.cookies.clear();
    const ctx = { method: 'POST', path: '/api/v1/security/login' };
    const res = await this.exchange({
      method: 'POST',
      path: '/api/v1/security/login',
      anonymous: true,
      json: { username: this.conn.username, password: this.conn.password, provider: this.conn.provider ?? 'db', refresh: true },
    });
    if (res.status >= 500) throw this.unavailableFromStatus(res, ctx);
    if (res.status !== 200) {
      const { message } = normaliseErrorBody(tryJson(res.body), `HTTP ${res.status}`);
      throw new SupersetAuthError({ ...ctx, upstreamStatus: res.status }, message, undefined);
    }
    const body = this.parseJson<{ access_token?: string; refresh_token?: string }>(res, ctx);
    if (!body.access_token) throw new SupersetUnavailableError('bad_response', 'Superset login answered without an access token', ctx);
    this.auth = { accessToken: body.access_token, refreshToken: body.refresh_token, expiresAt: jwtExpiry(body.access_token) };
    this.logger?.debug({ superset: this.base.host }, 'superset login');
    return this.auth;
  }

  private async ensureCsrf(): Promise<string> {
    if (this.csrf) return this.csrf;
    this.csrfFlight ??= (async () => {
      const body = await this.getJson<{ result?: string }>('/api/v1/security/csrf_token/');
      if (!body.result) {
        throw new SupersetUnavailableError('bad_response', 'Superset answered the CSRF token request without a token', {
          method: 'GET',
          path: '/api/v1/security/csrf_token/',
        });
      }
      this.csrf = body.result;
      return body.result;
    })().finally(() => (this.csrfFlight = undefined));
    return this.csrfFlight;
  }

  // ---------------------------------------------------------------------------------------------
  // the request pipeline

  private url(path: string, q?: unknown, query?: Record<string, string | number | boolean>): URL {
    if (!/^\/(api\/v1\/[A-Za-z0-9_\-./]*|static\/version_info\.json|health)$/.test(path) || /(^|\/)\.\.?(\/|$)|\/\//.test(path)) {
      throw new TypeError(`not a Superset API path: ${path}`);
    }
    const url = new URL(this.base.pathname.replace(/\/+$/, '') + path, this.base.origin);
    if (url.origin !== this.base.origin) throw new TypeError('request would leave the environment host');
    if (q !== undefined) url.searchParams.set('q', encodeRison(q));
    for (const [k, v] of Object.entries(query ?? {})) url.searchParams.set(k, String(v));
    return url;
  }

  /** One HTTP exchange; wire failures become SupersetUnavailableError. */
  private async exchange(spec: CallSpec, bearer?: string): Promise<WireResponse> {
    if (this.closed) throw new Error('SupersetClient is closed');
    const url = this.url(spec.path, spec.q, spec.query);
    const mutating = MUTATING.has(spec.method);
    const headers: Record<string, string> = {
      accept: spec.accept ?? 'application/json',
      // No compression asked for: the size cap then bounds what is held in memory, byte for byte.
      'accept-encoding': 'identity',
      'user-agent': 'switchyard',
    };
    if (bearer) headers.authorization = `Bearer ${bearer}`;
    if (this.cookies.size) headers.cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    let body: string | FormData | undefined;
    if (spec.form) {
      body = spec.form; // undici writes the multipart body and its content-type with the boundary
    } else if (spec.json !== undefined) {
      body = JSON.stringify(spec.json);
      headers['content-type'] = 'application/json';
    }
    if (mutating) {
      headers.referer = `${this.baseUrl}/`;
      if (this.csrf && !spec.anonymous) headers['x-csrftoken'] = this.csrf;
    }
    const maxBytes = spec.maxBytes ?? this.maxJsonBytes;
    const started = Date.now();
    const ctx = { method: spec.method, path: spec.path };
    try {
      const answer = await (mutating ? this.freshPool : this.pool).request({
        method: spec.method,
        path: url.pathname + url.search,
        headers,
        body,
        headersTimeout: this.timeoutMs,
        bodyTimeout: this.timeoutMs,
        // The whole exchange, not only each wait between bytes, has a deadline.
        signal: AbortSignal.timeout(this.timeoutMs),
        reset: mutating,
      });
      const res: WireResponse = { status: answer.statusCode, headers: answer.headers, body: await readCapped(answer, maxBytes) };
      this.keepCookies(res);
      this.logger?.debug(
        { superset: this.base.host, method: spec.method, path: spec.path, status: res.status, ms: Date.now() - started },
        'superset call',
      );
      return res;
    } catch (err) {
      // The egress policy refused the host: not a failure of Superset's, and nothing to retry.
      const refused = egressRefusal(err);
      if (refused) throw refused;
      const reason = wireFailure(err);
      if (!reason) throw err;
      const what =
        reason === 'timeout'
          ? `Superset at ${this.base.host} did not answer ${spec.method} ${spec.path} within ${this.timeoutMs / 1000} s`
          : reason === 'too_large'
            ? `Superset at ${this.base.host} answered ${spec.method} ${spec.path} with more than ${maxBytes} bytes`
            : `Superset at ${this.base.host} could not be reached for ${spec.method} ${spec.path}: ${describeNetworkError(err)}`;
      throw new SupersetUnavailableError(reason, what, ctx, err);
    }
  }

  private keepCookies(res: WireResponse): void {
    const raw = res.headers['set-cookie'];
    for (const c of Array.isArray(raw) ? raw : raw ? [raw] : []) {
      const pair = c.split(';', 1)[0];
      const eq = pair.indexOf('=');
      if (eq <= 0) continue;
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      if (/;\s*max-age=0/i.test(c) || /;\s*expires=Thu, 01 Jan 1970/i.test(c)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  /** Authenticated exchange with one transparent re-login on 401 and one CSRF renewal. */
  private async authed(spec: CallSpec): Promise<WireResponse> {
    if (spec.anonymous) return this.exchange(spec);
    const mutating = MUTATING.has(spec.method);
    let reauthed = false;
    let recsrfed = false;
    for (;;) {
      const auth = await this.ensureAuth();
      if (mutating) await this.ensureCsrf();
      const res = await this.exchange(spec, auth.accessToken);
      if ((res.status === 401 || (res.status === 422 && isJwtError(res))) && !reauthed) {
        reauthed = true;
        if (this.auth === auth) {
          // The token was refused before its expiry (revoked, server restarted with another key): log in anew.
          this.auth = { ...auth, expiresAt: 1 };
          await this.ensureAuth(true);
        }
        continue;
      }
      if (mutating && !recsrfed && isCsrfFailure(res)) {
        recsrfed = true;
        this.csrf = undefined;
        this.cookies.clear();
        await this.ensureAuth(true);
        continue;
      }
      return res;
    }
  }

  /** The retry loop (GETs only) around one call and the parsing of its answer. */
  private async call<T>(spec: CallSpec, read: (res: WireResponse) => T): Promise<T> {
    const attempts = spec.method === 'GET' ? Math.max(1, this.retry.attempts) : 1;
    for (let attempt = 1; ; attempt++) {
      try {
        const res = await this.authed(spec);
        if (!(spec.pass ?? []).includes(res.status)) this.raiseForStatus(res, spec);
        return read(res);
      } catch (err) {
        const failure = classifySupersetFailure(err);
        const retry = attempt < attempts && failure?.retryable === true && (failure.reason !== 'timeout' || this.retry.onTimeout);
        if (!retry) throw err;
        const delay = Math.min(this.retry.maxDelayMs, this.retry.baseDelayMs * 2 ** (attempt - 1)) * (0.75 + Math.random() / 2);
        this.logger?.warn(
          { superset: this.base.host, path: spec.path, attempt, reason: failure.reason, delay_ms: Math.round(delay) },
          'superset call failed, retrying',
        );
        await sleep(delay);
      }
    }
  }

  private raiseForStatus(res: WireResponse, spec: CallSpec): void {
    const ctx: UpstreamContext = { method: spec.method, path: spec.path, upstreamStatus: res.status };
    if (res.status >= 200 && res.status < 300) return;
    if (res.status >= 500 || res.status === 0) throw this.unavailableFromStatus(res, ctx);
    if (res.status >= 300 && res.status < 400) {
      const location = String(res.headers.location ?? '');
      const message = /\/login/.test(location)
        ? 'redirected to the login page: the session or CSRF token was refused'
        : `unexpected redirect (${res.status})`;
      if (/\/login/.test(location)) throw new SupersetAuthError({ ...ctx, upstreamStatus: res.status }, message, undefined);
      throw new SupersetApiError({ ...ctx, upstreamStatus: res.status }, message, undefined);
    }
    const body = tryJson(res.body);
    const { message, errorType } = normaliseErrorBody(body, `HTTP ${res.status}`);
    const full = { ...ctx, upstreamStatus: res.status };
    if (res.status === 401 || (res.status === 422 && isJwtError(res))) throw new SupersetAuthError(full, message, body);
    if (res.status === 403) throw new SupersetForbiddenError(full, message, body);
    if (res.status === 404) throw new SupersetNotFoundError(full, message, body);
    throw new SupersetApiError(full, message, body, { errorType });
  }

  private unavailableFromStatus(res: WireResponse, ctx: UpstreamContext): SupersetUnavailableError {
    const { message } = normaliseErrorBody(tryJson(res.body), 'no usable error message');
    return new SupersetUnavailableError(
      'server_error',
      `Superset at ${this.base.host} failed on ${ctx.method} ${ctx.path} with ${res.status} (${message})`,
      { ...ctx, upstreamStatus: res.status, upstreamMessage: message },
    );
  }

  private parseJson<T>(res: WireResponse, ctx: UpstreamContext): T {
    const parsed = tryJson(res.body);
    if (parsed === undefined || typeof parsed !== 'object' || parsed === null) {
      const type = String(res.headers['content-type'] ?? 'no content type');
      throw new SupersetUnavailableError(
        'bad_response',
        `Superset at ${this.base.host} answered ${ctx.method} ${ctx.path} with ${res.status} and a body that is not a JSON object (${type}, ${res.body.length} bytes)`,
        { ...ctx, upstreamStatus: res.status },
      );
    }
    return parsed as T;
  }

  // ---------------------------------------------------------------------------------------------
  // generic JSON calls (fixed paths only; see url())

  /**
   * One JSON call to a fixed API path (see url()): rison `q`, query parameters and a JSON body;
   * GETs are retried as any other read. The typed calls below are built on it.
   */
  request<T>(
    method: Method,
    path: string,
    opts: { q?: unknown; query?: Record<string, string | number | boolean>; json?: unknown } = {},
  ): Promise<T> {
    const spec: CallSpec = { method, path, q: opts.q, query: opts.query, json: opts.json };
    return this.call(spec, (res) => this.parseJson<T>(res, spec));
  }

  private getJson<T>(path: string, opts: { q?: unknown; query?: Record<string, string | number | boolean> } = {}): Promise<T> {
    return this.request<T>('GET', path, opts);
  }

  // ---------------------------------------------------------------------------------------------
  // instance

  /**
   * The Superset release, from `/static/version_info.json` (the API has no version endpoint);
   * null when the instance does not serve that file.
   */
  async version(): Promise<string | null> {
    const spec: CallSpec = { method: 'GET', path: '/static/version_info.json', anonymous: true, pass: [404, 403, 401] };
    return this.call(spec, (res) => {
      if (res.status !== 200) return null;
      const body = tryJson(res.body) as { version?: unknown } | undefined;
      return typeof body?.version === 'string' && body.version ? body.version : null;
    });
  }

  /** Permissions the service account holds on one resource (`can_read`, `can_write`, `can_export`, ...). */
  private async resourcePermissions(resource: Resource): Promise<string[]> {
    const body = await this.getJson<{ permissions?: string[] }>(`/api/v1/${resource}/_info`, { q: { keys: ['permissions'] } });
    return body.permissions ?? [];
  }

  /** Checks the permissions Switchyard needs: reading everything, exporting and importing dashboards. */
  async probePermissions(): Promise<PermissionProbe> {
    const needed: Record<Resource, string[]> = {
      dashboard: ['can_read', 'can_write', 'can_export'],
      chart: ['can_read'],
      dataset: ['can_read'],
      database: ['can_read'],
    };
    const entries = Object.entries(needed) as Array<[Resource, string[]]>;
    const held = await Promise.all(
      entries.map(([r]) =>
        this.resourcePermissions(r).catch((err: unknown) => {
          if (err instanceof SupersetForbiddenError || err instanceof SupersetNotFoundError) return [] as string[];
          throw err;
        }),
      ),
    );
    const label = (r: Resource) => r[0].toUpperCase() + r.slice(1);
    const checked: string[] = [];
    const missing: string[] = [];
    entries.forEach(([r, perms], i) => {
      for (const p of perms) {
        const name = `${p} on ${label(r)}`;
        checked.push(name);
        if (!held[i].includes(p)) missing.push(name);
      }
    });
    return { checked, missing };
  }

  /**
   * What this instance can do (list filters and columns, security API, thumbnails), probed once
   * and kept with the release it was probed on. After `capabilitiesRecheckMs` the release is read
   * again (one anonymous call) and everything is probed anew only when it changed.
   */
  async capabilities(): Promise<SupersetCapabilities> {
    if (this.caps && Date.now() - this.caps.checkedAt < this.capabilitiesRecheckMs) return this.caps.value;
    this.capsFlight ??= (async () => {
      const known = this.caps;
      if (known && (await this.version()) === known.value.version) {
        known.checkedAt = Date.now();
        return known.value;
      }
      const value = await this.probeCapabilities();
      this.caps = { value, checkedAt: Date.now() };
      return value;
    })().finally(() => (this.capsFlight = undefined));
    return this.capsFlight;
  }

  /** Drops the cached capabilities (an answer showed they are out of date). */
  forgetCapabilities(): void {
    this.caps = undefined;
  }

  /** Asks the instance now, without the cache. */
  async probeCapabilities(): Promise<SupersetCapabilities> {
    const resources = ['dashboard', 'chart', 'dataset'] as const;
    const [version, lists, securityApi, thumbnails] = await Promise.all([
      this.version(),
      Promise.all(resources.map((r) => this.probeList(r))),
      this.securityUsers(undefined, 1).then((u) => u !== undefined),
      this.probeThumbnails(),
    ]);
    const datasetColumns = lists[2].columns;
    return {
      version,
      lists: { dashboard: lists[0].caps, chart: lists[1].caps, dataset: lists[2].caps },
      dataset_database_uuid: datasetColumns ? datasetColumns.includes('database.uuid') : null,
      security_api: securityApi,
      thumbnails,
      probed_at: new Date().toISOString(),
    };
  }

  /** `_info?keys=filters` for the filterable columns, and one list row's `list_columns` for what a list can return. */
  private async probeList(resource: 'dashboard' | 'chart' | 'dataset'): Promise<{ caps: ListCapabilities; columns: string[] | null }> {
    const path = `/api/v1/${resource}/`;
    const [info, listed] = await Promise.all([
      this.getJson<{ filters?: Record<string, unknown> }>(`/api/v1/${resource}/_info`, { q: { keys: ['filters'] } }).catch(refusalAsNull),
      this.serialList(path, () =>
        this.getJson<{ list_columns?: unknown }>(path, { q: { page: 0, page_size: 1, keys: ['list_columns'] } }),
      ).catch(refusalAsNull),
    ]);
    const filters = info?.filters && typeof info.filters === 'object' ? Object.keys(info.filters).sort() : null;
    const columns = Array.isArray(listed?.list_columns) ? listed.list_columns.filter((c): c is string => typeof c === 'string') : null;
    return { caps: { filters, uuid_column: columns ? columns.includes('uuid') : null }, columns };
  }

  /**
   * Whether the THUMBNAILS flag is on: with it off Superset answers any thumbnail 404 before
   * looking at the dashboard; with it on, a wrong digest is redirected (5.0+) or the image queued
   * (4.1). Needs one dashboard to ask about; null when there is none.
   */
  private async probeThumbnails(): Promise<boolean | null> {
    const first = (await this.list<{ id: number }>('dashboard', { columns: ['id'], pageSize: 1 }).catch(refusalAsNull))?.result[0];
    if (!first) return null;
    const spec: CallSpec = {
      method: 'GET',
      path: `/api/v1/dashboard/${seg(first.id)}/thumbnail/probe/`,
      accept: 'image/*, application/json',
      pass: [200, 202, 301, 302, 303, 307, 308, 404, 500],
      maxBytes: this.maxBinaryBytes,
    };
    const res = await this.call(spec, (r) => r);
    return res.status !== 404;
  }

  // ---------------------------------------------------------------------------------------------
  // lists

  /**
   * Calls to one FAB list endpoint, one at a time. Flask-AppBuilder's `get_list` keeps the parsed
   * filters on the API object shared by the worker's threads (`self._filters.clear_filters()`
   * then `rest_add_filters`), so two concurrent list calls to the same endpoint of one Superset
   * worker can run with each other's filters: measured on 6.1.0 (a count answered for the wrong
   * filter). Everything else may run in parallel.
   */
  private serialList<T>(endpoint: string, work: () => Promise<T>): Promise<T> {
    const previous = this.listQueues.get(endpoint) ?? Promise.resolve();
    const run = previous.then(work, work);
    const tail = run.then(
      () => undefined,
      () => undefined,
    );
    this.listQueues.set(endpoint, tail);
    void tail.then(() => {
      if (this.listQueues.get(endpoint) === tail) this.listQueues.delete(endpoint);
    });
    return run;
  }

  /** One page of a list endpoint. `page` is 0-based; `pageSize` is clamped to 1..100. */
  list<T>(resource: Resource, query: ListQuery = {}): Promise<ListResponse<T>> {
    const path = `/api/v1/${resource}/`;
    return this.serialList(path, () => this.getJson<ListResponse<T>>(path, { q: listQ(query) })).then((body) => {
      if (!Array.isArray(body.result) || typeof body.count !== 'number') {
        throw new SupersetUnavailableError('bad_response', `Superset's ${resource} list answered without count/result`, {
          method: 'GET',
          path: `/api/v1/${resource}/`,
        });
      }
      return body;
    });
  }

  /** Every row of a list endpoint: the first page, then the rest a few pages at a time; deduplicated by id. */
  async listAll<T extends { id: number }>(
    resource: Resource,
    query: Omit<ListQuery, 'page' | 'pageSize'> = {},
    maxItems = 1_000_000,
  ): Promise<T[]> {
    return (await this.listAllCounted<T>(resource, query, maxItems)).rows;
  }

  /**
   * listAll with the count Superset reported. Fewer distinct rows than the count means rows moved
   * between pages while they were read (a change, or ties in the order column): read again in
   * another order to complete the set.
   */
  async listAllCounted<T extends { id: number }>(
    resource: Resource,
    query: Omit<ListQuery, 'page' | 'pageSize'> = {},
    maxItems = 1_000_000,
  ): Promise<{ rows: T[]; count: number }> {
    const first = await this.list<T>(resource, { ...query, page: 0, pageSize: MAX_PAGE_SIZE });
    const total = Math.min(first.count, maxItems);
    const pages = Math.ceil(total / MAX_PAGE_SIZE);
    const results: T[][] = [first.result];
    let next = 1;
    const worker = async () => {
      while (next < pages) {
        const p = next++;
        results[p] = (await this.list<T>(resource, { ...query, page: p, pageSize: MAX_PAGE_SIZE })).result;
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.listConcurrency, Math.max(0, pages - 1)) }, worker));
    const seen = new Set<number>();
    const out: T[] = [];
    for (const page of results) {
      for (const row of page ?? []) {
        if (seen.has(row.id)) continue;
        seen.add(row.id);
        out.push(row);
        if (out.length >= maxItems) return { rows: out, count: first.count };
      }
    }
    return { rows: out, count: first.count };
  }

  // ---------------------------------------------------------------------------------------------
  // dashboards

  listDashboards(query: ListQuery = {}): Promise<ListResponse<DashboardListItem>> {
    return this.list<DashboardListItem>('dashboard', { columns: DASHBOARD_LIST_COLUMNS, ...query });
  }

  /** By id, slug or uuid. SupersetNotFoundError when it does not exist (or the account cannot see it). */
  async getDashboard(idOrSlug: number | string): Promise<DashboardDetail> {
    return (await this.getJson<{ result: DashboardDetail }>(`/api/v1/dashboard/${seg(idOrSlug)}`)).result;
  }

  async getDashboardCharts(idOrSlug: number | string): Promise<DashboardChart[]> {
    return (await this.getJson<{ result: DashboardChart[] }>(`/api/v1/dashboard/${seg(idOrSlug)}/charts`)).result ?? [];
  }

  /**
   * `GET /api/v1/dashboard/permalink/{key}`: the dashboard a permalink names and its stored state
   * (`dataMask`, `activeTabs`, `anchor`, `urlParams`). An unknown key is a 404; a key Superset
   * cannot decode is its 500 "Fatal error".
   */
  async getDashboardPermalink(key: string): Promise<{ dashboardId: string; state: Record<string, unknown> }> {
    const body = await this.getJson<{ dashboardId?: unknown; state?: unknown }>(`/api/v1/dashboard/permalink/${seg(key)}`);
    const state = body.state && typeof body.state === 'object' && !Array.isArray(body.state) ? (body.state as Record<string, unknown>) : {};
    return { dashboardId: String(body.dashboardId ?? ''), state };
  }

  async getDashboardDatasets(idOrSlug: number | string): Promise<DashboardDataset[]> {
    return (await this.getJson<{ result: DashboardDataset[] }>(`/api/v1/dashboard/${seg(idOrSlug)}/datasets`)).result ?? [];
  }

  /** Deletes a dashboard (its charts and datasets stay, as in Superset's own UI). */
  async deleteDashboard(id: number): Promise<void> {
    await this.request('DELETE', `/api/v1/dashboard/${seg(id)}`);
  }

  /**
   * The dashboard's thumbnail. Asks with the given digest (or a placeholder) and follows
   * Superset's redirect to the current digest once, on the same origin only.
   */
  async dashboardThumbnail(id: number, digest = 'current'): Promise<Thumbnail> {
    let path = `/api/v1/dashboard/${seg(id)}/thumbnail/${seg(digest)}/`;
    for (let hop = 0; hop < 2; hop++) {
      const spec: CallSpec = {
        method: 'GET',
        path,
        accept: 'image/*, application/json',
        pass: [202, 301, 302, 303, 307, 308, 404],
        maxBytes: this.maxBinaryBytes,
      };
      const res = await this.call(spec, (r) => r);
      if ([301, 302, 303, 307, 308].includes(res.status)) {
        const next = this.sameOriginPath(
          String(res.headers.location ?? ''),
          new RegExp(`^/api/v1/dashboard/${id}/thumbnail/[A-Za-z0-9_-]+/$`),
        );
        if (!next || hop > 0) throw new SupersetApiError({ ...spec, upstreamStatus: res.status }, 'thumbnail redirect refused', undefined);
        path = next;
        continue;
      }
      if (res.status === 202) {
        const retry = Number(res.headers['retry-after']);
        return { status: 'computing', retryAfterSeconds: Number.isFinite(retry) && retry > 0 ? retry : 5 };
      }
      if (res.status === 404) {
        const { message } = normaliseErrorBody(tryJson(res.body), 'Not found');
        return { status: 'missing', detail: message };
      }
      const contentType = String(res.headers['content-type'] ?? '')
        .split(';')[0]
        .trim()
        .toLowerCase();
      // Only raster images, recognised from their bytes (an SVG or HTML "image" could carry script).
      const raster = rasterTypeOf(res.body);
      if (!raster || !(RASTER_TYPES as readonly string[]).includes(contentType.replace('image/jpg', 'image/jpeg'))) {
        throw new SupersetUnavailableError(
          'bad_response',
          `Superset answered the thumbnail of dashboard ${id} with ${contentType || 'no content type'}${raster ? '' : ' whose bytes are not a PNG, JPEG, GIF or WebP image'}; only raster images are passed on`,
          {
            method: 'GET',
            path,
            upstreamStatus: res.status,
          },
        );
      }
      return { status: 'ready', contentType: raster, bytes: res.body };
    }
    throw new Error('unreachable');
  }

  /** A Location header reduced to a path on our base, if it stays on the environment's origin and matches `allowed`. */
  private sameOriginPath(location: string, allowed: RegExp): string | undefined {
    let url: URL;
    try {
      url = new URL(location, this.base);
    } catch {
      return undefined;
    }
    if (url.origin !== this.base.origin || url.search || url.hash) return undefined;
    const prefix = this.base.pathname.replace(/\/$/, '');
    if (!url.pathname.startsWith(prefix + '/')) return undefined;
    const path = url.pathname.slice(prefix.length);
    return allowed.test(path) ? path : undefined;
  }

  /** `GET /api/v1/dashboard/export/?q=!(ids)`: the ZIP bundle of those dashboards and everything they use. */
  exportDashboards(ids: number[]): Promise<Buffer> {
    return this.exportBundle('dashboard', ids);
  }

  /** `GET /api/v1/<resource>/export/?q=!(ids)`: a ZIP bundle of those objects and what they use. */
  async exportBundle(resource: Resource, ids: number[]): Promise<Buffer> {
    if (!ids.length) throw new TypeError('export needs at least one id');
    ids.forEach((id) => seg(id));
    const spec: CallSpec = {
      method: 'GET',
      path: `/api/v1/${resource}/export/`,
      q: ids,
      accept: 'application/zip, application/json',
      maxBytes: this.maxBinaryBytes,
    };
    return this.call(spec, (res) => {
      if (res.body.length < 4 || res.body.readUInt32LE(0) !== 0x04034b50) {
        throw new SupersetUnavailableError(
          'bad_response',
          `Superset's ${resource} export answered ${res.headers['content-type'] ?? 'no content type'}, not a ZIP`,
          {
            method: 'GET',
            path: spec.path,
            upstreamStatus: res.status,
          },
        );
      }
      return res.body;
    });
  }

  /**
   * `POST /api/v1/<resource>/import/`, multipart with the bundle in the field `formData` and
   * `overwrite` as the string "true" or "false". Only dashboards honour `overwrite` for the
   * objects they pull in; chart, dataset and database imports overwrite their own kind. A refused
   * bundle (400/422) raises SupersetImportError whose `files` maps each bundle path to Superset's
   * messages; a 500 ("Import dashboard failed for an unknown reason") is a SupersetUnavailableError
   * with reason `server_error`, which classifySupersetFailure does not call retryable.
   */
  async importBundle(resource: Resource, zip: Buffer | Uint8Array, opts: ImportOptions = {}): Promise<void> {
    const form = new FormData();
    form.set('formData', new Blob([new Uint8Array(zip)], { type: 'application/zip' }), `${resource}s.zip`);
    form.set('overwrite', opts.overwrite ? 'true' : 'false');
    const spec: CallSpec = { method: 'POST', path: `/api/v1/${resource}/import/`, form, pass: [400, 422] };
    await this.call(spec, (res) => {
      if (res.status === 400 || res.status === 422) {
        const body = tryJson(res.body);
        const { message, extra } = normaliseErrorBody(body, `HTTP ${res.status}`);
        throw new SupersetImportError({ method: 'POST', path: spec.path, upstreamStatus: res.status }, message, body, ownRecord(extra));
      }
      return undefined;
    });
  }

  // ---------------------------------------------------------------------------------------------
  // charts

  listCharts(query: ListQuery = {}): Promise<ListResponse<ChartListItem>> {
    return this.list<ChartListItem>('chart', query);
  }

  /**
   * `POST /api/v1/chart/data` with a query context (CSRF-exempt in Superset). Charts saved through
   * the API often have no saved query context, so callers build one from the chart's params.
   */
  chartData(queryContext: ChartDataQueryContext): Promise<ChartDataResponse> {
    return this.request<ChartDataResponse>('POST', '/api/v1/chart/data', {
      json: { result_format: 'json', result_type: 'full', ...queryContext },
    });
  }

  /** `GET /api/v1/chart/{id}`: the chart with its datasource (`datasource_id`, `datasource_type`). */
  async getChart(id: number): Promise<{ id: number; slice_name?: string | null; datasource_id?: number | null; datasource_type?: string | null; [key: string]: unknown }> {
    return (await this.getJson<{ result: { id: number } }>(`/api/v1/chart/${seg(id)}`)).result;
  }

  /** `POST /api/v1/saved_query/`: saves a query in SQL Lab's saved queries; answers its id. */
  async createSavedQuery(q: { databaseId: number; label: string; sql: string; schema?: string | null; catalog?: string | null; description?: string | null; templateParameters?: string | null }): Promise<{ id: number }> {
    const body = await this.request<{ id?: number }>('POST', '/api/v1/saved_query/', {
      json: {
        db_id: q.databaseId,
        label: q.label,
        sql: q.sql,
        ...(q.schema ? { schema: q.schema } : {}),
        ...(q.catalog ? { catalog: q.catalog } : {}),
        ...(q.description ? { description: q.description } : {}),
        ...(q.templateParameters ? { template_parameters: q.templateParameters } : {}),
      },
    });
    if (typeof body.id !== 'number') throw new SupersetUnavailableError('bad_response', 'Superset saved the query without answering its id', { method: 'POST', path: '/api/v1/saved_query/' });
    return { id: body.id };
  }

  // ---------------------------------------------------------------------------------------------
  // datasets and databases

  listDatasets(query: ListQuery = {}): Promise<ListResponse<DatasetListItem>> {
    return this.list<DatasetListItem>('dataset', {
      columns: DATASET_LIST_COLUMNS,
      orderColumn: 'table_name',
      orderDirection: 'asc',
      ...query,
    });
  }

  /** Every database connection (the list never exposes URIs). */
  listDatabases(): Promise<DatabaseInfo[]> {
    return this.listAll<DatabaseInfo>('database', { columns: DATABASE_LIST_COLUMNS, orderColumn: 'database_name', orderDirection: 'asc' });
  }

  /** `GET /api/v1/dataset/{id}`: the dataset with every column and metric, as Superset keeps them. */
  async getDataset(id: number): Promise<DatasetDetail> {
    const path = `/api/v1/dataset/${seg(id)}`;
    const body = await this.getJson<{ result?: DatasetDetail }>(path);
    const d = body.result;
    if (!d || typeof d !== 'object' || !Array.isArray(d.columns) || !Array.isArray(d.metrics)) {
      throw new SupersetUnavailableError('bad_response', `Superset answered ${path} without the dataset's columns and metrics`, {
        method: 'GET',
        path,
        upstreamStatus: 200,
      });
    }
    return d;
  }

  /** The charts and dashboards that use a dataset. */
  async datasetRelatedObjects(id: number): Promise<DatasetRelatedObjects> {
    const body = await this.getJson<{ charts?: { result?: DatasetRelatedObjects['charts'] }; dashboards?: { result?: DatasetRelatedObjects['dashboards'] } }>(
      `/api/v1/dataset/${seg(id)}/related_objects`,
    );
    return { charts: body.charts?.result ?? [], dashboards: body.dashboards?.result ?? [] };
  }

  /**
   * `PUT /api/v1/dataset/{id}`. Superset replaces the dataset's column and metric lists with the
   * ones it is sent (a column left out is deleted), so callers send the full lists with their ids
   * (see dataset-edit.ts). Superset's answers carry read-only keys its update refuses as "Unknown
   * field." (timestamps, `type_generic`, and whatever a release adds): those keys are dropped and
   * the update sent once more; the answer names them. Any other refusal is thrown.
   */
  async updateDataset(id: number, body: DatasetUpdate): Promise<{ dropped: string[] }> {
    const path = `/api/v1/dataset/${seg(id)}`;
    try {
      await this.request('PUT', path, { json: body });
      return { dropped: [] };
    } catch (err) {
      const unknown = err instanceof SupersetApiError && err.upstreamStatus === 422 ? unknownFieldsOf(err.body) : undefined;
      if (!unknown) throw err;
      const retry = withoutKeys(body, unknown);
      await this.request('PUT', path, { json: retry });
      return { dropped: [...unknown.top, ...unknown.columns.map((k) => `columns[].${k}`), ...unknown.metrics.map((k) => `metrics[].${k}`)] };
    }
  }

  /**
   * Runs one query through SQL Lab (`POST /api/v1/sqllab/execute/`, synchronously) as the
   * service account, with its permissions and the database's own rules (DML only where the
   * database allows it). A query the database refuses (syntax, no such table) is a
   * SupersetApiError with the database's message: Superset answers those with 500 and an
   * `errors[]` body, which is no outage.
   */
  async executeSql(query: SqlLabQuery): Promise<SqlLabResult> {
    const spec: CallSpec = {
      method: 'POST',
      path: '/api/v1/sqllab/execute/',
      json: {
        database_id: query.databaseId,
        sql: query.sql,
        ...(query.schema ? { schema: query.schema } : {}),
        ...(query.catalog ? { catalog: query.catalog } : {}),
        runAsync: false,
        queryLimit: query.limit ?? 10_000,
        // At most 11 characters, unique per query.
        client_id: randomBytes(8).toString('base64url').slice(0, 11),
      },
      pass: [202, 500],
    };
    return this.call(spec, (res) => {
      const body = tryJson(res.body);
      const ctx = { method: spec.method, path: spec.path, upstreamStatus: res.status };
      if (res.status === 500) {
        const { message, errorType } = normaliseErrorBody(body, 'no usable error message');
        if (errorType) throw new SupersetApiError(ctx, message, body, { errorType, detail: `the query failed in the database: ${message}` });
        throw this.unavailableFromStatus(res, ctx);
      }
      if (res.status === 202) {
        throw new SupersetApiError(ctx, 'the database runs SQL Lab queries asynchronously', body, {
          detail: 'Superset ran the query asynchronously (the database has "Asynchronous query execution" on); Switchyard needs its answer synchronously',
        });
      }
      const r = this.parseJson<{ data?: unknown; columns?: Array<{ name?: string; column_name?: string }>; query?: { limitingFactor?: string } }>(res, ctx);
      if (!Array.isArray(r.data)) throw new SupersetUnavailableError('bad_response', 'SQL Lab answered without rows', ctx);
      return {
        columns: (r.columns ?? []).map((c) => String(c.name ?? c.column_name ?? '')),
        rows: r.data.filter((x): x is Record<string, unknown> => !!x && typeof x === 'object' && !Array.isArray(x)),
        limited: !!r.query?.limitingFactor && r.query.limitingFactor !== 'NOT_LIMITED',
      };
    });
  }

  // ---------------------------------------------------------------------------------------------
  // row-level security (the same API on 4.1, 5.0, 6.0 and 6.1; exports never carry these rules)

  /**
   * Every page of a list-shaped answer (`{ count, result }`), 100 rows a page, deduplicated by
   * `key`. Stops at an empty page, so a count that shrinks meanwhile cannot loop.
   */
  private async pagedAll<T>(path: string, q: Record<string, unknown>, key: (row: T) => number): Promise<T[]> {
    const out = new Map<number, T>();
    for (let page = 0; ; page++) {
      const body = await this.serialList(path, () => this.getJson<ListResponse<T>>(path, { q: { ...q, page, page_size: MAX_PAGE_SIZE } }));
      if (!Array.isArray(body.result) || typeof body.count !== 'number') {
        throw new SupersetUnavailableError('bad_response', `Superset answered ${path} without count/result`, { method: 'GET', path });
      }
      for (const row of body.result) out.set(key(row), row);
      if (!body.result.length || (page + 1) * MAX_PAGE_SIZE >= body.count) return [...out.values()];
    }
  }

  /** Every row-level-security rule, with its tables (dataset id, table name) and roles (id, name); no descriptions. */
  async listRlsRules(): Promise<RlsRule[]> {
    // Rule names are unique in Superset, so ordering by name pages stably.
    const rows = await this.pagedAll<Partial<RlsRule> & { id: number }>(
      '/api/v1/rowlevelsecurity/',
      { order_column: 'name', order_direction: 'asc' },
      (r) => r.id,
    );
    return rows.map(rlsRuleOf);
  }

  /** One rule with its description and its tables' schemas. */
  async getRlsRule(id: number): Promise<RlsRule> {
    const body = await this.getJson<{ id?: number; result?: Partial<RlsRule> }>(`/api/v1/rowlevelsecurity/${seg(id)}`);
    return rlsRuleOf({ ...body.result, id });
  }

  /** Creates a rule; its id. Superset 4.1 answers 201, later releases 200. */
  async createRlsRule(rule: RlsRuleWrite): Promise<number> {
    const body = await this.request<{ id?: unknown }>('POST', '/api/v1/rowlevelsecurity/', { json: rule });
    if (typeof body.id !== 'number') {
      throw new SupersetUnavailableError('bad_response', 'Superset created a row-level-security rule without saying its id', {
        method: 'POST',
        path: '/api/v1/rowlevelsecurity/',
      });
    }
    return body.id;
  }

  /** Replaces a rule's fields (tables and roles are set to exactly these ids). */
  async updateRlsRule(id: number, rule: RlsRuleWrite): Promise<void> {
    await this.request('PUT', `/api/v1/rowlevelsecurity/${seg(id)}`, { json: rule });
  }

  async deleteRlsRule(id: number): Promise<void> {
    await this.request('DELETE', `/api/v1/rowlevelsecurity/${seg(id)}`);
  }

  /**
   * The roles a rule may name, from the rule API's own related-field list: it answers on every
   * release whether or not the security API (`FAB_ADD_SECURITY_API`) is on.
   */
  async listRlsRoles(): Promise<UpstreamRole[]> {
    const rows = await this.pagedAll<{ value: number; text: string }>('/api/v1/rowlevelsecurity/related/roles', {}, (r) => r.value);
    return rows.map((r) => ({ id: r.value, name: String(r.text) }));
  }

  // ---------------------------------------------------------------------------------------------
  // accounts

  /**
   * `GET /api/v1/dashboard/related/owners`: accounts whose "first last" name or username contains
   * `filter`, case-insensitively. Needs no security API.
   */
  private async relatedOwners(
    filter = '',
    pageSize = 25,
  ): Promise<Array<{ id: number; text: string; email: string | null; active: boolean | null }>> {
    const body = await this.getJson<{ result?: Array<{ value: number; text: string; extra?: { email?: string; active?: boolean } }> }>(
      '/api/v1/dashboard/related/owners',
      { q: { filter, page: 0, page_size: Math.min(MAX_PAGE_SIZE, Math.max(1, pageSize)) } },
    );
    return (body.result ?? []).map((r) => ({ id: r.value, text: r.text, email: r.extra?.email ?? null, active: r.extra?.active ?? null }));
  }

  /**
   * Users from FAB's security API (`FAB_ADD_SECURITY_API`, on in 6.x); undefined when the
   * instance does not expose it to the service account.
   */
  private async securityUsers(filters: ListQuery['filters'], pageSize = MAX_PAGE_SIZE): Promise<UpstreamAccount[] | undefined> {
    try {
      const body = await this.serialList('/api/v1/security/users/', () =>
        this.getJson<
          ListResponse<{ id: number; username: string; first_name?: string; last_name?: string; email?: string; active?: boolean }>
        >('/api/v1/security/users/', {
          q: { filters, columns: ['id', 'username', 'first_name', 'last_name', 'email', 'active'], page: 0, page_size: pageSize },
        }),
      );
      return (body.result ?? []).map((u) => ({
        id: u.id,
        username: u.username ?? null,
        display_name: displayName(u),
        first_name: u.first_name ?? null,
        last_name: u.last_name ?? null,
        email: u.email ?? null,
        active: u.active ?? null,
      }));
    } catch (err) {
      if (err instanceof SupersetForbiddenError || err instanceof SupersetNotFoundError || err instanceof SupersetAuthError)
        return undefined;
      if (err instanceof SupersetApiError && err.upstreamStatus === 405) return undefined;
      throw err;
    }
  }

  /**
   * Upstream accounts matching `search` (name, username), normalised. Usernames come from the
   * security API when readable; otherwise `username` is null.
   */
  async findAccounts(search: string, limit = 25): Promise<UpstreamAccount[]> {
    const related = await this.relatedOwners(search.trim(), limit);
    if (!related.length) return [];
    const users = await this.securityUsers([{ col: 'id', opr: 'in', value: related.map((r) => r.id) }]);
    const byId = new Map((users ?? []).map((u) => [u.id, u]));
    return related.map((r) => {
      const u = byId.get(r.id);
      return (
        u ?? {
          id: r.id,
          username: null,
          display_name: r.text,
          first_name: null,
          last_name: null,
          email: r.email,
          active: r.active,
        }
      );
    });
  }

  /**
   * The account(s) whose username equals `username` (trimmed, case-insensitive), with their
   * display names as aliases. One or two calls; used once per profile-filtered listing.
   * Without a readable security API, falls back to `related/owners` and keeps candidates whose
   * email local part, email or display name equals the username.
   */
  /**
   * The same resolution, remembered for a minute per client (so per environment): a list page with
   * the profile filter then costs no user lookup. A renamed upstream user is seen within that minute.
   */
  resolveUsernameCached(username: string): Promise<{ ids: number[]; aliases: string[]; exact: boolean }> {
    const key = username.trim().toLowerCase();
    const hit = this.usernames.get(key);
    if (hit && Date.now() - hit.at < USERNAME_TTL_MS) return hit.value;
    const value = this.resolveUsername(username);
    if (this.usernames.size >= 1000) this.usernames.clear();
    this.usernames.set(key, { at: Date.now(), value });
    value.catch(() => this.usernames.delete(key));
    return value;
  }

  async resolveUsername(username: string): Promise<{ ids: number[]; aliases: string[]; exact: boolean }> {
    const wanted = username.trim().toLowerCase();
    if (!wanted) return { ids: [], aliases: [], exact: true };
    const users = await this.securityUsers([{ col: 'username', opr: 'ct', value: username.trim() }]);
    if (users) {
      const hits = users.filter((u) => (u.username ?? '').trim().toLowerCase() === wanted);
      return { ids: hits.map((u) => u.id), aliases: unique(hits.map((u) => u.display_name).filter(Boolean)), exact: true };
    }
    const related = await this.relatedOwners(username.trim(), MAX_PAGE_SIZE);
    const hits = related.filter((r) => {
      const email = (r.email ?? '').toLowerCase();
      return email === wanted || email.split('@')[0] === wanted || r.text.trim().toLowerCase() === wanted;
    });
    return { ids: hits.map((r) => r.id), aliases: unique(hits.map((r) => r.text)), exact: false };
  }
}

// ------------------------------------------------------------------------------------------------

/** The keys a 422 MARSHMALLOW_ERROR refused as "Unknown field.", per list; undefined when it refused anything else. */
function unknownFieldsOf(body: unknown): { top: string[]; columns: string[]; metrics: string[] } | undefined {
  const { extra } = normaliseErrorBody(body, '');
  const messages = extra?.messages;
  if (!messages || typeof messages !== 'object') return undefined;
  const out = { top: new Set<string>(), columns: new Set<string>(), metrics: new Set<string>() };
  let other = false;
  const isUnknown = (v: unknown) => Array.isArray(v) && v.length > 0 && v.every((m) => m === 'Unknown field.');
  for (const [key, value] of Object.entries(messages as Record<string, unknown>)) {
    if (isUnknown(value)) {
      out.top.add(key);
    } else if ((key === 'columns' || key === 'metrics') && value && typeof value === 'object') {
      for (const item of Object.values(value as Record<string, unknown>)) {
        for (const [k, v] of Object.entries((item ?? {}) as Record<string, unknown>)) {
          if (isUnknown(v)) out[key].add(k);
          else other = true;
        }
      }
    } else {
      other = true;
    }
  }
  if (other || out.top.size + out.columns.size + out.metrics.size === 0) return undefined;
  return { top: [...out.top], columns: [...out.columns], metrics: [...out.metrics] };
}

function withoutKeys(body: DatasetUpdate, keys: { top: string[]; columns: string[]; metrics: string[] }): DatasetUpdate {
  const drop = (o: Record<string, unknown>, ks: string[]) => Object.fromEntries(Object.entries(o).filter(([k]) => !ks.includes(k)));
  const out = drop(body, keys.top) as DatasetUpdate;
  if (body.columns) out.columns = body.columns.map((c) => drop(c, keys.columns) as DatasetUpdate['columns'][number]);
  if (body.metrics) out.metrics = body.metrics.map((m) => drop(m, keys.metrics) as DatasetUpdate['metrics'][number]);
  return out;
}

function rlsRuleOf(r: Partial<RlsRule> & { id: number }): RlsRule {
  return {
    id: r.id,
    name: String(r.name ?? ''),
    filter_type: String(r.filter_type ?? ''),
    clause: String(r.clause ?? ''),
    group_key: typeof r.group_key === 'string' && r.group_key ? r.group_key : null,
    ...(r.description !== undefined ? { description: r.description ?? null } : {}),
    tables: (r.tables ?? []).map((t) => ({ id: Number(t.id), table_name: String(t.table_name ?? ''), schema: t.schema ?? null })),
    roles: (r.roles ?? []).map((x) => ({ id: Number(x.id), name: String(x.name ?? '') })),
  };
}

function listQ(query: ListQuery): Record<string, unknown> {
  return {
    filters: query.filters?.length ? query.filters : undefined,
    columns: query.columns,
    order_column: query.orderColumn,
    order_direction: query.orderDirection,
    page: query.page ?? 0,
    page_size: Math.min(MAX_PAGE_SIZE, Math.max(1, query.pageSize ?? 25)),
    keys: ['none'],
  };
}

/**
 * The own members of an object from an error body, on an object without a prototype and without
 * the keys that would reach one (`__proto__`, `constructor`, `prototype`): Superset's error bodies
 * name bundle files and fields, and those names are used as keys downstream.
 */
function ownRecord(value: Record<string, unknown> | undefined): Record<string, unknown> {
  const out = Object.create(null) as Record<string, unknown>;
  for (const [k, v] of Object.entries(value ?? {})) if (k !== 'issue_codes' && !UNSAFE_KEYS.has(k)) out[k] = v;
  return out;
}

const UNSAFE_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/** A probe the instance refuses (403, 404, 400) tells "not offered"; outages still throw. */
function refusalAsNull(err: unknown): null {
  if (err instanceof SupersetAuthError) throw err;
  if (err instanceof SupersetForbiddenError || err instanceof SupersetNotFoundError) return null;
  if (err instanceof SupersetApiError && err.upstreamStatus !== undefined && err.upstreamStatus < 500) return null;
  throw err;
}

function tryJson(body: Buffer): unknown {
  if (!body.length) return undefined;
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
}

/** flask-jwt-extended answers a token signed with another key, or malformed, with 422 `{"msg": ...}`. */
function isJwtError(res: WireResponse): boolean {
  const body = tryJson(res.body) as Record<string, unknown> | undefined;
  return !!body && typeof body.msg === 'string' && body.message === undefined && body.errors === undefined;
}

function isCsrfFailure(res: WireResponse): boolean {
  if (res.status === 400) return /csrf/i.test(res.body.toString('utf8', 0, Math.min(res.body.length, 4000)));
  if (res.status >= 300 && res.status < 400) return /\/login/.test(String(res.headers.location ?? ''));
  return false;
}

function jwtExpiry(token: string): number {
  try {
    const claims = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8')) as { exp?: unknown };
    return typeof claims.exp === 'number' ? claims.exp * 1000 : 0;
  } catch {
    return 0;
  }
}

export function displayName(u: { first_name?: string | null; last_name?: string | null; username?: string | null }): string {
  const name = [u.first_name, u.last_name]
    .filter((s) => s && s.trim())
    .join(' ')
    .trim();
  return name || u.username || '';
}

function unique<T>(xs: T[]): T[] {
  return [...new Set(xs)];
}

/** The whole body, refused as soon as it grows past `max` bytes (the declared length is checked first). */
async function readCapped(answer: Dispatcher.ResponseData, max: number): Promise<Buffer> {
  const declared = Number(answer.headers['content-length']);
  if (Number.isFinite(declared) && declared > max) {
    answer.body.destroy();
    throw new TooLarge();
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of answer.body as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > max) {
      answer.body.destroy();
      throw new TooLarge();
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size);
}

function codeOf(err: unknown): string | undefined {
  const e = err as { code?: unknown; cause?: unknown; errors?: unknown[] } | null;
  if (!e || typeof e !== 'object') return undefined;
  if (typeof e.code === 'string') return e.code;
  if (Array.isArray(e.errors) && e.errors.length) return codeOf(e.errors[0]); // AggregateError: one per address tried
  return e.cause ? codeOf(e.cause) : undefined;
}

/** Which wire failure an error from undici is, or undefined when it is not one (a bug, say). */
function wireFailure(err: unknown): UnavailableReason | undefined {
  if (err instanceof TooLarge) return 'too_large';
  const name = (err as { name?: unknown } | null)?.name;
  if (name === 'TimeoutError') return 'timeout'; // AbortSignal.timeout
  const code = codeOf(err);
  if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' || code === 'UND_ERR_CONNECT_TIMEOUT') return 'timeout';
  if (code === 'UND_ERR_RES_EXCEEDED_MAX_SIZE') return 'too_large';
  if (code === 'UND_ERR_INVALID_ARG' || code === 'UND_ERR_DESTROYED' || code === 'UND_ERR_CLOSED') return undefined;
  if (code || err instanceof Error) return 'network';
  return undefined;
}

function describeNetworkError(err: unknown): string {
  const code = codeOf(err);
  switch (code) {
    case 'ECONNREFUSED':
      return 'connection refused';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'host name does not resolve';
    case 'ECONNRESET':
    case 'UND_ERR_SOCKET':
      return 'connection reset';
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return 'host unreachable';
    case 'DEPTH_ZERO_SELF_SIGNED_CERT':
    case 'SELF_SIGNED_CERT_IN_CHAIN':
    case 'UNABLE_TO_VERIFY_LEAF_SIGNATURE':
    case 'CERT_HAS_EXPIRED':
    case 'ERR_TLS_CERT_ALTNAME_INVALID':
      return `TLS certificate not trusted (${code}); fix the certificate or set verify_tls=false`;
    default: {
      const message = err instanceof Error ? err.message : String(err);
      return code ? `${code}: ${message}` : message;
    }
  }
}
