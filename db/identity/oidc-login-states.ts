/**
 * The OIDC login-state store: the only code that reads or writes `oidc_login_states`. One row per
 * started sign-in, keyed by the `state` sent to the provider, consumed by the first callback that
 * presents it.
 */
import type { Knex } from 'knex';

export interface OidcLoginStateRecord {
  state: string;
  nonce: string;
  code_verifier: string;
  created_at: Date;
  consumed_at: Date | null;
}

export class OidcLoginStateStore {
  private readonly knex: Knex;

  constructor(knex: Knex) {
    this.knex = knex;
  }

  async create(row: Pick<OidcLoginStateRecord, 'state' | 'nonce' | 'code_verifier'>): Promise<void> {
    await this.knex('oidc_login_states').insert(row);
  }

  /** Deletes rows created before `cutoff`, consumed or not. */
  async purgeCreatedBefore(cutoff: Date): Promise<void> {
    await this.knex('oidc_login_states').where('created_at', '<', cutoff).delete();
  }

  /**
   * Marks the state consumed when it is unconsumed and created at or after `notBefore`, in one
   * statement: of two callbacks presenting one state, at most one gets the row.
   */
  async consume(state: string, notBefore: Date): Promise<OidcLoginStateRecord | undefined> {
    const [row] = await this.knex<OidcLoginStateRecord>('oidc_login_states')
      .where({ state })
      .whereNull('consumed_at')
      .where('created_at', '>=', notBefore)
      .update({ consumed_at: this.knex.fn.now() as unknown as Date })
      .returning('*');
    return row as OidcLoginStateRecord | undefined;
  }

  async find(state: string): Promise<OidcLoginStateRecord | undefined> {
    return this.knex<OidcLoginStateRecord>('oidc_login_states').where({ state }).first();
  }
}
