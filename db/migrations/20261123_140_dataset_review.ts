import type { Knex } from 'knex';

/**
 * Dataset review: sessions (owned, optimistically locked by an integer `version`), their semantic
 * fields with provenance and feedback, execution mappings, clarification answers (the audit
 * record), and the trusted semantic dictionaries with their versions.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('review_dictionaries', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.text('name').notNullable();
    t.text('description').nullable();
    t.integer('current_version').notNullable().defaultTo(0);
    t.uuid('created_by').nullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.raw('create unique index review_dictionaries_name_unique on review_dictionaries (lower(name))');

  await knex.schema.createTable('review_dictionary_versions', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('dictionary_id').notNullable().references('review_dictionaries.id').onDelete('CASCADE');
    t.integer('version').notNullable();
    t.text('filename').nullable();
    t.text('format').notNullable(); // csv, xlsx
    t.specificType('sha256', 'char(64)').notNullable();
    t.integer('entry_count').notNullable();
    t.jsonb('entries').notNullable(); // [{ column_name, verbose_name, description, table_name }]
    t.uuid('created_by').nullable();
    t.text('created_by_username').nullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['dictionary_id', 'version']);
  });

  await knex.schema.createTable('review_sessions', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('owner_id').notNullable();
    t.text('owner_username').notNullable();
    t.text('env_id').notNullable();
    t.text('link').notNullable();
    t.text('link_kind').notNullable(); // dashboard_id, dashboard_slug, permalink
    t.text('state').notNullable(); // ready, recovery-required, launched
    t.integer('version').notNullable().defaultTo(1);
    t.text('title').nullable();
    t.jsonb('dashboard').nullable(); // { id, title, slug, url }
    t.jsonb('dataset').nullable(); // { id, table_name, database_id, schema, sql, template_params }
    t.jsonb('candidate_datasets').notNullable().defaultTo('[]');
    t.jsonb('charts').notNullable().defaultTo('[]');
    t.jsonb('imported_filters').notNullable().defaultTo('[]');
    t.jsonb('template_variables').notNullable().defaultTo('[]');
    t.jsonb('recovery_markers').notNullable().defaultTo('[]');
    t.uuid('dictionary_id').nullable().references('review_dictionaries.id').onDelete('SET NULL');
    t.integer('dictionary_version').nullable();
    t.jsonb('preview').nullable();
    t.jsonb('launch').nullable();
    t.text('note').nullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['owner_id', 'updated_at']);
  });
  await knex.raw(
    `alter table review_sessions add constraint review_sessions_state_check check (state in ('ready', 'recovery-required', 'launched'))`,
  );

  await knex.schema.createTable('review_fields', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('session_id').notNullable().references('review_sessions.id').onDelete('CASCADE');
    t.text('kind').notNullable(); // column, metric
    t.text('name').notNullable();
    t.integer('position').notNullable();
    t.text('label').nullable();
    t.text('description').nullable();
    t.text('provenance').notNullable(); // dictionary, fuzzy, superset, llm, manual, unresolved
    t.text('status').notNullable(); // proposed, unresolved, needs_review, manual
    t.boolean('locked').notNullable().defaultTo(false);
    t.jsonb('source').nullable(); // where the value came from (dictionary id and version, matched name, score, suggestion id)
    t.jsonb('candidates').notNullable().defaultTo('[]');
    t.jsonb('pending_candidate').nullable(); // the new dictionary's candidate, beside the old value
    t.jsonb('superset').notNullable(); // what Superset holds: { verbose_name, description, type }
    t.uuid('updated_by').nullable();
    t.text('updated_by_username').nullable();
    t.timestamp('updated_at', { useTz: true }).nullable();
    t.unique(['session_id', 'kind', 'name']);
  });

  await knex.schema.createTable('review_field_feedback', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('session_id').notNullable().references('review_sessions.id').onDelete('CASCADE');
    t.uuid('field_id').notNullable().references('review_fields.id').onDelete('CASCADE');
    t.text('verdict').notNullable(); // useful, wrong
    t.text('comment').nullable();
    t.jsonb('value_at_feedback').notNullable();
    t.uuid('user_id').nullable();
    t.text('username').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });

  await knex.schema.createTable('review_mappings', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('session_id').notNullable().references('review_sessions.id').onDelete('CASCADE');
    t.text('filter_id').notNullable();
    t.text('variable').nullable(); // null: the filter fills no template variable
    t.text('variable_kind').nullable(); // url_param, filter_values, get_filters, plain
    t.jsonb('value').nullable(); // a manual value overriding the imported one
    t.text('origin').notNullable(); // proposed, manual
    t.boolean('approved').notNullable().defaultTo(false);
    t.uuid('approved_by').nullable();
    t.timestamp('approved_at', { useTz: true }).nullable();
    t.uuid('updated_by').nullable();
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['session_id', 'filter_id']);
  });

  await knex.schema.createTable('review_clarifications', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('session_id').notNullable().references('review_sessions.id').onDelete('CASCADE');
    t.text('question_key').notNullable();
    t.text('kind').notNullable();
    t.text('question').notNullable();
    t.jsonb('options').notNullable();
    t.jsonb('answer').notNullable();
    t.integer('session_version').notNullable(); // the version the answer was given against
    t.text('feedback').nullable();
    t.text('feedback_comment').nullable();
    t.uuid('answered_by').nullable();
    t.text('answered_by_username').notNullable();
    t.timestamp('answered_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['session_id', 'question_key']);
  });

  // Launch writes dataset changes of its own source.
  await knex.raw('alter table dataset_changes drop constraint dataset_changes_source_check');
  await knex.raw(
    `alter table dataset_changes add constraint dataset_changes_source_check check (source in ('map_columns', 'suggestions', 'undo', 'dataset_launch'))`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('alter table dataset_changes drop constraint dataset_changes_source_check');
  await knex.raw(
    `alter table dataset_changes add constraint dataset_changes_source_check check (source in ('map_columns', 'suggestions', 'undo'))`,
  );
  for (const t of [
    'review_clarifications',
    'review_mappings',
    'review_field_feedback',
    'review_fields',
    'review_sessions',
    'review_dictionary_versions',
    'review_dictionaries',
  ]) {
    await knex.schema.dropTableIfExists(t);
  }
}
