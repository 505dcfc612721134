import { randomUUID } from 'node:crypto';
import type { Context } from 'koa';
import type { Knex } from 'knex';
import { findUserByUsername, loadAccess, type UserRow } from '../../db/identity/repository.ts';
import { sha256Hex, verifyPassword } from '../../lib/crypto.ts';
import { TooManyRequestsError, UnauthenticatedError } from '../../lib/errors.ts';
import { ADMIN_ROLE, ADMIN_SCOPE, type Principal } from './principal.ts';
import { recordSecurityEvent } from './security-events.ts';
import { releaseAttempt, reserveAttempt, type ThrottleKey } from './throttle.ts';
import { TOKEN_TTL_SECONDS, type TokenIssuer } from './tokens.ts';

export interface TokenResponse {
  access_token: string;
  token_type: 'bearer';
  expires_in: number;
}

/** Sessions, tokens and the resolution of a request's credentials into a Principal. */
export class AuthService {
  private readonly knex: Knex;
  private readonly tokens: TokenIssuer;

  constructor(deps: { knex: Knex; tokens: TokenIssuer }) {
    this.knex = deps.knex;
    this.tokens = deps.tokens;
  }

  async passwordLogin(ctx: Context, username: string, password: string): Promise<TokenResponse> {
    const account: ThrottleKey = { kind: 'account', value: username };
    const address: ThrottleKey = { kind: 'address', value: ctx.ip || 'unknown' };
    // Counted before the password is checked (see throttle.ts): a burst cannot outrun the limit.
    const reserved = await reserveAttempt(this.knex, [account, address]);
    if (!reserved.allowed) {
      await recordSecurityEvent(this.knex, ctx, { type: 'LOGIN_THROTTLED', outcome: 'failure', actorUsername: username });
      throw new TooManyRequestsError(`Too many failed sign-ins; try again in ${reserved.waitSeconds} s`, reserved.waitSeconds);
    }
    const user = await findUserByUsername(this.knex, username);
    const ok = await verifyPassword(password, user?.password_hash ?? null);
    if (!user || !ok || !user.active) {
      await recordSecurityEvent(this.knex, ctx, {
        type: 'LOGIN_FAILED',
        outcome: 'failure',
        actorId: user?.id,
        actorUsername: username,
        detail: { reason: !user ? 'unknown_user' : !ok ? 'bad_password' : 'inactive' },
      });
      throw new UnauthenticatedError('Invalid username or password');
    }
    await releaseAttempt(this.knex, account, address);
    const token = await this.openSession(user, 'password');
    await recordSecurityEvent(this.knex, ctx, { type: 'LOGIN', outcome: 'success', actorId: user.id, actorUsername: user.username });
    return token;
  }

  /** A new session (its id is the token's sid) and an access token bound to it. */
  async openSession(user: UserRow, via: 'password' | 'oidc'): Promise<TokenResponse> {
    const sid = randomUUID();
    await this.knex('sessions').insert({ id: sid, user_id: user.id, via, expires_at: new Date(Date.now() + TOKEN_TTL_SECONDS * 1000) });
    await this.knex('users').where({ id: user.id }).update({ last_login_at: this.knex.fn.now() });
    const { roles } = await loadAccess(this.knex, user.id);
    const { token, expiresIn } = await this.tokens.issue({
      sub: user.id,
      roles,
      scope: roles.includes(ADMIN_ROLE) ? [ADMIN_SCOPE] : [],
      sid,
    });
    return { access_token: token, token_type: 'bearer', expires_in: expiresIn };
  }

  async revokeSession(sid: string): Promise<void> {
    await this.knex('sessions').where({ id: sid }).whereNull('revoked_at').update({ revoked_at: this.knex.fn.now() });
  }

  /**
   * Whether a principal resolved earlier may still act: its session not revoked or expired and its
   * user active, or its API key not revoked. Long-lived answers (log streams) ask this as they go.
   */
  async isStillValid(principal: Principal): Promise<boolean> {
    if (principal.kind === 'api_key') {
      return !!(await this.knex('api_keys').where({ id: principal.apiKeyId, active: true }).first('id'));
    }
    const row = await this.knex('sessions as s')
      .join('users as u', 'u.id', 's.user_id')
      .where({ 's.id': principal.sessionId, 'u.active': true })
      .whereNull('s.revoked_at')
      .where('s.expires_at', '>', this.knex.fn.now())
      .first('s.id');
    return !!row;
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
    const { rows } = await this.knex.raw(
      `select u.id, u.username, u.active, s.revoked_at, s.expires_at,
              coalesce(array_agg(distinct r.name) filter (where r.name is not null), '{}') as roles,
              coalesce(array_agg(distinct rp.permission) filter (where rp.permission is not null), '{}') as permissions
       from sessions s
       join users u on u.id = s.user_id
       left join user_roles ur on ur.user_id = u.id
       left join roles r on r.id = ur.role_id
       left join role_permissions rp on rp.role_id = r.id
       where s.id = ? and s.user_id = ?
       group by u.id, s.id`,
      [claims.sid, claims.sub],
    );
    const row = rows[0] as
      | { id: string; username: string; active: boolean; revoked_at: Date | null; expires_at: Date; roles: string[]; permissions: string[] }
      | undefined;
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

  private async resolveApiKey(raw: string): Promise<Principal> {
    // An expired key is refused exactly like a revoked one.
    const key = await this.knex('api_keys')
      .where({ key_hash: sha256Hex(raw), active: true })
      .where((q) => q.whereNull('expires_at').orWhereRaw('expires_at > now()'))
      .first();
    if (!key) throw new UnauthenticatedError('The API key is invalid, revoked or expired');
    void this.knex('api_keys')
      .where({ id: key.id })
      .update({ last_used_at: this.knex.fn.now() })
      .catch(() => undefined);
    return {
      kind: 'api_key',
      userId: null,
      username: `api-key:${key.name}`,
      roles: [],
      permissions: new Set(key.permissions as string[]),
      scopes: [],
      apiKeyId: key.id,
    };
  }
}

export function authenticate(auth: AuthService) {
  return async (ctx: Context, next: () => Promise<unknown>): Promise<void> => {
    ctx.state.principal = await auth.resolve(ctx);
    await next();
  };
}
