import type { Knex } from 'knex';

/**
 * One row per dashboard of a migration task: the import intent is written before the import and
 * confirmed after it, so an activity retried after a crash can tell "already imported" from
 * "never imported" and never imports twice.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('migration_items', (t) => {
    t.text('task_id').notNullable().references('tasks.id').onDelete('CASCADE');
    t.integer('source_dashboard_id').notNullable();
    t.text('dashboard_uuid').notNullable();
    t.text('bundle_hash').notNullable();
    t.text('status').notNullable(); // importing | imported
    t.integer('target_dashboard_id').nullable();
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['task_id', 'source_dashboard_id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('migration_items');
}
