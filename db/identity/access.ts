/**
 * Who may act: the questions whose answer spans users, sessions, API keys and roles, each answered
 * in one round trip (the session and key lookups are asked on every request). Read-only: each of
 * these tables is written by its own store (users.ts, sessions.ts, api-keys.ts, roles.ts) and by
 * nothing here.
 */
import type { Knex } from 'knex';
import { isUuid } from '../../lib/ids.ts';
import { preparedQuery } from '../prepared.ts';

/** A session with its user and the user's live roles and permissions. */
export interface SessionAccess {
  id: string;
  username: string;
  active: boolean;
  revoked_at: Date | null;
  expires_at: Date;
  roles: string[];
  permissions: string[];
}

/**
 * An API key with the person it acts for: the user at the root of its chain of creators (a key
 * made by a key acts for that key's creator, and so on up to a person), with their live roles and
 * permissions. The caller decides what an unusable key or a missing, inactive creator means.
 */
export interface ApiKeyAccess {
  id: string;
  name: string;
  /** The key's own permissions, as granted at creation. */
  permissions: string[];
  /** This key and every key above it are neither revoked nor expired (the database's clock decides). */
  usable: boolean;
  /** The person at the root; null when the chain ends without one (the user was deleted). */
  user_id: string | null;
  username: string | null;
  user_active: boolean;
  roles: string[];
  user_permissions: string[];
}

/**
 * The key (chosen by `$1`) and the keys that made it, up to the first made by a person; the depth
 * bound only guards against a cycle that creation order rules out.
 */
const apiKeyAccessSql = (where: string) => `
  with recursive chain as (
    select k.id, k.name, k.permissions, k.created_by, k.created_by_api_key_id,
           (k.active and (k.expires_at is null or k.expires_at > now())) as usable, 0 as depth
    from api_keys k where ${where}
    union all
    select p.id, p.name, p.permissions, p.created_by, p.created_by_api_key_id,
           (p.active and (p.expires_at is null or p.expires_at > now())), c.depth + 1
    from chain c join api_keys p on p.id = c.created_by_api_key_id
    where c.depth < 32
  ),
  root as (select created_by, created_by_api_key_id from chain order by depth desc limit 1)
  select k.id, k.name, k.permissions,
         (select bool_and(usable) from chain) as usable,
         u.id as user_id, u.username, coalesce(u.active, false) as user_active,
         coalesce(array_agg(distinct r.name) filter (where r.name is not null), '{}') as roles,
         coalesce(array_agg(distinct rp.permission) filter (where rp.permission is not null), '{}') as user_permissions
  from chain k
  cross join root
  left join users u on u.id = root.created_by and root.created_by_api_key_id is null
  left join user_roles ur on ur.user_id = u.id
  left join roles r on r.id = ur.role_id
  left join role_permissions rp on rp.role_id = r.id
  where k.depth = 0
  group by k.id, k.name, k.permissions, u.id`;

export class AccessStore {
  private readonly knex: Knex;

  constructor(knex: Knex) {
    this.knex = knex;
  }

  /**
   * The session `sessionId` of user `userId` (`id` is the user's), whatever its state: the caller
   * decides what revoked, expired or inactive means. Roles are read now, so a role change applies
   * to the next request, not the next sign-in.
   */
  async ofSession(sessionId: string, userId: string): Promise<SessionAccess | undefined> {
    const rows = await preparedQuery<SessionAccess>(
      this.knex,
      'identity.session_access',
      `select u.id, u.username, u.active, s.revoked_at, s.expires_at,
              coalesce(array_agg(distinct r.name) filter (where r.name is not null), '{}') as roles,
              coalesce(array_agg(distinct rp.permission) filter (where rp.permission is not null), '{}') as permissions
       from sessions s
       join users u on u.id = s.user_id
       left join user_roles ur on ur.user_id = u.id
       left join roles r on r.id = ur.role_id
       left join role_permissions rp on rp.role_id = r.id
       where s.id = $1 and s.user_id = $2
       group by u.id, s.id`,
      [sessionId, userId],
    );
    return rows[0];
  }

  /** A user's live roles and permissions, without a session (work started on their behalf, such as a schedule's run). */
  async ofUser(userId: string): Promise<{ active: boolean; roles: string[]; permissions: string[] } | undefined> {
    const { rows } = await this.knex.raw<{ rows: Array<{ active: boolean; roles: string[]; permissions: string[] }> }>(
      `select u.active,
              coalesce(array_agg(distinct r.name) filter (where r.name is not null), '{}') as roles,
              coalesce(array_agg(distinct rp.permission) filter (where rp.permission is not null), '{}') as permissions
       from users u
       left join user_roles ur on ur.user_id = u.id
       left join roles r on r.id = ur.role_id
       left join role_permissions rp on rp.role_id = r.id
       where u.id = ?
       group by u.id`,
      [userId],
    );
    return rows[0];
  }

  /** The key whose SHA-256 is `keyHash`, with the person it acts for; asked on every request that carries a key. */
  async ofApiKeyHash(keyHash: string): Promise<ApiKeyAccess | undefined> {
    const rows = await preparedQuery<ApiKeyAccess>(this.knex, 'identity.api_key_access', apiKeyAccessSql('k.key_hash = $1'), [keyHash]);
    return rows[0];
  }

  /** The same by the key's id (a log stream asking again, a schedule made with the key). */
  async ofApiKey(id: string): Promise<ApiKeyAccess | undefined> {
    if (!isUuid(id)) return undefined;
    const rows = await preparedQuery<ApiKeyAccess>(this.knex, 'identity.api_key_access_by_id', apiKeyAccessSql('k.id = $1'), [id]);
    return rows[0];
  }

  /** The session is neither revoked nor expired, and its user is active. */
  async sessionIsLive(sessionId: string): Promise<boolean> {
    const row = await this.knex('sessions as s')
      .join('users as u', 'u.id', 's.user_id')
      .where({ 's.id': sessionId, 'u.active': true })
      .whereNull('s.revoked_at')
      .where('s.expires_at', '>', this.knex.fn.now())
      .first('s.id');
    return !!row;
  }

  /** How many active users other than `userId` hold the role named exactly `roleName`. */
  async activeHoldersExcept(roleName: string, userId: string): Promise<number> {
    const [{ n }] = await this.knex('user_roles as ur')
      .join('roles as r', 'r.id', 'ur.role_id')
      .join('users as u', 'u.id', 'ur.user_id')
      .where('r.name', roleName)
      .where('u.active', true)
      .whereNot('u.id', userId)
      .count<{ n: string }[]>({ n: '*' });
    return Number(n);
  }
}
