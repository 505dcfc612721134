import type { Knex } from 'knex';

/**
 * Schedules of recurring backups and drift reports. Temporal holds the timing (a Temporal
 * Schedule per row, `temporal_schedule_id`); this row holds what to run, so a run reads its
 * parameters here and a deleted row stops any run already on its way.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('schedules', (t) => {
    t.uuid('id').primary();
    t.text('name').notNullable();
    t.text('kind').notNullable(); // backup | drift_report
    t.jsonb('spec').notNullable();
    t.jsonb('params').notNullable();
    t.boolean('paused').notNullable().defaultTo(false);
    t.text('note').nullable();
    t.uuid('created_by').nullable();
    t.text('created_by_username').nullable();
    t.text('temporal_schedule_id').notNullable().unique();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.raw('create unique index schedules_name_lower on schedules (lower(name))');
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('schedules');
}
