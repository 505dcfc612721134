import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { Keyring, SecretBinding } from '../../lib/crypto.ts';
import { ConflictError, NotFoundError } from '../../lib/errors.ts';
import { isUuid } from '../../lib/ids.ts';
import { isUniqueViolation } from '../errors.ts';
import { reencryptColumn, type SecretColumnCount } from '../secret-column.ts';

/**
 * How a row's Superset is reached, its password decrypted, and a version that changes whenever the
 * row does. The Superset client pool takes it as its ResolvedConnection (lib/superset/pool.ts; tsc
 * holds the two together where the pool is built, api/bootstrap.ts and worker/create-worker.ts): a
 * store states its rows and does not import the Superset client.
 */
export interface EnvironmentConnection {
  version: string;
  connection: { baseUrl: string; username: string; password: string; verifyTls: boolean; timeoutSeconds: number };
}

export interface EnvironmentRow {
  id: string;
  name: string;
  base_url: string;
  username: string;
  password_encrypted: string;
  verify_tls: boolean;
  timeout_seconds: number;
  description: string | null;
  /** Deploys of a pinned git commit into it wait for another person's approval. */
  protected: boolean;
  created_at: Date;
  updated_at: Date;
}

/** The columns a caller may set, the password in plain text: the store encrypts it, bound to the row. */
export interface EnvironmentFields extends Pick<
  EnvironmentRow,
  'name' | 'base_url' | 'username' | 'verify_tls' | 'timeout_seconds' | 'description' | 'protected'
> {
  password: string;
}

/** A new environment: what has a column default may be left out. */
export type NewEnvironment = Pick<EnvironmentFields, 'name' | 'base_url' | 'username' | 'password'> & Partial<EnvironmentFields>;

const PASSWORD = { table: 'environments', column: 'password_encrypted' } as const;
const passwordOf = (rowId: string): SecretBinding => ({ ...PASSWORD, rowId });

/**
 * The `environments` table: the one owner of its SQL, and the one way to look an environment up.
 * The password is encrypted with the keyring bound to its row, and decrypted only by `connection`.
 */
export class EnvironmentStore {
  private readonly knex: Knex;
  private readonly keyring: Keyring;

  constructor(knex: Knex, keyring: Keyring) {
    this.knex = knex;
    this.keyring = keyring;
  }

  /** undefined for an unknown or malformed id (both are "no such environment"). */
  async find(id: string): Promise<EnvironmentRow | undefined> {
    if (!isUuid(id)) return undefined;
    return this.knex<EnvironmentRow>('environments').where({ id }).first();
  }

  /** NotFoundError (404, "<what> '<id>' not found") when unknown. */
  async get(id: string, what = 'Environment'): Promise<EnvironmentRow> {
    const row = await this.find(id);
    if (!row) throw new NotFoundError(what, id);
    return row;
  }

  /** Names of the given environments (unknown ids are left out). */
  async namesById(ids: readonly string[]): Promise<Map<string, string>> {
    const valid = ids.filter(isUuid);
    if (!valid.length) return new Map();
    const rows = await this.knex<EnvironmentRow>('environments').whereIn('id', valid).select('id', 'name');
    return new Map(rows.map((r) => [r.id, r.name]));
  }

  /** Names and whether each is protected, by id: what creating a task needs to know of its environments. */
  async labelsById(ids: readonly string[]): Promise<Map<string, { name: string; protected: boolean }>> {
    const valid = ids.filter(isUuid);
    if (!valid.length) return new Map();
    const rows = await this.knex<EnvironmentRow>('environments').whereIn('id', valid).select('id', 'name', 'protected');
    return new Map(rows.map((r) => [r.id, { name: r.name, protected: r.protected === true }]));
  }

  /** A page, ordered by name (case-insensitive), with the exact total. */
  async list(page: number, pageSize: number): Promise<{ rows: EnvironmentRow[]; total: number }> {
    const [{ count }] = await this.knex('environments').count<{ count: string }[]>({ count: '*' });
    const rows = await this.knex<EnvironmentRow>('environments')
      .orderByRaw('lower(name)')
      .orderBy('id')
      .offset((page - 1) * pageSize)
      .limit(pageSize);
    return { rows, total: Number(count) };
  }

  /** ConflictError (409) when the name is taken (names are unique case-insensitively). */
  async create(fields: NewEnvironment): Promise<EnvironmentRow> {
    // The id is chosen here so that the password's ciphertext can be bound to it.
    const { password, ...rest } = fields;
    const id = randomUUID();
    try {
      const [row] = await this.knex<EnvironmentRow>('environments')
        .insert({ ...rest, id, password_encrypted: this.keyring.encrypt(password, passwordOf(id)) })
        .returning('*');
      return row;
    } catch (err) {
      throw nameConflict(err, fields.name);
    }
  }

  /**
   * The row before and after the change; NotFoundError when unknown, ConflictError when the new
   * name is taken. `check` sees the current row under a row lock before anything is written, so a
   * refusal (such as a secret sent elsewhere) saves nothing and no concurrent change slips in.
   */
  async update(
    id: string,
    patch: Partial<EnvironmentFields>,
    check?: (before: EnvironmentRow) => void,
  ): Promise<{ before: EnvironmentRow; row: EnvironmentRow }> {
    try {
      return await this.knex.transaction(async (trx) => {
        const before = isUuid(id) ? await trx<EnvironmentRow>('environments').where({ id }).forUpdate().first() : undefined;
        if (!before) throw new NotFoundError('Environment', id);
        check?.(before);
        const { password, ...rest } = patch;
        const secret = password === undefined ? {} : { password_encrypted: this.keyring.encrypt(password, passwordOf(id)) };
        const [row] = await trx<EnvironmentRow>('environments')
          .where({ id })
          .update({ ...rest, ...secret, updated_at: trx.fn.now() as unknown as Date })
          .returning('*');
        return { before, row: row! };
      });
    } catch (err) {
      throw nameConflict(err, patch.name);
    }
  }

  /** Deletes the row (its database mappings go with it); NotFoundError when unknown. */
  async remove(id: string): Promise<void> {
    const deleted = isUuid(id) ? await this.knex('environments').where({ id }).delete() : 0;
    if (!deleted) throw new NotFoundError('Environment', id);
  }

  /**
   * Resolves an environment id to how its Superset is reached, for the Superset client pool:
   * the password decrypted, and a version that changes whenever the row does.
   */
  connections(): (id: string) => Promise<EnvironmentConnection> {
    return async (id) => this.connection(await this.get(id));
  }

  /** How a row's Superset is reached, its password decrypted (CiphertextError when it does not decrypt for this row). */
  connection(row: EnvironmentRow): EnvironmentConnection {
    return {
      version: `${new Date(row.updated_at).getTime()}:${row.password_encrypted}`,
      connection: {
        baseUrl: row.base_url,
        username: row.username,
        password: this.keyring.decrypt(row.password_encrypted, passwordOf(row.id)),
        verifyTls: row.verify_tls,
        timeoutSeconds: row.timeout_seconds,
      },
    };
  }

  /** Every password not yet under the keyring's current key, encrypted again with it (`npm run secrets:reencrypt`). */
  reencryptSecrets(): Promise<SecretColumnCount> {
    return reencryptColumn(this.knex, this.keyring, PASSWORD);
  }
}

function nameConflict(err: unknown, name: string | undefined): unknown {
  return isUniqueViolation(err) ? new ConflictError(`An environment named '${name}' already exists`) : err;
}
