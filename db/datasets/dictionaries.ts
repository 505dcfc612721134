import type { Knex } from 'knex';
import type { DictionaryEntry } from '../../lib/dictionary/entries.ts';
import { isUuid } from '../../lib/ids.ts';

export type DictionaryRow = DictionaryEntry;

export interface DictionaryRecord {
  id: string;
  source: 'xlsx' | 'sqllab';
  filename: string | null;
  sheet: string | null;
  sha256: string | null;
  size: number | null;
  row_count: number;
  rows: DictionaryRow[];
  task_id: string | null;
  created_by: string | null;
  created_at: Date;
}

export type DictionaryInfo = Omit<DictionaryRecord, 'rows'>;

/**
 * `dataset_dictionaries`: uploaded workbooks (parsed once, at upload) and the rows of a SQL Lab
 * query a task ran, kept here so a workflow passes an id instead of the rows.
 */
export class DictionaryStore {
  private readonly knex: Knex;

  constructor(knex: Knex) {
    this.knex = knex;
  }

  async create(d: {
    source: 'xlsx' | 'sqllab';
    filename?: string | null;
    sheet?: string | null;
    sha256?: string | null;
    size?: number | null;
    rows: DictionaryRow[];
    taskId?: string | null;
    createdBy?: string | null;
  }): Promise<DictionaryInfo> {
    const [row] = await this.knex<DictionaryRecord>('dataset_dictionaries')
      .insert({
        source: d.source,
        filename: d.filename ?? null,
        sheet: d.sheet ?? null,
        sha256: d.sha256 ?? null,
        size: d.size ?? null,
        row_count: d.rows.length,
        rows: JSON.stringify(d.rows) as unknown as DictionaryRow[],
        task_id: d.taskId ?? null,
        created_by: d.createdBy ?? null,
      })
      .returning(['id', 'source', 'filename', 'sheet', 'sha256', 'size', 'row_count', 'task_id', 'created_by', 'created_at']);
    return row as DictionaryInfo;
  }

  async info(id: string): Promise<DictionaryInfo | undefined> {
    if (!isUuid(id)) return undefined;
    return this.knex<DictionaryRecord>('dataset_dictionaries')
      .where({ id })
      .first('id', 'source', 'filename', 'sheet', 'sha256', 'size', 'row_count', 'task_id', 'created_by', 'created_at');
  }

  async get(id: string): Promise<DictionaryRecord | undefined> {
    if (!isUuid(id)) return undefined;
    return this.knex<DictionaryRecord>('dataset_dictionaries').where({ id }).first();
  }

  /** The query rows a task already stored (a retried activity reuses them). */
  async forTask(taskId: string): Promise<DictionaryInfo | undefined> {
    return this.knex<DictionaryRecord>('dataset_dictionaries')
      .where({ task_id: taskId })
      .first('id', 'source', 'filename', 'sheet', 'sha256', 'size', 'row_count', 'task_id', 'created_by', 'created_at');
  }
}
