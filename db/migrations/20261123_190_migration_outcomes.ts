import type { Knex } from 'knex';

/**
 * The outcome of each dashboard of a migration task, written by the activity that produced it.
 * A task's result is assembled from these rows, so a migration of a thousand dashboards never
 * carries their outcomes through the workflow's history (Temporal keeps every activity result
 * there, and no single payload may pass 2 MB).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('migration_outcomes', (t) => {
    t.text('task_id').notNullable().references('tasks.id').onDelete('CASCADE');
    t.integer('source_dashboard_id').notNullable();
    /** Its place in the request, so the result lists dashboards in the order asked. */
    t.integer('position').notNullable();
    t.text('status').notNullable();
    t.jsonb('outcome').notNullable();
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['task_id', 'source_dashboard_id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('migration_outcomes');
}
