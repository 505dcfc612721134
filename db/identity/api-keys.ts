/**
 * The API key store: the only code that writes `api_keys`. Only a key's SHA-256 is stored;
 * revoking is a soft delete (the row stays for audit). Whether a key may act, and for whom, is
 * read with its creators' rows in one query (AccessStore.ofApiKeyHash).
 */
import type { Knex } from 'knex';

export interface ApiKeyRecord {
  id: string;
  name: string;
  key_hash: string;
  key_prefix: string;
  permissions: string[];
  active: boolean;
  created_by: string | null;
  created_at: Date;
  revoked_at: Date | null;
  last_used_at: Date | null;
  expires_at: Date | null;
  created_by_username: string | null;
  created_by_api_key_id: string | null;
}

export type NewApiKey = Pick<
  ApiKeyRecord,
  'name' | 'key_hash' | 'key_prefix' | 'permissions' | 'expires_at' | 'created_by' | 'created_by_username' | 'created_by_api_key_id'
>;

export class ApiKeyStore {
  private readonly knex: Knex;

  constructor(knex: Knex) {
    this.knex = knex;
  }

  /** Every key, revoked ones too, newest first. */
  async list(): Promise<ApiKeyRecord[]> {
    return this.knex<ApiKeyRecord>('api_keys').orderBy([
      { column: 'created_at', order: 'desc' },
      { column: 'id', order: 'desc' },
    ]);
  }

  async create(key: NewApiKey): Promise<ApiKeyRecord> {
    const [row] = await this.knex<ApiKeyRecord>('api_keys').insert(key).returning('*');
    return row as ApiKeyRecord;
  }

  /** Revokes an active key; undefined when it is unknown or already revoked. */
  async revoke(id: string): Promise<ApiKeyRecord | undefined> {
    const [row] = await this.knex<ApiKeyRecord>('api_keys')
      .where({ id, active: true })
      .update({ active: false, revoked_at: this.knex.fn.now() as unknown as Date })
      .returning('*');
    return row as ApiKeyRecord | undefined;
  }

  async recordUse(id: string): Promise<void> {
    await this.knex('api_keys').where({ id }).update({ last_used_at: this.knex.fn.now() });
  }
}
