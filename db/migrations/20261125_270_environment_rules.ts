import type { Knex } from 'knex';

/**
 * Per-environment rules (contracts/env-rules.ts): what differs between a source and a target
 * environment besides their databases (a schema or catalog renamed, a URL or name in text),
 * kept per pair beside the database mappings and applied in `position` order.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('environment_rules', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('source_env_id').notNullable().references('environments.id').onDelete('CASCADE');
    t.uuid('target_env_id').notNullable().references('environments.id').onDelete('CASCADE');
    t.integer('position').notNullable();
    t.text('kind').notNullable();
    t.text('from_value').notNullable();
    t.text('to_value').notNullable();
    t.text('description').nullable();
    t.uuid('created_by').nullable().references('users.id').onDelete('SET NULL');
    t.uuid('updated_by').nullable().references('users.id').onDelete('SET NULL');
    t.timestamps(true, true, false);
    t.unique(['source_env_id', 'target_env_id', 'position']);
  });
  await knex.raw(`alter table environment_rules add constraint environment_rules_kind check (kind in ('schema', 'catalog', 'text'))`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('environment_rules');
}
