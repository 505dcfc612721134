/**
 * The wire to one Superset, shared by every resource module (../resources/*):
 *
 * - Authentication, CSRF and cookies through ./session.ts; one transparent re-login on a refused
 *   token and one CSRF renewal per call. Legacy calls (`spec.legacy`: the legacy chart endpoint)
 *   carry instead the cookie of a sign-in through the /login/ form (./legacy-session.ts), signed
 *   in again once when refused.
 * - `Accept: application/json` everywhere: Superset answers errors with HTML pages when the
 *   caller accepts HTML.
 * - A deadline per request from the environment's `timeout_seconds` (shorter ones for opening a
 *   connection and for the session's own exchanges when `deadlines` says so), retries with backoff and
 *   jitter (./retry.ts) of idempotent calls only (GETs, chart-data queries, the login), and only
 *   for what `classifySupersetFailure` calls retryable (a gateway's 502/503/504 or HTML page too).
 * - undici: a connection pool per instance, header and body deadlines plus an overall one, a
 *   size cap enforced while the answer is read, `FormData` for imports, and no redirect handling
 *   at all (a 3xx comes back as an answer).
 * - Requests only go to the environment's own origin (./paths.ts). TLS certificates are verified
 *   unless the environment says `verify_tls: false`.
 * - With an egress policy (ALLOWED_UPSTREAM_HOSTS) every connection goes through its connector
 *   (lib/egress/connect.ts): a refused host or address fails the call with HostNotAllowedError
 *   before anything is sent, and is never retried.
 * - With a circuit breaker (./circuit.ts, the API's clients) no exchange goes out while the
 *   instance's circuit is open: each is refused at once with SupersetCircuitOpenError.
 * - One list call per endpoint at a time (serialList). Secrets are never logged.
 */
import { Pool, type FormData } from 'undici';
import { egressConnector } from '../../egress/connect.ts';
import { egressRefusal } from '../../egress/policy.ts';
import { SupersetUnavailableError, type UpstreamContext } from '../errors.ts';
import type { SupersetConnection } from '../types.ts';
import { isCsrfFailure, isTokenRefusal, parseJson, raiseForStatus, unavailableFromStatus } from './answers.ts';
import type { CircuitBreaker } from './circuit.ts';
import { answerVerdict, failureVerdict } from './circuit-faults.ts';
import { isGatewayAnswer } from './gateway.ts';
import { LegacySession, leadsToLogin } from './legacy-session.ts';
import { DEFAULT_RETRY, type ClientLogger, type ExchangeObserver, type SupersetClientOptions } from './options.ts';
import { apiUrl, normaliseBaseUrl, sameOriginPath } from './paths.ts';
import { Retrier } from './retry.ts';
import { Session } from './session.ts';
import { describeNetworkError, isConnectTimeout, readCapped, wireFailure, type CallSpec, type Method, type WireResponse } from './wire.ts';

const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

export type QueryParams = Record<string, string | number | boolean>;

export class SupersetTransport {
  readonly baseUrl: string;
  /** host[:port], for messages and logs. */
  readonly host: string;
  readonly maxBinaryBytes: number;
  private readonly base: URL;
  /** Keep-alive connections for reads. */
  private readonly pool: Pool;
  /**
   * Mutating calls get a connection of their own, closed after the answer: they are never
   * retried, so a kept-alive socket the server closed meanwhile must not fail them.
   */
  private readonly freshPool: Pool;
  private readonly retrier: Retrier;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly timeoutMs: number;
  /** The session's exchanges' deadline (login, refresh, CSRF): `deadlines.sessionMs` when shorter. */
  private readonly sessionMs: number;
  /** Opening a connection (TCP, TLS): `deadlines.connectMs` when shorter than the timeout. */
  private readonly connectMs: number;
  private readonly circuit?: CircuitBreaker;
  private readonly logger?: ClientLogger;
  private readonly maxJsonBytes: number;
  private readonly observe?: ExchangeObserver;
  /** The standing with the instance: tokens, CSRF token, cookies. */
  readonly session: Session;
  /** The form sign-in the legacy chart endpoint needs, made on its first call. */
  readonly legacySession: LegacySession;
  private readonly listQueues = new Map<string, Promise<unknown>>();
  private closed = false;

