import type { Knex } from 'knex';

/**
 * Dashboards reviewed like code: the pull requests Switchyard opened for a dashboard repository
 * (what they preview and where a merge deploys), the provider webhook of a git config (its
 * secret encrypted, the person it acts as), and every delivery it took (replay safety).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('git_pull_requests', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('dashboard_uuid').notNullable().references('git_repositories.dashboard_uuid').onDelete('CASCADE');
    t.uuid('config_id').notNullable().references('git_configs.id').onDelete('CASCADE');
    // owner/name on the server, and the provider's number (GitLab's iid).
    t.text('repository').notNullable();
    t.integer('number').notNullable();
    t.text('url').notNullable();
    t.text('title').notNullable();
    t.text('head_branch').notNullable();
    t.text('base_branch').notNullable();
    t.text('head_commit').nullable();
    t.text('state').notNullable().defaultTo('open');
    // The dashboard id in env_id (the environment the branch shows), and where a merge deploys.
    t.uuid('env_id').notNullable().references('environments.id').onDelete('CASCADE');
    t.integer('dashboard_id').notNullable();
    t.uuid('target_env_id').notNullable().references('environments.id').onDelete('CASCADE');
    t.text('verification').notNullable().defaultTo('queries');
    t.uuid('opened_by').nullable().references('users.id').onDelete('SET NULL');
    t.text('preview_task_id').nullable();
    t.text('preview_state').nullable();
    t.text('merge_commit').nullable();
    t.text('deploy_task_id').nullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['config_id', 'repository', 'number']);
  });
  await knex.raw(`alter table git_pull_requests add constraint git_pull_requests_state check (state in ('open', 'closed', 'merged'))`);
  await knex.schema.createTable('git_webhooks', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('config_id').notNullable().unique().references('git_configs.id').onDelete('CASCADE');
    t.text('secret_encrypted').notNullable();
    // The person a delivery acts as, with their rights at the moment it arrives.
    t.uuid('owner_id').notNullable().references('users.id').onDelete('CASCADE');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.schema.createTable('git_webhook_deliveries', (t) => {
    t.uuid('config_id').notNullable().references('git_configs.id').onDelete('CASCADE');
    t.text('delivery_id').notNullable();
    t.text('outcome').notNullable();
    t.text('task_id').nullable();
    t.timestamp('received_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['config_id', 'delivery_id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('git_webhook_deliveries');
  await knex.schema.dropTableIfExists('git_webhooks');
  await knex.schema.dropTableIfExists('git_pull_requests');
}
