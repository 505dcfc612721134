import type { Knex } from 'knex';

/**
 * When each migrated dashboard's last verification in its target was made, and by which task
 * (issue 50): a rerun with `verification: "if_changed"` carries that verification and says whose
 * and when; the default rerun checks the target again and records its own. Null in older rows.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('migration_target_state', (t) => {
    t.timestamp('verified_at', { useTz: true }).nullable();
    t.text('verified_task_id').nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('migration_target_state', (t) => {
    t.dropColumn('verified_at');
    t.dropColumn('verified_task_id');
  });
}
