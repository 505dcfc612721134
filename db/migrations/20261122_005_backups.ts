import type { Knex } from 'knex';

/**
 * The backup index. Blobs live in the backup store under their content hash; a row says which
 * dashboard of which environment was backed up when, by which task, to which blob. Several rows
 * may share one blob (unchanged dashboard). One row per (task, dashboard): a retried activity
 * finds its row instead of adding a second one.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('backups', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    // No foreign key to environments: a backup outlives the environment record it came from.
    t.text('env_id').notNullable();
    t.integer('dashboard_id').notNullable(); // Superset's id in that environment
    t.uuid('dashboard_uuid').nullable();
    t.text('dashboard_title').notNullable();
    t.text('dashboard_slug').nullable();
    t.specificType('content_hash', 'char(64)').notNullable();
    t.integer('size').notNullable(); // bytes of the stored zip
    t.text('store_kind').notNullable();
    t.boolean('deduplicated').notNullable(); // an earlier backup already held this content
    t.integer('chart_count').notNullable().defaultTo(0);
    t.text('task_id').nullable().references('tasks.id').onDelete('SET NULL');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['task_id', 'dashboard_id']);
    t.index(['content_hash', 'store_kind']);
  });
  await knex.raw(`alter table backups add constraint backups_store_kind_check check (store_kind in ('dir', 's3'))`);
  await knex.raw(`alter table backups add constraint backups_content_hash_check check (content_hash ~ '^[0-9a-f]{64}$')`);
  await knex.raw('create index backups_dashboard_newest on backups (env_id, dashboard_id, created_at desc, id desc)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('backups');
}
