import { timingSafeEqual } from 'node:crypto';
import type { Context } from 'koa';
import * as client from 'openid-client';
import { isUniqueViolation } from '../../db/errors.ts';
import type { IdentityStores, OidcLoginStateRecord, UserRecord } from '../../db/identity/index.ts';
import { ConfigError, type Config } from '../../lib/config.ts';
import { egressFetch } from '../../lib/egress/connect.ts';
import { egressPolicy, egressRefusal, type EgressPolicy } from '../../lib/egress/policy.ts';
import { AppError, TooManyRequestsError, UpstreamUnavailableError } from '../../lib/errors.ts';
import type { Logger } from '../../lib/logger.ts';
import type { SecurityEventService } from './security-events.ts';
import type { AuthService, TokenResponse } from './service.ts';
import { LoginThrottle } from './throttle.ts';

/** A started login may be finished within this many seconds, once. */
export const OIDC_STATE_TTL_SECONDS = 600;
/** Rows older than this are deleted when a new login starts (consumed ones are kept that long to tell a replay from a forgery). */
const STATE_RETENTION_SECONDS = 3600;
/** HttpOnly cookie binding a login to the browser that started it (login CSRF protection). */
export const OIDC_STATE_COOKIE = 'switchyard_oidc_state';
const COOKIE_PATH = '/api/auth/oidc';
const SCOPES = 'openid profile email';
const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]', '::1']);

/** A failed OIDC sign-in; `reason` goes to the OIDC_LOGIN_FAILED event, never to the caller as more than `detail`. */
export class OidcError extends AppError {
  override name = 'OidcError';
  readonly reason: string;
  constructor(status: number, code: string, title: string, detail: string, reason: string, cause?: unknown) {
    super(status, code, title, detail, { cause });
    this.reason = reason;
  }
}

export function oidcNotConfigured(): AppError {
  return new AppError(
    404,
    'oidc_not_configured',
    'Single sign-on not configured',
    'OIDC sign-in is not configured on this server (set OIDC_ISSUER)',
  );
}

function stateInvalid(reason: string, detail: string): OidcError {
  return new OidcError(400, 'oidc_state_invalid', 'Invalid sign-in state', detail, reason);
}

function loginFailed(reason: string, detail: string, cause?: unknown): OidcError {
  return new OidcError(401, 'oidc_login_failed', 'Single sign-on failed', detail, reason, cause);
}

export interface OidcIdentity {
  issuer: string;
  subject: string;
  username: string;
  email: string | null;
  displayName: string | null;
  groups: string[];
}

/**
 * OpenID Connect sign-in (authorization code flow with PKCE S256, state and nonce). Provider
 * metadata is discovered on first use and cached; a failed discovery is retried on the next
 * request. Login state lives server-side in `oidc_login_states` and is single-use.
 */
export class OidcService {
  private readonly identity: IdentityStores;
  private readonly events: SecurityEventService;
  private readonly auth: AuthService;
  private readonly logger: Logger;
  private readonly issuer: URL;
  private readonly clientId: string;
  private readonly clientSecret: string | undefined;
  private readonly redirectUri: URL;
  private readonly groupsClaim: string;
  private readonly insecure: boolean;
  private discovered: Promise<client.Configuration> | undefined;
  private readonly throttle: LoginThrottle;
  /** Every request to the provider (discovery, token, keys; wherever discovery points) follows ALLOWED_UPSTREAM_HOSTS. */
  private readonly egress: EgressPolicy;

