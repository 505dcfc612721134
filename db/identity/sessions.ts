/**
 * The session store: the only code that writes `sessions`. A session's id is the `sid` of the
 * access tokens issued for it; revoking it ends those tokens at once.
 */
import type { Knex } from 'knex';

export interface SessionRecord {
  id: string;
  user_id: string;
  via: 'password' | 'oidc';
  created_at: Date;
  expires_at: Date;
  revoked_at: Date | null;
}

export class SessionStore {
  private readonly knex: Knex;

  constructor(knex: Knex) {
    this.knex = knex;
  }

  async open(session: Pick<SessionRecord, 'id' | 'user_id' | 'via' | 'expires_at'>): Promise<void> {
    await this.knex('sessions').insert(session);
  }

  async revoke(id: string): Promise<void> {
    await this.knex('sessions').where({ id }).whereNull('revoked_at').update({ revoked_at: this.knex.fn.now() });
  }

  /** Ends every open session of a user (new password, deactivation). */
  async revokeAllOf(userId: string): Promise<void> {
    await this.knex('sessions').where({ user_id: userId }).whereNull('revoked_at').update({ revoked_at: this.knex.fn.now() });
  }
}
