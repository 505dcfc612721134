import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('users', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.text('username').notNullable();
    t.text('email').nullable();
    t.text('display_name').nullable();
    t.text('password_hash').nullable(); // null for users who only sign in through OIDC
    t.text('auth_source').notNullable().defaultTo('local'); // local | oidc
    t.text('oidc_issuer').nullable();
    t.text('oidc_subject').nullable();
    t.boolean('active').notNullable().defaultTo(true);
    t.timestamp('last_login_at', { useTz: true }).nullable();
    t.timestamps(true, true, false);
    t.unique(['oidc_issuer', 'oidc_subject']);
  });
  await knex.raw('create unique index users_username_lower on users (lower(username))');

  await knex.schema.createTable('roles', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.text('name').notNullable();
    t.text('description').nullable();
    t.boolean('builtin').notNullable().defaultTo(false);
    t.timestamps(true, true, false);
  });
  await knex.raw('create unique index roles_name_lower on roles (lower(name))');

  await knex.schema.createTable('role_permissions', (t) => {
    t.uuid('role_id').notNullable().references('roles.id').onDelete('CASCADE');
    t.text('permission').notNullable();
    t.primary(['role_id', 'permission']);
  });

  await knex.schema.createTable('user_roles', (t) => {
    t.uuid('user_id').notNullable().references('users.id').onDelete('CASCADE');
    t.uuid('role_id').notNullable().references('roles.id').onDelete('CASCADE');
    t.primary(['user_id', 'role_id']);
  });

  await knex.schema.createTable('group_mappings', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.text('group_name').notNullable();
    t.uuid('role_id').notNullable().references('roles.id').onDelete('CASCADE');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['group_name', 'role_id']);
  });

  await knex.schema.createTable('sessions', (t) => {
    t.uuid('id').primary(); // the token's `sid`
    t.uuid('user_id').notNullable().references('users.id').onDelete('CASCADE');
    t.text('via').notNullable(); // password | oidc
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.timestamp('revoked_at', { useTz: true }).nullable();
    t.index(['user_id']);
  });

  await knex.schema.createTable('api_keys', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.text('name').notNullable();
    t.text('key_hash').notNullable().unique(); // SHA-256 of the raw key
    t.text('key_prefix').notNullable(); // first characters, to recognise a key in lists
    t.specificType('permissions', 'text[]').notNullable();
    t.boolean('active').notNullable().defaultTo(true);
    t.uuid('created_by').nullable().references('users.id').onDelete('SET NULL');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('revoked_at', { useTz: true }).nullable();
    t.timestamp('last_used_at', { useTz: true }).nullable();
  });

  await knex.schema.createTable('security_events', (t) => {
    t.bigIncrements('id');
    t.timestamp('ts', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.text('event_type').notNullable();
    t.text('outcome').notNullable(); // success | failure
    t.uuid('actor_id').nullable();
    t.text('actor_username').nullable();
    t.text('ip').nullable();
    t.text('user_agent').nullable();
    t.jsonb('detail').nullable();
    t.index(['ts']);
    t.index(['event_type', 'ts']);
  });

  // Failed-login throttling, per account and per address; windows expire, so nobody is locked out for good.
  await knex.schema.createTable('login_throttle', (t) => {
    t.text('key').primary();
    t.integer('failures').notNullable().defaultTo(0);
    t.timestamp('window_started_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('locked_until', { useTz: true }).nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  for (const table of [
    'login_throttle',
    'security_events',
    'api_keys',
    'sessions',
    'group_mappings',
    'user_roles',
    'role_permissions',
    'roles',
    'users',
  ]) {
    await knex.schema.dropTableIfExists(table);
  }
}