  /** Users, roles, login states and security events are the AuthService's stores: OIDC is one way to open its sessions. */
  constructor(deps: { config: Config; auth: AuthService; logger: Logger; clock?: () => Date }) {
    const { config } = deps;
    if (!config.OIDC_ISSUER || !config.OIDC_CLIENT_ID || !config.OIDC_REDIRECT_URI) {
      throw new ConfigError('Invalid configuration:\n  OIDC_ISSUER, OIDC_CLIENT_ID and OIDC_REDIRECT_URI must be set together');
    }
    this.identity = deps.auth.identity;
    this.events = deps.auth.events;
    this.auth = deps.auth;
    this.logger = deps.logger;
    this.issuer = new URL(config.OIDC_ISSUER);
    this.clientId = config.OIDC_CLIENT_ID;
    this.clientSecret = config.OIDC_CLIENT_SECRET;
    this.redirectUri = new URL(config.OIDC_REDIRECT_URI);
    this.groupsClaim = config.OIDC_GROUPS_CLAIM || 'groups';
    this.throttle = new LoginThrottle(this.identity.throttle, deps.clock);
    this.egress = egressPolicy(config);
    if (this.issuer.protocol !== 'https:' && this.issuer.protocol !== 'http:') {
      throw new ConfigError('Invalid configuration:\n  OIDC_ISSUER must be an https URL');
    }
    this.insecure = this.issuer.protocol === 'http:';
    if (this.insecure && !LOOPBACK_HOSTS.has(this.issuer.hostname)) {
      throw new ConfigError(
        'Invalid configuration:\n  OIDC_ISSUER must be https (plain http is accepted only for 127.0.0.1 and localhost)',
      );
    }
  }

  /** Discovery once, cached; a failure is not cached. */
  private configuration(): Promise<client.Configuration> {
    this.discovered ??= client
      .discovery(
        this.issuer,
        this.clientId,
        this.clientSecret ? { client_secret: this.clientSecret } : undefined,
        this.clientSecret ? client.ClientSecretBasic(this.clientSecret) : client.None(),
        {
          execute: this.insecure ? [client.allowInsecureRequests] : [],
          timeout: 10,
          ...(this.egress.restricted ? { [client.customFetch]: egressFetch(this.egress) } : {}),
        },
      )
      .catch((err: unknown) => {
        this.discovered = undefined;
        const refused = egressRefusal(err);
        if (refused) throw refused;
        this.logger.warn({ err: describe(err), issuer: this.issuer.href }, 'OIDC discovery failed');
        throw new UpstreamUnavailableError(
          'Identity provider',
          'The identity provider could not be reached or its discovery document is invalid',
          err,
        );
      });
    return this.discovered;
  }

