import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { Keyring, SecretBinding } from '../../lib/crypto.ts';
import { ConflictError, NotFoundError } from '../../lib/errors.ts';
import { isUniqueViolation } from '../errors.ts';
import { reencryptColumn, type SecretColumnCount } from '../secret-column.ts';

export type GitProviderKind = 'github' | 'gitlab' | 'gitea';

export interface GitConfigRow {
  id: string;
  name: string;
  provider: GitProviderKind;
  base_url: string;
  owner: string;
  default_branch: string;
  pat_encrypted: string;
  created_at: Date;
  updated_at: Date;
}

export interface GitConfigInput {
  name: string;
  provider: GitProviderKind;
  base_url: string;
  owner: string;
  default_branch: string;
  pat: string;
}

const PAT = { table: 'git_configs', column: 'pat_encrypted' } as const;
const patOf = (rowId: string): SecretBinding => ({ ...PAT, rowId });

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The git_configs table. The token is encrypted with the keyring (bound to its row) on the way in and decrypted
 * only by `token(id)`, which activities and the API's provider calls use; no other method
 * returns it.
 */
export class GitConfigStore {
  private readonly knex: Knex;
  private readonly keyring: Keyring;

  constructor(knex: Knex, keyring: Keyring) {
    this.knex = knex;
    this.keyring = keyring;
  }

  async list(): Promise<GitConfigRow[]> {
    return this.knex<GitConfigRow>('git_configs').orderByRaw('lower(name)').orderBy('id');
  }

  async find(id: string): Promise<GitConfigRow | undefined> {
    if (!UUID.test(id)) return undefined;
    return this.knex<GitConfigRow>('git_configs').where({ id }).first();
  }

  /** NotFoundError (404) for an unknown or malformed id. */
  async get(id: string): Promise<GitConfigRow> {
    const row = await this.find(id);
    if (!row) throw new NotFoundError('Git config', id);
    return row;
  }

  /** The decrypted token of a config; only for the provider call or git operation that needs it now. */
  token(row: GitConfigRow): string {
    return this.keyring.decrypt(row.pat_encrypted, patOf(row.id));
  }

  async create(input: GitConfigInput): Promise<GitConfigRow> {
    const { pat, ...rest } = input;
    // The id is chosen here so that the token's ciphertext can be bound to it.
    const id = randomUUID();
    try {
      const [row] = await this.knex<GitConfigRow>('git_configs')
        .insert({ ...rest, id, pat_encrypted: this.keyring.encrypt(pat, patOf(id)) })
        .returning('*');
      return row;
    } catch (err) {
      if (isUniqueViolation(err)) throw new ConflictError(`A git config named '${input.name}' already exists`);
      throw err;
    }
  }

  async update(id: string, patch: Partial<GitConfigInput>): Promise<GitConfigRow> {
    const { pat, ...rest } = patch;
    const changes: Partial<GitConfigRow> = { ...rest };
    if (pat !== undefined) {
      if (!UUID.test(id)) throw new NotFoundError('Git config', id);
      changes.pat_encrypted = this.keyring.encrypt(pat, patOf(id));
    }
    try {
      const [row] = await this.knex<GitConfigRow>('git_configs')
        .where({ id })
        .update({ ...changes, updated_at: this.knex.fn.now() as unknown as Date })
        .returning('*');
      if (!row) throw new NotFoundError('Git config', id);
      return row;
    } catch (err) {
      if (isUniqueViolation(err)) throw new ConflictError(`A git config named '${patch.name}' already exists`);
      throw err;
    }
  }

  /** Every token not yet under the keyring's current key, encrypted again with it (`npm run secrets:reencrypt`). */
  reencryptSecrets(): Promise<SecretColumnCount> {
    return reencryptColumn(this.knex, this.keyring, PAT);
  }

  async remove(id: string): Promise<boolean> {
    if (!UUID.test(id)) return false;
    return (await this.knex('git_configs').where({ id }).delete()) > 0;
  }
}
