import type { Knex } from 'knex';

/**
 * The audit record of each dataset review launch, written when the launch is accepted (before its
 * task runs): who launched which session version, the task, and what the task will create where.
 * No foreign key to the session: the record outlives a deleted session.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('review_launches', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('session_id').notNullable().index();
    t.integer('session_version').notNullable();
    t.text('task_id').notNullable().unique();
    t.text('env_id').notNullable();
    t.uuid('launched_by').nullable();
    t.text('launched_by_username').notNullable();
    t.jsonb('plan').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('review_launches');
}