  /**
   * A new login: the provider URL to redirect to and the Set-Cookie value binding it to the
   * browser. Anyone may ask, without credentials, and each start stores a login state: starts are
   * counted per address (throttle.ts) before the provider is asked or anything is stored.
   */
  async startLogin(ctx: Context): Promise<{ url: string; cookie: string }> {
    const reserved = await this.throttle.reserve([{ kind: 'oidc_start', value: ctx.ip || 'unknown' }]);
    if (!reserved.allowed) {
      await this.events.record(ctx, { type: 'LOGIN_THROTTLED', outcome: 'failure', detail: { via: 'oidc' } });
      throw new TooManyRequestsError(
        `Too many sign-in starts from this address; try again in ${reserved.waitSeconds} s`,
        reserved.waitSeconds,
      );
    }
    const config = await this.configuration();
    const state = client.randomState();
    const nonce = client.randomNonce();
    const codeVerifier = client.randomPKCECodeVerifier();
    const codeChallenge = await client.calculatePKCECodeChallenge(codeVerifier);
    await this.identity.oidcStates.purgeCreatedBefore(new Date(Date.now() - STATE_RETENTION_SECONDS * 1000));
    await this.identity.oidcStates.create({ state, nonce, code_verifier: codeVerifier });
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: this.redirectUri.href,
      scope: SCOPES,
      state,
      nonce,
      code_challenge: codeChallenge,
      code_challenge_method: 'S256',
    });
    return { url: url.href, cookie: this.cookie(state, OIDC_STATE_TTL_SECONDS) };
  }

  /** Set-Cookie value that removes the binding cookie. */
  clearCookie(): string {
    return this.cookie('', 0);
  }

  private cookie(value: string, maxAge: number): string {
    const secure = this.redirectUri.protocol === 'https:' ? '; Secure' : '';
    return `${OIDC_STATE_COOKIE}=${value}; Path=${COOKIE_PATH}; Max-Age=${maxAge}; HttpOnly; SameSite=Lax${secure}`;
  }

  /**
   * The provider's redirect back: checks the state (known, unconsumed, unexpired, bound to this
   * browser), redeems the code with the PKCE verifier, checks the ID token and its nonce, then
   * provisions the user, maps groups to roles and opens a session. Every failure writes
   * OIDC_LOGIN_FAILED and changes no user, role or session.
   */
  async finishLogin(ctx: Context, params: Record<string, string>): Promise<TokenResponse> {
    let username: string | undefined;
    try {
      const row = await this.consumeState(ctx, params.state);
      if (params.error) {
        const code = /^[A-Za-z0-9_.-]{1,64}$/.test(params.error) ? params.error : 'unknown';
        throw loginFailed('provider_error', `The identity provider refused the sign-in (${code})`);
      }
      if (!params.code) throw stateInvalid('code_missing', 'The callback carries no authorization code');
      const identity = await this.redeem(params, row);
      username = identity.username;
      const { user, provisioned, roles } = await this.provision(identity);
      username = user.username;
      const token = await this.auth.openSession(user, 'oidc');
      await this.events.record(ctx, {
        type: 'OIDC_LOGIN',
        outcome: 'success',
        actorId: user.id,
        actorUsername: user.username,
        detail: { issuer: identity.issuer, subject: identity.subject, provisioned, groups: identity.groups, roles },
      });
      return token;
    } catch (err) {
      const reason =
        err instanceof OidcError ? err.reason : err instanceof UpstreamUnavailableError ? 'provider_unavailable' : 'internal_error';
      await this.events
        .record(ctx, {
          type: 'OIDC_LOGIN_FAILED',
          outcome: 'failure',
          actorUsername: username ?? null,
          detail: { reason, ...(err instanceof OidcError && err.cause ? { error: describe(err.cause) } : {}) },
        })
        .catch(() => undefined);
      if (!(err instanceof AppError) || err.status >= 500) throw err;
      this.logger.info({ reason, err: err.cause ? describe(err.cause) : undefined }, 'OIDC sign-in rejected');
      throw err;
    }
  }

  /** Marks the state used, atomically: of two callbacks with the same state at most one gets past here. */
  private async consumeState(ctx: Context, state: string): Promise<OidcLoginStateRecord> {
    const bound = ctx.cookies.get(OIDC_STATE_COOKIE);
    if (!bound || !sameString(bound, state)) {
      throw stateInvalid('state_not_bound', 'The sign-in state does not belong to this browser; start the sign-in again');
    }
    const cutoff = new Date(Date.now() - OIDC_STATE_TTL_SECONDS * 1000);
    const row = await this.identity.oidcStates.consume(state, cutoff);
    if (row) return row;
    const existing = await this.identity.oidcStates.find(state);
    if (!existing) throw stateInvalid('state_unknown', 'The sign-in state is unknown; start the sign-in again');
    if (existing.consumed_at) throw stateInvalid('state_consumed', 'The sign-in state was already used; start the sign-in again');
    throw stateInvalid('state_expired', 'The sign-in state has expired; start the sign-in again');
  }

  /** Code for tokens (PKCE, nonce and ID token checks by openid-client), then the user's claims. */
  private async redeem(params: Record<string, string>, row: OidcLoginStateRecord): Promise<OidcIdentity> {
    const config = await this.configuration();
    const currentUrl = new URL(this.redirectUri.href);
    currentUrl.search = '';
    for (const [k, v] of Object.entries(params)) currentUrl.searchParams.set(k, v);
    let tokens: Awaited<ReturnType<typeof client.authorizationCodeGrant>>;
    try {
      tokens = await client.authorizationCodeGrant(config, currentUrl, {
        pkceCodeVerifier: row.code_verifier,
        expectedNonce: row.nonce,
        expectedState: row.state,
        idTokenExpected: true,
      });
    } catch (err) {
      if (isUnreachable(err))
        throw new UpstreamUnavailableError('Identity provider', 'The identity provider did not answer the token request', err);
      throw loginFailed(tokenFailureReason(err), 'The identity provider did not confirm the sign-in', err);
    }
    const idClaims = tokens.claims();
    if (!idClaims?.sub) throw loginFailed('id_token_missing', 'The identity provider returned no ID token');
    let claims: Record<string, unknown> = { ...idClaims };
    if (config.serverMetadata().userinfo_endpoint) {
      try {
        const info = await client.fetchUserInfo(config, tokens.access_token, idClaims.sub);
        claims = { ...claims, ...info, sub: idClaims.sub };
      } catch (err) {
        if (isUnreachable(err))
          throw new UpstreamUnavailableError('Identity provider', 'The identity provider did not answer the userinfo request', err);
        throw loginFailed('userinfo_failed', 'The identity provider did not return the user profile', err);
      }
    }
    const text = (v: unknown) => (typeof v === 'string' && v.trim() ? v.trim() : null);
    const email = text(claims.email);
    return {
      issuer: config.serverMetadata().issuer,
      subject: idClaims.sub,
      username: (text(claims.preferred_username) ?? email ?? idClaims.sub).slice(0, 150),
      email,
      displayName: text(claims.name),
      groups: readGroups(claims, this.groupsClaim),
    };
  }

  /**
   * Finds the user by (issuer, subject) or creates one (auth_source oidc). The username comes
   * from preferred_username, else email, else sub; a name already held by another account gets a
   * numeric suffix (alice → alice-2), so an OIDC login never takes over a local account.
   * Roles are replaced with the mapped set of the provider's groups on every login.
   */
  private async provision(identity: OidcIdentity): Promise<{ user: UserRecord; provisioned: boolean; roles: string[] }> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.identity.transaction(async (tx) => {
          let user = await tx.users.byOidcSubject(identity.issuer, identity.subject, { forUpdate: true });
          const provisioned = !user;
          if (user) {
            if (!user.active) throw loginFailed('account_disabled', 'The account is disabled');
            user = await tx.users.update(user.id, { email: identity.email, display_name: identity.displayName });
          } else {
            user = await tx.users.create({
              username: await tx.users.freeUsername(identity.username),
              email: identity.email,
              display_name: identity.displayName,
              password_hash: null,
              auth_source: 'oidc',
              oidc_issuer: identity.issuer,
              oidc_subject: identity.subject,
            });
          }
          const mapped = await tx.roles.rolesForGroups(identity.groups);
          await tx.roles.setUserRoles(
            user!.id,
            mapped.map((r) => r.id),
          );
          return { user: user!, provisioned, roles: mapped.map((r) => r.name).sort() };
        });
      } catch (err) {
        // Two first logins racing for one subject or one username: the loser retries and finds the row.
        if (isUniqueViolation(err) && attempt < 4) continue;
        throw err;
      }
    }
  }
}

