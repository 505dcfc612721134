import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { ScheduleKind, ScheduleParams, ScheduleSpec } from '../../contracts/schedules.ts';
import { ConflictError, NotFoundError } from '../../lib/errors.ts';
import { isUuid } from '../../lib/ids.ts';
import { isUniqueViolation } from '../errors.ts';

export interface ScheduleRow {
  id: string;
  name: string;
  kind: ScheduleKind;
  spec: ScheduleSpec;
  params: ScheduleParams;
  paused: boolean;
  note: string | null;
  /** The person whose rights each run has (for a schedule made with an API key: the person the key acts for). */
  created_by: string | null;
  created_by_username: string | null;
  /** The API key it was made with, if any: revoking that key stops its runs. */
  created_by_api_key_id: string | null;
  temporal_schedule_id: string;
  created_at: Date;
  updated_at: Date;
}

export type NewSchedule = Pick<
  ScheduleRow,
  'name' | 'kind' | 'spec' | 'params' | 'paused' | 'note' | 'created_by' | 'created_by_username' | 'created_by_api_key_id'
>;

/** The `schedules` table: the one owner of its SQL. */
export class ScheduleStore {
  private readonly knex: Knex;

  constructor(knex: Knex) {
    this.knex = knex;
  }

  async list(): Promise<ScheduleRow[]> {
    return this.knex<ScheduleRow>('schedules').orderBy('created_at', 'asc');
  }

  async find(id: string): Promise<ScheduleRow | undefined> {
    if (!isUuid(id)) return undefined;
    return this.knex<ScheduleRow>('schedules').where({ id }).first();
  }

  async get(id: string): Promise<ScheduleRow> {
    const row = await this.find(id);
    if (!row) throw new NotFoundError('Schedule', id);
    return row;
  }

  async create(s: NewSchedule): Promise<ScheduleRow> {
    const id = randomUUID();
    try {
      const [row] = await this.knex<ScheduleRow>('schedules')
        .insert({
          ...s,
          id,
          spec: JSON.stringify(s.spec) as never,
          params: JSON.stringify(s.params) as never,
          temporal_schedule_id: `switchyard-schedule-${id}`,
        })
        .returning('*');
      return row!;
    } catch (err) {
      if (isUniqueViolation(err)) throw new ConflictError(`A schedule named '${s.name}' exists already`, 'schedule_name_taken');
      throw err;
    }
  }

  async update(id: string, change: Partial<Pick<ScheduleRow, 'name' | 'spec' | 'params' | 'paused' | 'note'>>): Promise<ScheduleRow> {
    const values: Record<string, unknown> = { ...change, updated_at: this.knex.fn.now() };
    if (change.spec) values.spec = JSON.stringify(change.spec);
    if (change.params) values.params = JSON.stringify(change.params);
    try {
      const [row] = await this.knex<ScheduleRow>('schedules').where({ id }).update(values).returning('*');
      if (!row) throw new NotFoundError('Schedule', id);
      return row;
    } catch (err) {
      if (isUniqueViolation(err)) throw new ConflictError(`A schedule named '${change.name}' exists already`, 'schedule_name_taken');
      throw err;
    }
  }

  async delete(id: string): Promise<boolean> {
    if (!isUuid(id)) return false;
    return (await this.knex('schedules').where({ id }).delete()) > 0;
  }
}
