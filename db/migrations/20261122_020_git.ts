import type { Knex } from 'knex';

/**
 * Git per dashboard: server configs (the token encrypted at rest), one repository per dashboard
 * keyed by the dashboard's UUID (it survives migration, so one history serves every
 * environment), the deploys of pinned commits, and a `protected` flag on environments (a deploy
 * into a protected environment waits for a second person's approval).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('git_configs', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.text('name').notNullable();
    t.text('provider').notNullable();
    t.text('base_url').notNullable();
    t.text('owner').notNullable();
    t.text('default_branch').notNullable().defaultTo('main');
    t.text('pat_encrypted').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.raw(`alter table git_configs add constraint git_configs_provider_check check (provider in ('github', 'gitlab', 'gitea'))`);
  await knex.raw('create unique index git_configs_name_unique on git_configs (lower(name))');

  await knex.schema.createTable('git_repositories', (t) => {
    t.uuid('dashboard_uuid').primary();
    t.text('title').nullable();
    // A repository outlives its config: deleting a config leaves the local history (no remote).
    t.uuid('config_id').nullable().references('git_configs.id').onDelete('SET NULL');
    t.text('remote_name').nullable(); // the repository's name on the server
    t.text('remote_url').nullable(); // never carries credentials
    t.text('branch').notNullable().defaultTo('main');
    t.text('synced_env_id').nullable();
    t.timestamp('synced_at', { useTz: true }).nullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });

  // Which dashboard (by id in an environment) is which repository: ids differ per environment.
  await knex.schema.createTable('git_dashboard_bindings', (t) => {
    t.text('env_id').notNullable();
    t.integer('dashboard_id').notNullable();
    t.uuid('dashboard_uuid').notNullable().references('git_repositories.dashboard_uuid').onDelete('CASCADE');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['env_id', 'dashboard_id']);
    t.index(['dashboard_uuid']);
  });

  await knex.schema.createTable('git_deployments', (t) => {
    t.bigIncrements('id').primary();
    t.uuid('dashboard_uuid').notNullable().references('git_repositories.dashboard_uuid').onDelete('CASCADE');
    t.text('env_id').notNullable();
    t.specificType('commit', 'char(40)').notNullable();
    t.integer('target_dashboard_id').nullable();
    t.text('task_id').notNullable().unique().references('tasks.id').onDelete('CASCADE');
    t.text('deployed_by').nullable();
    t.text('approved_by').nullable();
    t.timestamp('deployed_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.raw('create index git_deployments_newest on git_deployments (dashboard_uuid, deployed_at desc, id desc)');

  await knex.schema.alterTable('environments', (t) => {
    t.boolean('protected').notNullable().defaultTo(false);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('environments', (t) => t.dropColumn('protected'));
  await knex.schema.dropTableIfExists('git_deployments');
  await knex.schema.dropTableIfExists('git_dashboard_bindings');
  await knex.schema.dropTableIfExists('git_repositories');
  await knex.schema.dropTableIfExists('git_configs');
}
