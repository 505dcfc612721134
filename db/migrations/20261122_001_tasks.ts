import type { Knex } from 'knex';

const STATUSES = ['PENDING', 'RUNNING', 'SUCCEEDED', 'FAILED', 'CANCELLED', 'AWAITING_APPROVAL'];

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('tasks', (t) => {
    t.text('id').primary(); // = Temporal workflow id
    t.text('type').notNullable();
    t.text('status').notNullable().defaultTo('PENDING');
    t.uuid('owner_id').nullable();
    t.text('owner_username').nullable();
    t.specificType('env_ids', 'text[]').notNullable().defaultTo('{}');
    t.specificType('dashboard_ids', 'text[]').notNullable().defaultTo('{}');
    t.jsonb('params').notNullable().defaultTo('{}');
    t.jsonb('progress').nullable();
    t.jsonb('result').nullable();
    t.jsonb('error').nullable();
    t.text('idempotency_key').nullable();
    t.text('workflow_type').notNullable();
    t.jsonb('workflow_input').notNullable(); // never holds secrets: activities resolve them by reference
    t.text('workflow_run_id').nullable(); // set once Temporal accepted the start
    t.integer('start_attempts').notNullable().defaultTo(0);
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('started_at', { useTz: true }).nullable();
    t.timestamp('finished_at', { useTz: true }).nullable();
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['owner_id', 'type', 'idempotency_key']);
    t.index(['type', 'status', 'created_at']);
    t.index(['owner_id', 'created_at']);
    t.index(['status', 'updated_at']);
  });
  await knex.raw(`alter table tasks add constraint tasks_status_check check (status in (${STATUSES.map((s) => `'${s}'`).join(',')}))`);
  await knex.raw('create index tasks_env_ids_gin on tasks using gin (env_ids)');
  await knex.raw('create index tasks_dashboard_ids_gin on tasks using gin (dashboard_ids)');

  await knex.schema.createTable('task_logs', (t) => {
    t.bigIncrements('id');
    t.text('task_id').notNullable().references('tasks.id').onDelete('CASCADE');
    t.timestamp('ts', { useTz: true }).notNullable();
    t.text('level').notNullable();
    t.text('source').notNullable(); // workflow | activity | api
    t.text('activity_type').nullable();
    t.integer('attempt').nullable();
    t.text('message').notNullable();
    t.jsonb('attrs').nullable();
    t.index(['task_id', 'ts', 'id']);
  });

  // Side effects of the selfcheck task, keyed so a retried activity cannot apply one twice.
  await knex.schema.createTable('selfcheck_effects', (t) => {
    t.text('task_id').notNullable().references('tasks.id').onDelete('CASCADE');
    t.text('step').notNullable();
    t.integer('attempt').notNullable();
    t.timestamp('applied_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['task_id', 'step']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('selfcheck_effects');
  await knex.schema.dropTableIfExists('task_logs');
  await knex.schema.dropTableIfExists('tasks');
}
