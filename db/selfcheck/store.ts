/**
 * The selfcheck task's side effects (`selfcheck_effects`), keyed by (task, step): the only code that
 * reads or writes the table. Applying an effect twice keeps the first attempt's row, which is how
 * the selfcheck proves a retried or resumed step never acts twice.
 */
import type { Knex } from 'knex';

export class SelfcheckEffectStore {
  private readonly knex: Knex;

  constructor(knex: Knex) {
    this.knex = knex;
  }

  /** Records the step's effect once; answers the attempt that applied it. */
  async apply(taskId: string, step: string, attempt: number): Promise<number> {
    await this.knex('selfcheck_effects').insert({ task_id: taskId, step, attempt }).onConflict(['task_id', 'step']).ignore();
    const row = await this.knex('selfcheck_effects').where({ task_id: taskId, step }).first('attempt');
    return row.attempt as number;
  }
}
