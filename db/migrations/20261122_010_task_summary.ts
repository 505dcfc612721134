import type { Knex } from 'knex';

/** What a task is about, in words (the Temporal console shows the same text as the workflow's summary). */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('tasks', (t) => {
    t.text('summary').nullable();
    t.text('details').nullable();
  });
  // Log reads page by id; the (task_id, id) index serves "lines after this one" without a sort.
  await knex.schema.alterTable('task_logs', (t) => {
    t.index(['task_id', 'id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('task_logs', (t) => {
    t.dropIndex(['task_id', 'id']);
  });
  await knex.schema.alterTable('tasks', (t) => {
    t.dropColumn('summary');
    t.dropColumn('details');
  });
}
