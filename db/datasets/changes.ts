import type { Knex } from 'knex';
import { isUuid } from '../../lib/ids.ts';
import type { FieldChange, FieldRef } from '../../lib/dataset-fields.ts';

export type ChangeSource = 'map_columns' | 'suggestions' | 'undo' | 'dataset_launch';
export type ChangeStatus = 'pending' | 'applied' | 'failed' | 'undone';

export interface DatasetChangeRow {
  id: string;
  env_id: string;
  dataset_id: number;
  dataset_name: string | null;
  source: ChangeSource;
  task_id: string | null;
  idempotency_key: string | null;
  actor_id: string | null;
  actor_username: string | null;
  status: ChangeStatus;
  fields: FieldChange[];
  fingerprint_before: string;
  fingerprint_after: string | null;
  verify_problems: string[] | null;
  dropped_keys: string[] | null;
  error: string | null;
  undo_of: string | null;
  undone_by_change: string | null;
  undone_by_username: string | null;
  created_at: Date;
  applied_at: Date | null;
  undone_at: Date | null;
}

export interface NewChange {
  envId: string;
  datasetId: number;
  datasetName: string | null;
  source: ChangeSource;
  taskId: string | null;
  idempotencyKey: string | null;
  actor: { id: string | null; username: string | null };
  fields: FieldChange[];
  fingerprintBefore: string;
  undoOf: string | null;
}

const refKey = (r: FieldRef) => `${r.target}\u0000${r.column_name ?? ''}\u0000${r.field}`;

/** `dataset_changes`: every write Switchyard makes into a Superset dataset, with the values it replaced. */
export class DatasetChangeStore {
  private readonly knex: Knex;

  constructor(knex: Knex) {
    this.knex = knex;
  }

  async get(id: string): Promise<DatasetChangeRow | undefined> {
    if (!isUuid(id)) return undefined;
    return this.knex<DatasetChangeRow>('dataset_changes').where({ id }).first();
  }

  async findByKey(key: string): Promise<DatasetChangeRow | undefined> {
    return this.knex<DatasetChangeRow>('dataset_changes').where({ idempotency_key: key }).first();
  }

  /** Written before the dataset is, so a write cut short is found again (by its key) and never lost. */
  async insertPending(c: NewChange): Promise<DatasetChangeRow> {
    const [row] = await this.knex<DatasetChangeRow>('dataset_changes')
      .insert({
        env_id: c.envId,
        dataset_id: c.datasetId,
        dataset_name: c.datasetName,
        source: c.source,
        task_id: c.taskId,
        idempotency_key: c.idempotencyKey,
        actor_id: c.actor.id,
        actor_username: c.actor.username,
        status: 'pending',
        fields: JSON.stringify(c.fields) as unknown as FieldChange[],
        fingerprint_before: c.fingerprintBefore,
        undo_of: c.undoOf,
      })
      .returning('*');
    return row;
  }

  /** A pending row of an earlier attempt, brought up to date with what this attempt is about to write. */
  async replan(id: string, fields: FieldChange[], fingerprintBefore: string): Promise<DatasetChangeRow> {
    const [row] = await this.knex<DatasetChangeRow>('dataset_changes')
      .where({ id })
      .whereIn('status', ['pending', 'failed'])
      .update({
        status: 'pending',
        fields: JSON.stringify(fields) as unknown as FieldChange[],
        fingerprint_before: fingerprintBefore,
        error: null,
      })
      .returning('*');
    return row;
  }

  async markApplied(id: string, r: { fingerprintAfter: string; verifyProblems: string[]; dropped: string[] }): Promise<DatasetChangeRow> {
    const [row] = await this.knex<DatasetChangeRow>('dataset_changes')
      .where({ id })
      .update({
        status: 'applied',
        fingerprint_after: r.fingerprintAfter,
        verify_problems: (r.verifyProblems.length ? JSON.stringify(r.verifyProblems) : null) as unknown as string[] | null,
        dropped_keys: (r.dropped.length ? JSON.stringify(r.dropped) : null) as unknown as string[] | null,
        applied_at: this.knex.fn.now() as unknown as Date,
        error: null,
      })
      .returning('*');
    return row;
  }

  async markFailed(id: string, error: string): Promise<void> {
    await this.knex('dataset_changes')
      .where({ id, status: 'pending' })
      .update({ status: 'failed', error: error.slice(0, 4000) });
  }

  /** Marks an applied change undone by `undoChangeId`; false when it was not applied (any more). */
  async markUndone(id: string, undoChangeId: string, username: string | null): Promise<boolean> {
    const n = await this.knex('dataset_changes')
      .where({ id, status: 'applied' })
      .update({ status: 'undone', undone_by_change: undoChangeId, undone_by_username: username, undone_at: this.knex.fn.now() });
    return n > 0;
  }

  async listForDataset(
    envId: string,
    datasetId: number,
    page: number,
    pageSize: number,
  ): Promise<{ rows: DatasetChangeRow[]; total: number }> {
    const base = () => this.knex<DatasetChangeRow>('dataset_changes').where({ env_id: envId, dataset_id: datasetId });
    const [{ count }] = await base().count<{ count: string }[]>({ count: '*' });
    const rows = await base()
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .offset((page - 1) * pageSize)
      .limit(pageSize);
    return { rows, total: Number(count) };
  }

  /**
   * The value Switchyard itself last wrote into each field of a dataset (applied writes, undos
   * included). A field that holds something else was written by a person.
   */
  async lastWritten(envId: string, datasetId: number): Promise<Map<string, string | null>> {
    const rows = await this.knex<DatasetChangeRow>('dataset_changes')
      .where({ env_id: envId, dataset_id: datasetId })
      .whereIn('status', ['applied', 'undone'])
      .orderBy('applied_at', 'asc')
      .select('fields');
    const out = new Map<string, string | null>();
    for (const r of rows) for (const f of r.fields) out.set(refKey(f), f.after);
    return out;
  }
}

/** Whether the value a field holds was written by a person: present, and not what Switchyard last wrote there. */
export function isPersonWritten(current: string | null | undefined, ref: FieldRef, lastWritten: Map<string, string | null>): boolean {
  if (current === null || current === undefined || current === '') return false;
  const ours = lastWritten.get(refKey(ref));
  return ours === undefined || ours !== current;
}
