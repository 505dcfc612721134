import type { Knex } from 'knex';

/**
 * An Idempotency-Key belongs to whoever sent it: a user (an API key acting for its creator
 * counts as that user), else the API key, else the system. Before, every caller without a user
 * id (each API key, the system) shared one space of keys, so one key's holder could be handed
 * another's task by reusing its key. Existing rows without an owner keep their key under a scope
 * no caller has, so no later request is matched to them.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('tasks', (t) => {
    t.text('idempotency_scope').nullable();
  });
  await knex.raw(
    `update tasks set idempotency_scope = case when owner_id is not null then 'user:' || owner_id::text else 'unscoped' end
     where idempotency_key is not null`,
  );
  await knex.schema.alterTable('tasks', (t) => {
    t.dropUnique(['owner_id', 'type', 'idempotency_key']);
    t.unique(['idempotency_scope', 'type', 'idempotency_key']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('tasks', (t) => {
    t.dropUnique(['idempotency_scope', 'type', 'idempotency_key']);
    t.unique(['owner_id', 'type', 'idempotency_key']);
  });
  await knex.schema.alterTable('tasks', (t) => t.dropColumn('idempotency_scope'));
}