  constructor(conn: SupersetConnection, opts: SupersetClientOptions = {}) {
    this.baseUrl = normaliseBaseUrl(conn.baseUrl);
    this.base = new URL(this.baseUrl);
    this.host = this.base.host;
    this.timeoutMs = Math.max(1, conn.timeoutSeconds ?? 30) * 1000;
    this.sessionMs = Math.min(this.timeoutMs, opts.deadlines?.sessionMs ?? this.timeoutMs);
    this.connectMs = Math.min(this.timeoutMs, opts.deadlines?.connectMs ?? this.timeoutMs);
    this.circuit = opts.circuit;
    this.logger = opts.logger;
    this.retrier = new Retrier(this.host, { ...DEFAULT_RETRY, ...opts.retry }, opts.retryHooks, this.logger);
    this.sleep = opts.retryHooks?.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms)));
    this.maxJsonBytes = opts.maxJsonBytes ?? 64 * 1024 * 1024;
    this.observe = opts.observe;
    this.maxBinaryBytes = opts.maxBinaryBytes ?? 512 * 1024 * 1024;
    const tls = { rejectUnauthorized: conn.verifyTls !== false, timeout: this.connectMs };
    const connect = opts.egress?.restricted ? egressConnector(opts.egress, tls) : tls;
    const connections = Math.max(1, opts.maxSockets ?? 8);
    this.pool = new Pool(this.base.origin, { connections, connect, keepAliveTimeout: 10_000 });
    this.freshPool = new Pool(this.base.origin, { connections, connect });
    this.session = new Session(
      conn,
      this.host,
      {
        exchange: (spec, bearer) => this.loginExchange({ ...spec, session: true }, bearer),
        getJson: (path) => this.call({ method: 'GET', path, session: true }, (res) => this.parseJson(res, { method: 'GET', path })),
      },
      this.logger,
    );
    this.legacySession = new LegacySession(conn, this.host, { exchange: (spec) => this.pageExchange(spec) }, this.logger);
  }

  /** Drops pooled connections. The transport must not be used afterwards. */
  close(): void {
    this.closed = true;
    // expected: a pool that fails to close leaves nothing the closed transport would use again.
    for (const p of [this.pool, this.freshPool]) p.destroy().catch(() => undefined);
  }

  /** Waits `ms` on the client's clock (injected in tests): the pauses between polls of an asynchronous query. */
  pause(ms: number): Promise<void> {
    return this.sleep(ms);
  }

  /** Logs in now (otherwise the first call does). Throws SupersetAuthError on refused credentials. */
  login(): Promise<void> {
    return this.session.login();
  }

  /**
   * Fetches the CSRF token a write carries now, beside the reads before it, instead of just before
   * the first write. A failure is not reported here: the write meets it again.
   */
  prepareWrites(): void {
    this.session
      .ensureAuth()
      .then(() => this.session.ensureCsrf())
      // expected: the write meets the same failure again, with its own item (see above).
      .catch(() => undefined);
  }

  /** One JSON call to a fixed API path (see ./paths.ts); GETs are retried as any other read. */
  request<T>(method: Method, path: string, opts: { q?: unknown; query?: QueryParams; json?: unknown } = {}): Promise<T> {
    const spec: CallSpec = { method, path, q: opts.q, query: opts.query, json: opts.json };
    return this.call(spec, (res) => this.parseJson<T>(res, spec));
  }

  getJson<T>(path: string, opts: { q?: unknown; query?: QueryParams } = {}): Promise<T> {
    return this.request<T>('GET', path, opts);
  }

  /** One call and the reading of its answer, asked again (transport/retry.ts) when it is idempotent. */
  call<T>(spec: CallSpec, read: (res: WireResponse) => T): Promise<T> {
    const idempotent = spec.method === 'GET' || spec.idempotent === true;
    return this.retrier.run({ method: spec.method, path: spec.path, idempotent }, async () => {
      const res = await this.authed(spec);
      if (!(spec.pass ?? []).includes(res.status)) raiseForStatus(this.host, res, spec);
      return read(res);
    });
  }

  /**
   * The session's own exchanges (login, token refresh): a gateway's answer to them is raised, so
   * it is asked again like any idempotent call (a login only hands out a new token).
   */
  private loginExchange(spec: CallSpec, bearer?: string): Promise<WireResponse> {
    return this.retrier.run({ method: spec.method, path: spec.path, idempotent: true }, async () => {
      const res = await this.exchange(spec, bearer);
      if (isGatewayAnswer(res)) throw unavailableFromStatus(this.host, res, spec);
      return res;
    });
  }

  /**
   * The login form's exchanges: its answers are HTML pages by design, so only a 5xx is an outage
   * (a gateway's one asked again, as any idempotent call: a sign-in only hands out a session).
   */
  private pageExchange(spec: CallSpec): Promise<WireResponse> {
    return this.retrier.run({ method: spec.method, path: spec.path, idempotent: true }, async () => {
      const res = await this.exchange(spec);
      if (res.status >= 500) throw unavailableFromStatus(this.host, res, spec);
      return res;
    });
  }

  parseJson<T>(res: WireResponse, ctx: UpstreamContext): T {
    return parseJson<T>(this.host, res, ctx);
  }

  unavailable(res: WireResponse, ctx: UpstreamContext): SupersetUnavailableError {
    return unavailableFromStatus(this.host, res, ctx);
  }

  /** A Location header reduced to a path on the base, if it stays on the environment's origin and matches `allowed`. */
  sameOriginPath(location: string, allowed: RegExp): string | undefined {
    return sameOriginPath(this.base, location, allowed);
  }

  /**
   * Calls to one FAB list endpoint, one at a time. Flask-AppBuilder's `get_list` keeps the parsed
   * filters on the API object shared by the worker's threads (`self._filters.clear_filters()`
   * then `rest_add_filters`), so two concurrent list calls to the same endpoint of one Superset
   * worker can run with each other's filters: measured on 6.1.0 (a count answered for the wrong
   * filter). Everything else may run in parallel.
   */
  serialList<T>(endpoint: string, work: () => Promise<T>): Promise<T> {
    const previous = this.listQueues.get(endpoint) ?? Promise.resolve();
    const run = previous.then(work, work);
    const forget = () => {
      if (this.listQueues.get(endpoint) === tail) this.listQueues.delete(endpoint);
    };
    // The queue's tail settles either way: the caller meets the list's failure by awaiting `run`.
    const tail: Promise<void> = run.then(forget, forget);
    this.listQueues.set(endpoint, tail);
    return run;
  }

  /** Authenticated exchange with one transparent re-login on a refused token and one CSRF renewal. */
  private async authed(spec: CallSpec): Promise<WireResponse> {
    if (spec.anonymous) return this.exchange(spec);
    if (spec.legacy) return this.legacyAuthed(spec);
    const mutating = MUTATING.has(spec.method);
    let reauthed = false;
    let recsrfed = false;
    for (;;) {
      const auth = await this.session.ensureAuth();
      if (mutating) await this.session.ensureCsrf();
      const res = await this.exchange(spec, auth.accessToken);
      if (isTokenRefusal(res) && !reauthed) {
        reauthed = true;
        await this.session.tokenRefused(auth);
        continue;
      }
      if (mutating && !recsrfed && isCsrfFailure(res)) {
        recsrfed = true;
        await this.session.csrfRefused();
        continue;
      }
      return res;
    }
  }

  /** A legacy call with the form sign-in's cookie: refused (401, or sent to the login page), it signs in again once. */
  private async legacyAuthed(spec: CallSpec): Promise<WireResponse> {
    const call = { ...spec, cookies: this.legacySession.cookies };
    const generation = await this.legacySession.ensure();
    const res = await this.exchange(call);
    const refused = res.status === 401 || (res.status >= 300 && res.status < 400 && leadsToLogin(String(res.headers.location ?? '')));
    if (!refused) return res;
    await this.legacySession.refused(generation);
    return this.exchange(call);
  }

  /**
   * One HTTP exchange, seen by the client's observer (metrics, trace spans) when it has one, and
   * let through by the circuit, which hears how it ended. The exchange whose fault opens the
   * circuit throws the circuit's error, so its call's retries stop there.
   */
  private async exchange(spec: CallSpec, bearer?: string): Promise<WireResponse> {
    const admission = this.circuit?.admit(spec);
    const send = () => this.send(spec, bearer);
    let res: WireResponse;
    try {
      res = await (this.observe ? this.observe({ method: spec.method, path: spec.path }, send) : send());
    } catch (err) {
      const verdict = failureVerdict(err, spec);
      admission?.settle(verdict);
      if (verdict.kind === 'fault' && this.circuit?.state === 'open') throw this.circuit.openError(spec);
      throw err;
    }
    const verdict = answerVerdict(this.host, res, spec);
    admission?.settle(verdict);
    if (verdict.kind === 'fault' && this.circuit?.state === 'open') throw this.circuit.openError(spec);
    return res;
  }

  /** One HTTP exchange; wire failures become SupersetUnavailableError, an egress refusal HostNotAllowedError. */
  private async send(spec: CallSpec, bearer?: string): Promise<WireResponse> {
    if (this.closed) throw new Error('SupersetClient is closed');
    const url = apiUrl(this.base, spec.path, spec.q, spec.query);
    const mutating = MUTATING.has(spec.method);
    const { headers, body } = this.outgoing(spec, mutating, bearer);
    const maxBytes = spec.maxBytes ?? this.maxJsonBytes;
    const deadlineMs = spec.session ? this.sessionMs : this.timeoutMs;
    const started = Date.now();
    try {
      const answer = await (mutating ? this.freshPool : this.pool).request({
        method: spec.method,
        path: url.pathname + url.search,
        headers,
        body,
        headersTimeout: deadlineMs,
        bodyTimeout: deadlineMs,
        // The whole exchange, not only each wait between bytes, has a deadline.
        signal: AbortSignal.timeout(deadlineMs),
        reset: mutating,
      });
      const read = await readCapped(answer, maxBytes);
      const res: WireResponse = { status: answer.statusCode, headers: answer.headers, body: read, elapsedMs: Date.now() - started };
      (spec.cookies ?? this.session.cookies).keep(res);
      this.logger?.debug(
        { superset: this.host, method: spec.method, path: spec.path, status: res.status, ms: Date.now() - started },
        'superset call',
      );
      return res;
    } catch (err) {
      throw this.wireError(err, spec, maxBytes, deadlineMs);
    }
  }

  /** The request's headers and body: JSON or multipart, cookies, bearer, and for mutating calls Referer and CSRF token. */
  private outgoing(spec: CallSpec, mutating: boolean, bearer?: string): { headers: Record<string, string>; body?: string | FormData } {
    const headers: Record<string, string> = {
      accept: spec.accept ?? 'application/json',
      // No compression asked for: the size cap then bounds what is held in memory, byte for byte.
      'accept-encoding': 'identity',
      'user-agent': 'switchyard',
    };
    if (bearer) headers.authorization = `Bearer ${bearer}`;
    const cookie = (spec.cookies ?? this.session.cookies).header();
    if (cookie) headers.cookie = cookie;
    let body: string | FormData | undefined;
    if (spec.form) {
      body = spec.form; // undici writes the multipart body and its content-type with the boundary
    } else if (spec.urlencoded) {
      body = spec.urlencoded.toString();
      headers['content-type'] = 'application/x-www-form-urlencoded';
    } else if (spec.json !== undefined) {
      body = JSON.stringify(spec.json);
      headers['content-type'] = 'application/json';
    }
    if (mutating) {
      headers.referer = `${this.baseUrl}/`;
      const csrf = this.session.csrfToken;
      if (csrf && !spec.anonymous) headers['x-csrftoken'] = csrf;
    }
    return { headers, body };
  }

  private wireError(err: unknown, spec: CallSpec, maxBytes: number, deadlineMs: number): unknown {
    // The egress policy refused the host: not a failure of Superset's, and nothing to retry.
    const refused = egressRefusal(err);
    if (refused) return refused;
    const reason = wireFailure(err);
    if (!reason) return err;
    const what = isConnectTimeout(err)
      ? `Superset at ${this.host} did not accept a connection for ${spec.method} ${spec.path} within ${this.connectMs / 1000} s`
      : reason === 'timeout'
        ? `Superset at ${this.host} did not answer ${spec.method} ${spec.path} within ${deadlineMs / 1000} s`
        : reason === 'too_large'
          ? `Superset at ${this.host} answered ${spec.method} ${spec.path} with more than ${maxBytes} bytes`
          : `Superset at ${this.host} could not be reached for ${spec.method} ${spec.path}: ${describeNetworkError(err)}`;
    return new SupersetUnavailableError(reason, what, { method: spec.method, path: spec.path }, err);
  }
}
