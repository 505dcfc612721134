import type { Knex } from 'knex';

/**
 * The assistant: conversations and their messages (per user), confirmations of risky commands
 * (owned by the user who asked, with an expiry; the planned action holds ids, never a secret),
 * and the audit of every decision.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('assistant_conversations', (t) => {
    t.uuid('id').primary();
    t.uuid('user_id').notNullable();
    t.text('title').nullable();
    t.boolean('archived').notNullable().defaultTo(false);
    t.text('last_message_preview').nullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('last_activity_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['user_id', 'last_activity_at']);
  });
  await knex.schema.createTable('assistant_messages', (t) => {
    t.uuid('id').primary();
    t.bigIncrements('seq', { primaryKey: false });
    t.uuid('conversation_id').notNullable().references('assistant_conversations.id').onDelete('CASCADE');
    t.uuid('user_id').notNullable();
    t.text('role').notNullable(); // user | assistant
    t.text('text').notNullable();
    t.text('state').nullable();
    t.jsonb('intent').nullable();
    t.jsonb('data').nullable();
    t.uuid('confirmation_id').nullable();
    t.text('task_id').nullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['conversation_id', 'seq']);
  });
  await knex.raw(`alter table assistant_messages add constraint assistant_messages_role_check check (role in ('user', 'assistant'))`);
  await knex.schema.createTable('assistant_confirmations', (t) => {
    t.uuid('id').primary();
    t.uuid('user_id').notNullable();
    t.text('username').notNullable();
    t.uuid('conversation_id').nullable().references('assistant_conversations.id').onDelete('SET NULL');
    t.jsonb('intent').notNullable();
    t.text('summary').notNullable();
    t.jsonb('action').notNullable();
    t.text('status').notNullable().defaultTo('pending');
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.timestamp('decided_at', { useTz: true }).nullable();
    t.text('task_id').nullable();
    t.jsonb('result').nullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.raw(
    `alter table assistant_confirmations add constraint assistant_confirmations_status_check check (status in ('pending', 'confirmed', 'cancelled', 'expired'))`,
  );
  await knex.schema.createTable('assistant_audit', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.bigIncrements('seq', { primaryKey: false });
    t.uuid('user_id').nullable();
    t.text('username').notNullable();
    t.text('decision').notNullable();
    t.text('domain').notNullable();
    t.text('operation').notNullable();
    t.jsonb('intent').notNullable();
    t.jsonb('outcome').notNullable();
    t.uuid('conversation_id').nullable();
    t.uuid('confirmation_id').nullable();
    t.text('task_id').nullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['user_id', 'seq']);
  });
  await knex.raw(
    `alter table assistant_audit add constraint assistant_audit_decision_check check (decision in ('executed', 'confirmed', 'cancelled', 'expired', 'denied'))`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('assistant_audit');
  await knex.schema.dropTableIfExists('assistant_confirmations');
  await knex.schema.dropTableIfExists('assistant_messages');
  await knex.schema.dropTableIfExists('assistant_conversations');
}
