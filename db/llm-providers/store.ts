import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { Config } from '../../lib/config.ts';
import type { Keyring, SecretBinding } from '../../lib/crypto.ts';
import { ConflictError, NotFoundError } from '../../lib/errors.ts';
import { isUuid } from '../../lib/ids.ts';
import { isUniqueViolation } from '../errors.ts';
import { reencryptColumn, type SecretColumnCount } from '../secret-column.ts';

/** The provider the `LLM_BASE_URL`, `LLM_API_KEY` and `LLM_MODEL` variables describe. */
export const DEFAULT_PROVIDER_ID = 'default';

export interface LlmProviderRow {
  id: string;
  name: string;
  base_url: string;
  model: string;
  api_key_encrypted: string;
  timeout_seconds: number;
  sample_data_env_ids: string[];
  description: string | null;
  created_at: Date;
  updated_at: Date;
}

/** The columns a caller may set, the key in plain text: the store encrypts it, bound to the row. */
export interface LlmProviderFields extends Pick<
  LlmProviderRow,
  'name' | 'base_url' | 'model' | 'timeout_seconds' | 'sample_data_env_ids' | 'description'
> {
  api_key: string;
}

/** A new provider: what has a column default may be left out. */
export type NewLlmProvider = Pick<LlmProviderFields, 'name' | 'base_url' | 'model' | 'api_key'> & Partial<LlmProviderFields>;

const API_KEY = { table: 'llm_providers', column: 'api_key_encrypted' } as const;
const apiKeyOf = (rowId: string): SecretBinding => ({ ...API_KEY, rowId });

/** How an activity reaches a provider: read by id inside the activity, never passed through a workflow. */
export interface LlmConnection {
  id: string;
  name: string;
  baseUrl: string;
  model: string;
  apiKey: string;
  timeoutSeconds: number;
  /** Environments whose sample rows may be sent to this provider. */
  sampleDataEnvIds: string[];
}

/** The `llm_providers` table: the one owner of its SQL; the key is decrypted only by `connection`. */
export class LlmProviderStore {
  private readonly knex: Knex;
  private readonly keyring: Keyring;

  constructor(knex: Knex, keyring: Keyring) {
    this.knex = knex;
    this.keyring = keyring;
  }

  async find(id: string): Promise<LlmProviderRow | undefined> {
    if (!isUuid(id)) return undefined;
    return this.knex<LlmProviderRow>('llm_providers').where({ id }).first();
  }

  async get(id: string): Promise<LlmProviderRow> {
    const row = await this.find(id);
    if (!row) throw new NotFoundError('LLM provider', id);
    return row;
  }

  async list(page: number, pageSize: number): Promise<{ rows: LlmProviderRow[]; total: number }> {
    const [{ count }] = await this.knex('llm_providers').count<{ count: string }[]>({ count: '*' });
    const rows = await this.knex<LlmProviderRow>('llm_providers')
      .orderByRaw('lower(name)')
      .orderBy('id')
      .offset((page - 1) * pageSize)
      .limit(pageSize);
    return { rows, total: Number(count) };
  }

  async create(fields: NewLlmProvider): Promise<LlmProviderRow> {
    // The id is chosen here so that the key's ciphertext can be bound to it.
    const { api_key, ...rest } = fields;
    const id = randomUUID();
    try {
      const [row] = await this.knex<LlmProviderRow>('llm_providers')
        .insert({ ...rest, id, api_key_encrypted: this.keyring.encrypt(api_key, apiKeyOf(id)) })
        .returning('*');
      return row;
    } catch (err) {
      throw nameConflict(err, fields.name);
    }
  }

  /** Changes the given fields with the row locked while `check` looks at its previous values. */
  async update(
    id: string,
    patch: Partial<LlmProviderFields>,
    check: (before: LlmProviderRow) => void,
  ): Promise<{ row: LlmProviderRow; before: LlmProviderRow }> {
    try {
      return await this.knex.transaction(async (trx) => {
        const before = isUuid(id) ? await trx<LlmProviderRow>('llm_providers').where({ id }).forUpdate().first() : undefined;
        if (!before) throw new NotFoundError('LLM provider', id);
        check(before);
        const { api_key, ...rest } = patch;
        const secret = api_key === undefined ? {} : { api_key_encrypted: this.keyring.encrypt(api_key, apiKeyOf(id)) };
        const [row] = await trx<LlmProviderRow>('llm_providers')
          .where({ id })
          .update({ ...rest, ...secret, updated_at: this.knex.fn.now() as unknown as Date })
          .returning('*');
        return { row, before };
      });
    } catch (err) {
      throw nameConflict(err, patch.name);
    }
  }

  async remove(id: string): Promise<LlmProviderRow> {
    const [row] = isUuid(id) ? await this.knex<LlmProviderRow>('llm_providers').where({ id }).delete().returning('*') : [];
    if (!row) throw new NotFoundError('LLM provider', id);
    return row;
  }

  /**
   * How to reach a provider: a stored one by id (its key decrypted), or `default` from the
   * LLM_* variables. NotFoundError when unknown or, for `default`, not configured.
   */
  async connection(id: string, config: Pick<Config, 'LLM_BASE_URL' | 'LLM_API_KEY' | 'LLM_MODEL'>): Promise<LlmConnection> {
    if (id === DEFAULT_PROVIDER_ID) {
      const d = defaultProvider(config);
      if (!d) throw new NotFoundError('LLM provider', `${DEFAULT_PROVIDER_ID} (LLM_BASE_URL and LLM_MODEL are not set)`);
      return { ...d, apiKey: config.LLM_API_KEY ?? '' };
    }
    const row = await this.get(id);
    return {
      id: row.id,
      name: row.name,
      baseUrl: row.base_url,
      model: row.model,
      apiKey: this.keyring.decrypt(row.api_key_encrypted, apiKeyOf(row.id)),
      timeoutSeconds: row.timeout_seconds,
      sampleDataEnvIds: row.sample_data_env_ids ?? [],
    };
  }

  /** Every key not yet under the keyring's current key, encrypted again with it (`npm run secrets:reencrypt`). */
  reencryptSecrets(): Promise<SecretColumnCount> {
    return reencryptColumn(this.knex, this.keyring, API_KEY);
  }

  /** Whether the provider exists (a stored one, or `default` when configured), without touching its key. */
  async exists(id: string, config: Pick<Config, 'LLM_BASE_URL' | 'LLM_MODEL'>): Promise<{ name: string; model: string } | undefined> {
    if (id === DEFAULT_PROVIDER_ID) return defaultProvider(config);
    const row = await this.find(id);
    return row ? { name: row.name, model: row.model } : undefined;
  }
}

/** The provider of the LLM_* variables; its sample-data permission is none (set per stored provider instead). */
export function defaultProvider(config: Pick<Config, 'LLM_BASE_URL' | 'LLM_MODEL'>): Omit<LlmConnection, 'apiKey'> | undefined {
  if (!config.LLM_BASE_URL || !config.LLM_MODEL) return undefined;
  return {
    id: DEFAULT_PROVIDER_ID,
    name: 'default (LLM_BASE_URL)',
    baseUrl: config.LLM_BASE_URL,
    model: config.LLM_MODEL,
    timeoutSeconds: 60,
    sampleDataEnvIds: [],
  };
}

function nameConflict(err: unknown, name: string | undefined): unknown {
  return isUniqueViolation(err) ? new ConflictError(`An LLM provider named '${name}' already exists`) : err;
}
