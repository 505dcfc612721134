/**
 * Who may act: the questions whose answer spans users, sessions and roles, each answered in one
 * round trip (the first is asked on every request). Read-only: each of these tables is written
 * by its own store (users.ts, sessions.ts, roles.ts) and by nothing here.
 */
import type { Knex } from 'knex';
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
