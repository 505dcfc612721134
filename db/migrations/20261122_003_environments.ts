import type { Knex } from 'knex';

/**
 * Superset environments, the database mappings accepted between two of them, and per-user
 * profile preferences (profile-default dashboard filter, bound Superset username, git identity).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('environments', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.text('name').notNullable();
    t.text('base_url').notNullable();
    t.text('username').notNullable();
    t.text('password_encrypted').notNullable(); // Keyring.encrypt (AES-256-GCM); never returned
    t.boolean('verify_tls').notNullable().defaultTo(true);
    t.integer('timeout_seconds').notNullable().defaultTo(30);
    t.text('description').nullable();
    t.timestamps(true, true, false);
  });
  await knex.raw('create unique index environments_name_lower on environments (lower(name))');

  await knex.schema.createTable('database_mappings', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('source_env_id').notNullable().references('environments.id').onDelete('CASCADE');
    t.uuid('target_env_id').notNullable().references('environments.id').onDelete('CASCADE');
    t.integer('source_database_id').notNullable();
    t.text('source_database_name').notNullable();
    t.uuid('source_database_uuid').nullable();
    t.integer('target_database_id').notNullable();
    t.text('target_database_name').notNullable();
    t.uuid('target_database_uuid').nullable();
    t.uuid('created_by').nullable().references('users.id').onDelete('SET NULL');
    t.uuid('updated_by').nullable().references('users.id').onDelete('SET NULL');
    t.timestamps(true, true, false);
    // One accepted target per source database and environment pair.
    t.unique(['source_env_id', 'target_env_id', 'source_database_id']);
  });

  await knex.schema.createTable('profile_preferences', (t) => {
    t.uuid('user_id').primary().references('users.id').onDelete('CASCADE');
    t.boolean('profile_filter_enabled').notNullable().defaultTo(false);
    t.text('superset_username').nullable();
    t.text('git_username').nullable();
    t.text('git_email').nullable();
    t.timestamps(true, true, false);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('profile_preferences');
  await knex.schema.dropTableIfExists('database_mappings');
  await knex.schema.dropTableIfExists('environments');
}
