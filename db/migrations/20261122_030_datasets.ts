import type { Knex } from 'knex';

/**
 * Dataset work: LLM providers (their API keys encrypted at rest), uploaded column dictionaries,
 * every change Switchyard writes into a Superset dataset (with the values it replaced, for undo)
 * and LLM suggestions waiting for a person's review.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('llm_providers', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.text('name').notNullable();
    t.text('base_url').notNullable();
    t.text('model').notNullable();
    // AES-256-GCM under SWITCHYARD_SECRET_KEY (lib/crypto.ts); never returned, logged or sent to a workflow.
    t.text('api_key_encrypted').notNullable();
    t.integer('timeout_seconds').notNullable().defaultTo(60);
    // Environments whose sample rows may be sent to this provider; none by default.
    t.specificType('sample_data_env_ids', 'text[]').notNullable().defaultTo('{}');
    t.text('description').nullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.raw('create unique index llm_providers_name_unique on llm_providers (lower(name))');

  await knex.schema.createTable('dataset_dictionaries', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.text('source').notNullable(); // xlsx (an upload) or sqllab (a query's rows, kept for the task that ran it)
    t.text('filename').nullable();
    t.text('sheet').nullable();
    t.specificType('sha256', 'char(64)').nullable();
    t.integer('size').nullable();
    t.integer('row_count').notNullable();
    t.jsonb('rows').notNullable(); // [{ column_name, verbose_name, description, table_name }]
    t.text('task_id').nullable().references('tasks.id').onDelete('CASCADE');
    t.uuid('created_by').nullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.raw(`alter table dataset_dictionaries add constraint dataset_dictionaries_source_check check (source in ('xlsx', 'sqllab'))`);
  await knex.raw('create unique index dataset_dictionaries_task_unique on dataset_dictionaries (task_id) where task_id is not null');

  await knex.schema.createTable('dataset_changes', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    // No foreign key to environments: the history outlives the environment record.
    t.text('env_id').notNullable();
    t.integer('dataset_id').notNullable();
    t.text('dataset_name').nullable();
    t.text('source').notNullable(); // map_columns, suggestions, undo
    t.text('task_id').nullable().references('tasks.id').onDelete('SET NULL');
    // One write per (task, dataset): a retried activity finds its own row.
    t.text('idempotency_key').nullable().unique();
    t.uuid('actor_id').nullable();
    t.text('actor_username').nullable();
    t.text('status').notNullable(); // pending, applied, failed, undone
    t.jsonb('fields').notNullable(); // FieldChange[]: before and after per field
    t.text('fingerprint_before').notNullable();
    t.text('fingerprint_after').nullable();
    t.jsonb('verify_problems').nullable(); // what else moved, when the re-read found anything
    t.jsonb('dropped_keys').nullable();
    t.text('error').nullable();
    t.uuid('undo_of').nullable().references('dataset_changes.id').onDelete('SET NULL');
    t.uuid('undone_by_change').nullable().references('dataset_changes.id').onDelete('SET NULL');
    t.text('undone_by_username').nullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('applied_at', { useTz: true }).nullable();
    t.timestamp('undone_at', { useTz: true }).nullable();
  });
  await knex.raw(
    `alter table dataset_changes add constraint dataset_changes_status_check check (status in ('pending', 'applied', 'failed', 'undone'))`,
  );
  await knex.raw(
    `alter table dataset_changes add constraint dataset_changes_source_check check (source in ('map_columns', 'suggestions', 'undo'))`,
  );
  await knex.raw('create index dataset_changes_dataset_newest on dataset_changes (env_id, dataset_id, created_at desc, id desc)');

  await knex.schema.createTable('dataset_suggestions', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.text('env_id').notNullable();
    t.integer('dataset_id').notNullable();
    t.text('task_id').nullable().references('tasks.id').onDelete('SET NULL');
    t.text('target').notNullable(); // dataset, column
    t.text('column_name').nullable();
    t.text('field').notNullable(); // description, verbose_name
    t.text('value').notNullable();
    // What the field held when the suggestion was made: accepting over a value changed since needs asking.
    t.text('base_value').nullable();
    t.text('status').notNullable().defaultTo('pending'); // pending, accepted, rejected, superseded
    t.text('provider_id').notNullable();
    t.text('provider_name').notNullable();
    t.text('model').notNullable();
    t.text('prompt_version').notNullable();
    t.text('language').notNullable();
    t.jsonb('usage').nullable(); // tokens of the call that produced it (shared by the dataset's suggestions)
    t.timestamp('generated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.uuid('decided_by_id').nullable();
    t.text('decided_by_username').nullable();
    t.timestamp('decided_at', { useTz: true }).nullable();
    t.text('accepted_value').nullable();
    t.uuid('change_id').nullable().references('dataset_changes.id').onDelete('SET NULL');
  });
  await knex.raw(
    `alter table dataset_suggestions add constraint dataset_suggestions_status_check check (status in ('pending', 'accepted', 'rejected', 'superseded'))`,
  );
  await knex.raw(
    `create unique index dataset_suggestions_task_field on dataset_suggestions (task_id, dataset_id, target, coalesce(column_name, ''), field) where task_id is not null`,
  );
  await knex.raw('create index dataset_suggestions_dataset on dataset_suggestions (env_id, dataset_id, status, generated_at desc)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('dataset_suggestions');
  await knex.schema.dropTableIfExists('dataset_changes');
  await knex.schema.dropTableIfExists('dataset_dictionaries');
  await knex.schema.dropTableIfExists('llm_providers');
}
