import type { Knex } from 'knex';

/**
 * How the last verification of each migrated dashboard in its target ended ('passed', 'failed';
 * null until it is verified), so a rerun never takes the "unchanged" shortcut past a failure.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('migration_target_state', (t) => {
    t.text('verification').nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('migration_target_state', (t) => t.dropColumn('verification'));
}
