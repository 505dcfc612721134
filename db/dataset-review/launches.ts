import type { Knex } from 'knex';

/** What a launch's task will create, and where: the dataset change and the saved query. */
export interface LaunchPlan {
  env_id: string;
  dataset_change: { dataset_id: number; dataset_name: string; columns: string[] };
  saved_query: { label: string; database_id: number; schema: string | null; catalog: string | null };
}

export interface LaunchRow {
  id: string;
  session_id: string;
  session_version: number;
  task_id: string;
  env_id: string;
  launched_by: string | null;
  launched_by_username: string;
  plan: LaunchPlan;
  created_at: Date;
}

/** `review_launches`: the audit record of each accepted launch, written once per task. */
export class ReviewLaunchStore {
  private readonly knex: Knex;

  constructor(knex: Knex) {
    this.knex = knex;
  }

  /** The task's record: inserted once; a repeated call for the same task answers the first one. */
  async record(row: Omit<LaunchRow, 'id' | 'created_at'>, trx: Knex = this.knex): Promise<LaunchRow> {
    await trx('review_launches')
      .insert({ ...row, plan: JSON.stringify(row.plan) })
      .onConflict('task_id')
      .ignore();
    return (await trx<LaunchRow>('review_launches').where({ task_id: row.task_id }).first())!;
  }

  async forSession(sessionId: string, trx: Knex = this.knex): Promise<LaunchRow[]> {
    return trx<LaunchRow>('review_launches').where({ session_id: sessionId }).orderBy('created_at', 'desc');
  }
}
