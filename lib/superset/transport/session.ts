/**
 * One client's standing with its Superset: the JWT (renewed from the refresh token, or by a fresh
 * login, before it expires and on any refusal; one login at a time), the CSRF token and the Flask
 * `session` cookie it belongs to. A bearer token does not exempt a mutating call from Superset's
 * CSRF check, so both travel together. Secrets held here are never logged.
 */
import { normaliseErrorBody, SupersetAuthError, SupersetUnavailableError } from '../errors.ts';
import type { SupersetConnection } from '../types.ts';
import { parseJson, unavailableFromStatus } from './answers.ts';
import { CookieJar } from './cookies.ts';
import type { ClientLogger } from './options.ts';
import { tryJson, type CallSpec, type WireResponse } from './wire.ts';

export interface AuthState {
  accessToken: string;
  refreshToken?: string;
  /** Epoch ms; 0 when the token carries no `exp`. */
  expiresAt: number;
}

/** What the session needs of the transport: one raw exchange, and an authenticated GET of JSON. */
export interface SessionWire {
  exchange(spec: CallSpec, bearer?: string): Promise<WireResponse>;
  getJson<T>(path: string): Promise<T>;
}

const LOGIN = '/api/v1/security/login';
const REFRESH = '/api/v1/security/refresh';
const CSRF = '/api/v1/security/csrf_token/';

export class Session {
  private auth?: AuthState;
  private authFlight?: Promise<AuthState>;
  private csrf?: string;
  private csrfFlight?: Promise<string>;
  /** The API session's cookies (the legacy session keeps its own: ./legacy-session.ts). */
  readonly cookies = new CookieJar();

  private readonly conn: SupersetConnection;
  private readonly host: string;
  private readonly wire: SessionWire;
  private readonly logger?: ClientLogger;

  constructor(conn: SupersetConnection, host: string, wire: SessionWire, logger?: ClientLogger) {
    this.conn = conn;
    this.host = host;
    this.wire = wire;
    this.logger = logger;
  }

  /** The CSRF token a mutating call carries, once one was fetched. */
  get csrfToken(): string | undefined {
    return this.csrf;
  }

  /** Replaces the CSRF token held (the client's tests make it stale). */
  set csrfToken(token: string | undefined) {
    this.csrf = token;
  }

  /** The token held now, if any (the client's tests call Superset with it directly). */
  get heldAuth(): AuthState | undefined {
    return this.auth;
  }

  /**
   * The channel of the async-query token Superset keeps in a cookie (GLOBAL_ASYNC_QUERIES: a JWT
   * whose `channel` claim names the event stream this session reads), when there is one.
   */
  asyncChannel(): string | undefined {
    for (const value of this.cookies.values()) {
      const parts = value.split('.');
      if (parts.length !== 3) continue;
      try {
        const claims = JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8')) as { channel?: unknown };
        if (typeof claims.channel === 'string') return claims.channel;
      } catch {
        // expected: not a JWT: no channel in it.
        // not a JWT
      }
    }
    return undefined;
  }

  cookieHeader(): string | undefined {
    return this.cookies.header();
  }

  keepCookies(res: WireResponse): void {
    this.cookies.keep(res);
  }

  /** Logs in now (otherwise the first call does). Throws SupersetAuthError on refused credentials. */
  async login(): Promise<void> {
    this.auth = undefined;
    this.csrf = undefined;
    await this.ensureAuth(true);
  }

  /** A token good for at least 30 s more (or without an expiry); renewed first when not. */
  async ensureAuth(force = false): Promise<AuthState> {
    if (!force && this.auth && (this.auth.expiresAt === 0 || this.auth.expiresAt - Date.now() > 30_000)) return this.auth;
    this.authFlight ??= this.authenticate(force).finally(() => (this.authFlight = undefined));
    return this.authFlight;
  }

  async ensureCsrf(): Promise<string> {
    if (this.csrf) return this.csrf;
    this.csrfFlight ??= (async () => {
      const body = await this.wire.getJson<{ result?: string }>(CSRF);
      if (!body.result) {
        throw new SupersetUnavailableError('bad_response', 'Superset answered the CSRF token request without a token', {
          method: 'GET',
          path: CSRF,
        });
      }
      this.csrf = body.result;
      return body.result;
    })().finally(() => (this.csrfFlight = undefined));
    return this.csrfFlight;
  }

  /** `auth` was refused before its expiry (revoked, server restarted with another key): log in anew, unless another call already did. */
  async tokenRefused(auth: AuthState): Promise<void> {
    if (this.auth !== auth) return;
    this.auth = { ...auth, expiresAt: 1 };
    await this.ensureAuth(true);
  }

  /** The CSRF token or its session cookie was refused: start a new session. */
  async csrfRefused(): Promise<void> {
    this.csrf = undefined;
    this.cookies.clear();
    await this.ensureAuth(true);
  }

  private async authenticate(force: boolean): Promise<AuthState> {
    const previous = this.auth;
    if (!force && previous?.refreshToken) {
      const refreshed = await this.refresh(previous);
      if (refreshed) return refreshed;
    }
    this.auth = undefined;
    this.csrf = undefined;
    this.cookies.clear();
    return this.freshLogin();
  }

  /** A new access token from the refresh token; undefined when Superset would not give one (then: log in). */
  private async refresh(previous: AuthState & { refreshToken?: string }): Promise<AuthState | undefined> {
    try {
      const res = await this.wire.exchange({ method: 'POST', path: REFRESH, anonymous: true }, previous.refreshToken);
      if (res.status === 200) {
        const body = parseJson<{ access_token?: string }>(this.host, res, { method: 'POST', path: REFRESH });
        if (body.access_token) {
          this.auth = { ...previous, accessToken: body.access_token, expiresAt: jwtExpiry(body.access_token) };
          return this.auth;
        }
      }
    } catch (err) {
      if (err instanceof SupersetUnavailableError) throw err;
    }
    return undefined;
  }

  private async freshLogin(): Promise<AuthState> {
    const ctx = { method: 'POST', path: LOGIN };
    const res = await this.wire.exchange({
      method: 'POST',
      path: LOGIN,
      anonymous: true,
      json: { username: this.conn.username, password: this.conn.password, provider: this.conn.provider ?? 'db', refresh: true },
    });
    if (res.status >= 500) throw unavailableFromStatus(this.host, res, ctx);
    if (res.status !== 200) {
      const { message } = normaliseErrorBody(tryJson(res.body), `HTTP ${res.status}`);
      throw new SupersetAuthError({ ...ctx, upstreamStatus: res.status }, message, undefined);
    }
    const body = parseJson<{ access_token?: string; refresh_token?: string }>(this.host, res, ctx);
    if (!body.access_token) throw new SupersetUnavailableError('bad_response', 'Superset login answered without an access token', ctx);
    this.auth = { accessToken: body.access_token, refreshToken: body.refresh_token, expiresAt: jwtExpiry(body.access_token) };
    this.logger?.debug({ superset: this.host }, 'superset login');
    return this.auth;
  }
}

function jwtExpiry(token: string): number {
  try {
    const claims = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8')) as { exp?: unknown };
    return typeof claims.exp === 'number' ? claims.exp * 1000 : 0;
  } catch {
    // expected: not a JWT: no expiry known, refreshed on the next 401.
    return 0;
  }
}