/** The groups claim: an array of strings or one string; a dotted name walks nested objects (`realm_access.roles`). */
export function readGroups(claims: Record<string, unknown>, name: string): string[] {
  let value: unknown = claims[name];
  if (value === undefined && name.includes('.')) {
    value = name
      .split('.')
      .reduce<unknown>((acc, key) => (acc && typeof acc === 'object' ? (acc as Record<string, unknown>)[key] : undefined), claims);
  }
  const list = Array.isArray(value) ? value : typeof value === 'string' ? [value] : [];
  return [...new Set(list.filter((g): g is string => typeof g === 'string' && g.trim() !== '').map((g) => g.trim()))].slice(0, 500);
}

function sameString(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** Network failures and timeouts: the provider is unavailable, not the sign-in invalid. */
function isUnreachable(err: unknown): boolean {
  if (err instanceof client.ClientError) {
    return ['OAUTH_TIMEOUT', 'OAUTH_ABORT', 'OAUTH_RESPONSE_IS_NOT_CONFORM'].includes(err.code ?? '');
  }
  return err instanceof TypeError && !(err as { code?: string }).code;
}

function tokenFailureReason(err: unknown): string {
  if (err instanceof client.ResponseBodyError) return 'code_rejected';
  if (err instanceof client.AuthorizationResponseError) return 'provider_error';
  if (err instanceof client.ClientError && err.code === 'OAUTH_JWT_CLAIM_COMPARISON_FAILED') return 'id_token_claim_mismatch';
  return 'token_exchange_failed';
}

/** A loggable, secret-free summary of an openid-client error (class, code, OAuth error word). */
function describe(err: unknown): Record<string, string> {
  if (err instanceof client.ResponseBodyError || err instanceof client.AuthorizationResponseError) {
    return { type: err.name, error: err.error };
  }
  if (err instanceof client.ClientError) {
    // ClientError wraps oauth4webapi's error, whose cause names the claim that failed (e.g. nonce).
    const claim = (err.cause as { cause?: { claim?: unknown } } | undefined)?.cause?.claim;
    return { type: err.name, code: err.code ?? 'unknown', ...(typeof claim === 'string' ? { claim } : {}) };
  }
  if (err instanceof Error) return { type: err.name };
  return { type: typeof err };
}
