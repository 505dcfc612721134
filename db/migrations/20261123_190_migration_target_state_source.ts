import type { Knex } from 'knex';

/**
 * Which source dashboard each recorded target state came from, so a rerun knows the target copies
 * of the dashboards it is asked for before it has read their source export, and reads both sides
 * at once.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('migration_target_state', (t) => {
    t.integer('source_dashboard_id').nullable();
    t.index(['target_env_id', 'source_env_id', 'source_dashboard_id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('migration_target_state', (t) => {
    t.dropIndex(['target_env_id', 'source_env_id', 'source_dashboard_id']);
    t.dropColumn('source_dashboard_id');
  });
}
