import type { Knex } from 'knex';

/**
 * What the last migration of a dashboard into an environment wrote there: the hash of the bundle
 * it imported (as planned: databases remapped, collisions resolved) and the hash of the target's
 * own export right after the import. A rerun whose plan hashes the same, into a target that still
 * exports the same, has nothing to import (see db/dashboard-migration/store.ts).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('migration_target_state', (t) => {
    t.uuid('target_env_id').notNullable().references('environments.id').onDelete('CASCADE');
    t.text('dashboard_uuid').notNullable();
    t.uuid('source_env_id').notNullable();
    t.text('bundle_hash').notNullable();
    t.text('target_hash').notNullable();
    t.integer('target_dashboard_id').notNullable();
    t.text('task_id').nullable();
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['target_env_id', 'dashboard_uuid']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('migration_target_state');
}
