/**
 * The user store: the only code that reads or writes `users`. Usernames are unique
 * case-insensitively (index `users_username_lower`), so every lookup by name compares lower().
 * Deleting a user deletes their sessions and role assignments by cascade.
 */
import type { Knex } from 'knex';

export interface UserRecord {
  id: string;
  username: string;
  email: string | null;
  display_name: string | null;
  password_hash: string | null;
  auth_source: 'local' | 'oidc';
  oidc_issuer: string | null;
  oidc_subject: string | null;
  active: boolean;
  last_login_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export interface NewUser {
  username: string;
  password_hash: string | null;
  email?: string | null;
  display_name?: string | null;
  active?: boolean;
  auth_source?: 'local' | 'oidc';
  oidc_issuer?: string;
  oidc_subject?: string;
}

/** Fields an update may change; the store sets `updated_at` itself. */
export type UserPatch = Partial<Pick<UserRecord, 'password_hash' | 'email' | 'display_name' | 'active'>>;

export class UserStore {
  private readonly knex: Knex;

  constructor(knex: Knex) {
    this.knex = knex;
  }

  async byId(id: string): Promise<UserRecord | undefined> {
    return this.knex<UserRecord>('users').where({ id }).first();
  }

  async byUsername(username: string): Promise<UserRecord | undefined> {
    return this.knex<UserRecord>('users').whereRaw('lower(username) = lower(?)', [username]).first();
  }

  /** The account of an OIDC subject; `forUpdate` locks it until the caller's transaction ends. */
  async byOidcSubject(issuer: string, subject: string, opts: { forUpdate?: boolean } = {}): Promise<UserRecord | undefined> {
    const q = this.knex<UserRecord>('users').where({ oidc_issuer: issuer, oidc_subject: subject });
    if (opts.forUpdate) q.forUpdate();
    return q.first();
  }

  /** A page ordered by username then id; `search` matches username, e-mail or display name (case-insensitive). */
  async list(search: string | undefined, page: number, pageSize: number): Promise<{ items: UserRecord[]; total: number }> {
    const base = this.knex<UserRecord>('users');
    if (search)
      base.where((b) => {
        b.whereILike('username', `%${search}%`).orWhereILike('email', `%${search}%`).orWhereILike('display_name', `%${search}%`);
      });
    const [{ n }] = await base.clone().count<{ n: string }[]>({ n: '*' });
    const items: UserRecord[] = await base
      .orderBy([{ column: 'username' }, { column: 'id' }])
      .limit(pageSize)
      .offset((page - 1) * pageSize);
    return { items, total: Number(n) };
  }

  async create(user: NewUser): Promise<UserRecord> {
    const [row] = await this.knex<UserRecord>('users').insert(user).returning('*');
    return row as UserRecord;
  }

  /** Changes the given fields and `updated_at` (also when `patch` is empty); undefined for an unknown id. */
  async update(id: string, patch: UserPatch): Promise<UserRecord | undefined> {
    const [row] = await this.knex<UserRecord>('users')
      .where({ id })
      .update({ ...patch, updated_at: this.knex.fn.now() as unknown as Date })
      .returning('*');
    return row as UserRecord | undefined;
  }

  async recordLogin(id: string): Promise<void> {
    await this.knex('users').where({ id }).update({ last_login_at: this.knex.fn.now() });
  }

  /** Deletes the user; sessions and role assignments go with it (foreign keys cascade). */
  async delete(id: string): Promise<void> {
    await this.knex('users').where({ id }).delete();
  }

  /** `base`, else `base-2`, `base-3`, ... : the first name no account holds (case-insensitive). */
  async freeUsername(base: string): Promise<string> {
    if (!(await this.byUsername(base))) return base;
    const taken = new Set(
      (
        await this.knex('users')
          .whereRaw('lower(username) like ? escape ?', [`${base.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}-%`, '\\'])
          .pluck('username')
      ).map((u: string) => u.toLowerCase()),
    );
    for (let n = 2; ; n++) {
      const candidate = `${base}-${n}`;
      if (!taken.has(candidate.toLowerCase())) return candidate;
    }
  }
}
