import type { Knex } from 'knex';
import type { DictionaryEntry } from '../../lib/dictionary/entries.ts';
import { ConflictError, NotFoundError } from '../../lib/errors.ts';
import { isUuid } from '../../lib/ids.ts';
import { isUniqueViolation } from '../errors.ts';

export interface SemanticDictionaryRow {
  id: string;
  name: string;
  description: string | null;
  current_version: number;
  created_by: string | null;
  created_at: Date;
  updated_at: Date;
}

export interface DictionaryVersionRow {
  id: string;
  dictionary_id: string;
  version: number;
  filename: string | null;
  format: 'csv' | 'xlsx';
  sha256: string;
  entry_count: number;
  entries: DictionaryEntry[];
  created_by: string | null;
  created_by_username: string | null;
  created_at: Date;
}

/** `review_dictionaries` and `review_dictionary_versions`: trusted semantic dictionaries, admin-managed and versioned. */
export class SemanticDictionaryStore {
  readonly knex: Knex;

  constructor(knex: Knex) {
    this.knex = knex;
  }

  async create(d: { name: string; description: string | null; createdBy: string | null }): Promise<SemanticDictionaryRow> {
    try {
      const [row] = await this.knex('review_dictionaries')
        .insert({ name: d.name, description: d.description, created_by: d.createdBy })
        .returning('*');
      return row as SemanticDictionaryRow;
    } catch (err) {
      if (isUniqueViolation(err)) throw new ConflictError(`A dictionary named '${d.name}' exists`, 'name_taken');
      throw err;
    }
  }

  async list(page: number, pageSize: number): Promise<{ rows: SemanticDictionaryRow[]; total: number }> {
    const [{ count }] = await this.knex('review_dictionaries').count<{ count: string }[]>({ count: '*' });
    const rows = await this.knex<SemanticDictionaryRow>('review_dictionaries')
      .orderByRaw('lower(name)')
      .offset((page - 1) * pageSize)
      .limit(pageSize);
    return { rows, total: Number(count) };
  }

  async get(id: string, trx: Knex = this.knex): Promise<SemanticDictionaryRow> {
    const row = isUuid(id) ? await trx<SemanticDictionaryRow>('review_dictionaries').where({ id }).first() : undefined;
    if (!row) throw new NotFoundError('Dictionary', id);
    return row;
  }

  /** The newest dictionary with a version (what a new session ranks against), if any. */
  async latestUsable(): Promise<SemanticDictionaryRow | undefined> {
    return this.knex<SemanticDictionaryRow>('review_dictionaries').where('current_version', '>', 0).orderBy('updated_at', 'desc').first();
  }

  async versions(id: string): Promise<Array<Omit<DictionaryVersionRow, 'entries'>>> {
    return this.knex('review_dictionary_versions')
      .where({ dictionary_id: id })
      .orderBy('version', 'desc')
      .select(
        'id',
        'dictionary_id',
        'version',
        'filename',
        'format',
        'sha256',
        'entry_count',
        'created_by',
        'created_by_username',
        'created_at',
      );
  }

  async version(id: string, version: number, trx: Knex = this.knex): Promise<DictionaryVersionRow | undefined> {
    return trx<DictionaryVersionRow>('review_dictionary_versions').where({ dictionary_id: id, version }).first();
  }

  /** Adds the next version and makes it current, in `trx` (the caller re-ranks sessions in the same transaction). */
  async addVersion(
    trx: Knex,
    id: string,
    v: {
      filename: string | null;
      format: 'csv' | 'xlsx';
      sha256: string;
      entries: DictionaryEntry[];
      by: { id: string | null; username: string };
    },
  ): Promise<DictionaryVersionRow> {
    const [dict] = await trx('review_dictionaries')
      .where({ id })
      .update({ current_version: trx.raw('current_version + 1'), updated_at: trx.fn.now() })
      .returning('*');
    if (!dict) throw new NotFoundError('Dictionary', id);
    const [row] = await trx('review_dictionary_versions')
      .insert({
        dictionary_id: id,
        version: (dict as SemanticDictionaryRow).current_version,
        filename: v.filename,
        format: v.format,
        sha256: v.sha256,
        entry_count: v.entries.length,
        entries: JSON.stringify(v.entries),
        created_by: v.by.id,
        created_by_username: v.by.username,
      })
      .returning('*');
    return row as DictionaryVersionRow;
  }
}
