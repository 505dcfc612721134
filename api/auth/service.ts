import { randomUUID } from 'node:crypto';
import type { Context } from 'koa';
import { keyPermissions } from '../../contracts/permissions.ts';
import type { ApiKeyAccess, IdentityStores, UserRecord } from '../../db/identity/index.ts';
import { sha256Hex, verifyPassword } from '../../lib/crypto.ts';
import { NotFoundError, TooManyRequestsError, UnauthenticatedError } from '../../lib/errors.ts';
import { ADMIN_ROLE, ADMIN_SCOPE, type Principal } from './principal.ts';
import type { SecurityEventService } from './security-events.ts';
import { LoginThrottle, type ThrottleKey } from './throttle.ts';
import { TOKEN_TTL_SECONDS, type TokenIssuer } from './tokens.ts';

export interface TokenResponse {
  access_token: string;
  token_type: 'bearer';
  expires_in: number;
}

/** Sessions, tokens and the resolution of a request's credentials into a Principal. */
export class AuthService {
  /** The identity stores, shared with the OIDC sign-in (which opens its sessions here). */
  readonly identity: IdentityStores;
  readonly events: SecurityEventService;
  private readonly tokens: TokenIssuer;
  private readonly throttle: LoginThrottle;

  /** `clock` is the sign-in throttle's (tests drive it); without it the throttle follows PostgreSQL's now(). */
  constructor(deps: { identity: IdentityStores; events: SecurityEventService; tokens: TokenIssuer; clock?: () => Date }) {
    this.identity = deps.identity;
    this.events = deps.events;
    this.tokens = deps.tokens;
    this.throttle = new LoginThrottle(deps.identity.throttle, deps.clock);
  }

  async passwordLogin(ctx: Context, username: string, password: string): Promise<TokenResponse> {
    const account: ThrottleKey = { kind: 'account', value: username };
    const address: ThrottleKey = { kind: 'address', value: ctx.ip || 'unknown' };
    // Counted before the password is checked (see throttle.ts): a burst cannot outrun the limit.
    const reserved = await this.throttle.reserve([account, address]);
    if (!reserved.allowed) {
      await this.events.record(ctx, { type: 'LOGIN_THROTTLED', outcome: 'failure', actorUsername: username });
      throw new TooManyRequestsError(`Too many failed sign-ins; try again in ${reserved.waitSeconds} s`, reserved.waitSeconds);
    }
    const user = await this.identity.users.byUsername(username);
    const ok = await verifyPassword(password, user?.password_hash ?? null);
    if (!user || !ok || !user.active) {
      await this.events.record(ctx, {
        type: 'LOGIN_FAILED',
        outcome: 'failure',
        actorId: user?.id,
        actorUsername: username,
        detail: { reason: !user ? 'unknown_user' : !ok ? 'bad_password' : 'inactive' },
      });
      throw new UnauthenticatedError('Invalid username or password');
    }
    await this.throttle.release(account, address);
    const token = await this.openSession(user, 'password');
    await this.events.record(ctx, { type: 'LOGIN', outcome: 'success', actorId: user.id, actorUsername: user.username });
    return token;
  }

  /** A new session (its id is the token's sid) and an access token bound to it. */
  async openSession(user: UserRecord, via: 'password' | 'oidc'): Promise<TokenResponse> {
    const sid = randomUUID();
    await this.identity.sessions.open({ id: sid, user_id: user.id, via, expires_at: new Date(Date.now() + TOKEN_TTL_SECONDS * 1000) });
    await this.identity.users.recordLogin(user.id);
    const { roles } = await this.identity.roles.accessOf(user.id);
    const { token, expiresIn } = await this.tokens.issue({
      sub: user.id,
      roles,
      scope: roles.includes(ADMIN_ROLE) ? [ADMIN_SCOPE] : [],
      sid,
    });
    return { access_token: token, token_type: 'bearer', expires_in: expiresIn };
  }

  async revokeSession(sid: string): Promise<void> {
    await this.identity.sessions.revoke(sid);
  }

  /** Signs out: the principal's session (if any) is refused from now on. */
  async logout(ctx: Context, principal: Principal): Promise<void> {
    if (principal.sessionId) await this.revokeSession(principal.sessionId);
    await this.events.record(ctx, { type: 'LOGOUT', outcome: 'success', actorId: principal.userId, actorUsername: principal.username });
  }

  /** The signed-in user with their role names, recorded as CURRENT_USER_READ. */
  async currentUser(ctx: Context, userId: string): Promise<{ user: UserRecord; roles: string[] }> {
    const user = await this.identity.users.byId(userId);
    if (!user) throw new NotFoundError('User', userId);
    const { roles } = await this.identity.roles.accessOf(user.id);
    await this.events.record(ctx, { type: 'CURRENT_USER_READ', outcome: 'success', actorId: user.id, actorUsername: user.username });
    return { user, roles };
  }

  /**
   * Whether a principal resolved earlier may still act: its session not revoked or expired and its
   * user active, or its API key (and every key above it) neither revoked nor expired and its creator
   * active. Long-lived answers (log streams) ask this as they go.
   */
  async isStillValid(principal: Principal): Promise<boolean> {
    if (principal.kind === 'api_key') return apiKeyRefusal(await this.identity.access.ofApiKey(principal.apiKeyId!)) === null;
    return this.identity.access.sessionIsLive(principal.sessionId!);
  }

  /** Bearer JWT or X-API-Key into a Principal; undefined when the request carries neither. */
  async resolve(ctx: Context): Promise<Principal | undefined> {
    const apiKey = ctx.get('x-api-key');
    if (apiKey) return this.resolveApiKey(apiKey);
    const auth = ctx.get('authorization');
    if (!auth) return undefined;
    const m = /^Bearer\s+(\S+)$/i.exec(auth);
    if (!m) throw new UnauthenticatedError('Authorization must be "Bearer <token>"');
    return this.resolveToken(m[1]);
  }

  private async resolveToken(token: string): Promise<Principal> {
    const claims = await this.tokens.verify(token);
    // One round trip: the session, its user and the user's live roles and permissions
    // (a role change applies to the next request, not the next login).
    const row = await this.identity.access.ofSession(claims.sid, claims.sub);
    if (!row || row.revoked_at || row.expires_at < new Date()) throw new UnauthenticatedError('The session has ended; sign in again');
    if (!row.active) throw new UnauthenticatedError('The account is disabled');
    return {
      kind: 'user',
      userId: row.id,
      username: row.username,
      roles: row.roles,
      permissions: new Set(row.permissions),
      scopes: claims.scope.split(' ').filter((s) => s === ADMIN_SCOPE && row.roles.includes(ADMIN_ROLE)),
      sessionId: claims.sid,
    };
  }

  /**
   * A key acts for the person at the root of its creators, with those of its permissions that
   * person holds now; it is refused when it, or a key above it, is revoked or expired, and when
   * that person is deactivated or deleted.
   */
  private async resolveApiKey(raw: string): Promise<Principal> {
    const key = await this.identity.access.ofApiKeyHash(sha256Hex(raw));
    const refusal = apiKeyRefusal(key);
    if (refusal !== null) throw new UnauthenticatedError(refusal);
    const k = key as ApiKeyAccess & { user_id: string; username: string };
    void this.identity.apiKeys.recordUse(k.id).catch(() => undefined);
    return {
      kind: 'api_key',
      userId: k.user_id,
      username: k.username,
      roles: [],
      permissions: new Set(keyPermissions(k.permissions, { roles: k.roles, permissions: k.user_permissions })),
      scopes: [],
      apiKeyId: k.id,
      apiKeyName: k.name,
    };
  }
}

/** Why a key may not act now; null when it may. */
function apiKeyRefusal(key: ApiKeyAccess | undefined): string | null {
  // An expired key is refused exactly like a revoked one, and so is a key made by a revoked key.
  if (!key || !key.usable) return 'The API key is invalid, revoked or expired';
  if (!key.user_id || !key.user_active) return "The API key's creator was deactivated or deleted: their keys act no more";
  return null;
}

export function authenticate(auth: AuthService) {
  return async (ctx: Context, next: () => Promise<unknown>): Promise<void> => {
    let resolved: Promise<Principal | undefined> | undefined;
    ctx.state.resolvePrincipal = () =>
      (resolved ??= auth.resolve(ctx).then((principal) => {
        ctx.state.principal = principal;
        return principal;
      }));
    await next();
  };
}
