import type { Knex } from 'knex';

/**
 * Clean release: candidates (dashboards at pinned sources bound for a target), their artifacts
 * (normalised files with digests and the hosts they reference), manifests (the digested list a
 * check and a publish hold the artifacts to), the trusted registry and policy, check reports,
 * every decision, and what a publish replaced (for revoke).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('release_candidates', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.text('name').notNullable();
    t.text('target_env_id').notNullable();
    t.jsonb('sources').notNullable();
    t.jsonb('db_mappings').notNullable().defaultTo('[]');
    t.text('state').notNullable().defaultTo('draft');
    t.text('created_by').nullable();
    t.text('created_by_username').nullable();
    t.uuid('manifest_id').nullable();
    t.uuid('report_id').nullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.raw(
    `alter table release_candidates add constraint release_candidates_state_check check (state in
     ('draft','prepared','blocked','checking','checked','check_failed','approved','rejected','publishing','published','publish_failed','revoking','revoked'))`,
  );
  await knex.schema.createTable('release_artifacts', (t) => {
    t.uuid('candidate_id').notNullable().references('release_candidates.id').onDelete('CASCADE');
    t.uuid('dashboard_uuid').notNullable();
    t.text('title').nullable();
    t.jsonb('source').notNullable();
    t.jsonb('files').notNullable(); // path → normalised YAML text
    t.specificType('sha256', 'char(64)').notNullable();
    t.specificType('portable_sha256', 'char(64)').notNullable();
    t.jsonb('hosts').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['candidate_id', 'dashboard_uuid']);
  });
  await knex.schema.createTable('release_manifests', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('candidate_id').notNullable().references('release_candidates.id').onDelete('CASCADE');
    t.specificType('digest', 'char(64)').notNullable();
    t.jsonb('body').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.schema.createTable('release_settings', (t) => {
    t.text('key').primary(); // registry | policy
    t.jsonb('value').notNullable();
    t.text('updated_by').nullable();
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.schema.createTable('release_reports', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('candidate_id').notNullable().references('release_candidates.id').onDelete('CASCADE');
    t.uuid('manifest_id').notNullable();
    t.text('task_id').nullable();
    t.text('status').notNullable().defaultTo('running'); // running | passed | failed
    t.jsonb('checks').notNullable().defaultTo('[]');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('finished_at', { useTz: true }).nullable();
  });
  await knex.schema.createTable('release_decisions', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('candidate_id').notNullable().references('release_candidates.id').onDelete('CASCADE');
    t.text('action').notNullable();
    t.text('by_id').nullable();
    t.text('by_username').nullable();
    t.text('comment').nullable();
    t.text('state_after').notNullable();
    t.text('task_id').nullable();
    t.timestamp('at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.schema.createTable('release_publications', (t) => {
    t.uuid('candidate_id').notNullable().references('release_candidates.id').onDelete('CASCADE');
    t.uuid('dashboard_uuid').notNullable();
    t.text('env_id').notNullable();
    t.integer('target_dashboard_id').nullable();
    t.uuid('backup_id').nullable(); // what the publish replaced; null when the dashboard was new there
    t.boolean('existed').notNullable();
    t.timestamp('published_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['candidate_id', 'dashboard_uuid']);
  });
}

export async function down(knex: Knex): Promise<void> {
  for (const t of [
    'release_publications',
    'release_decisions',
    'release_reports',
    'release_settings',
    'release_manifests',
    'release_artifacts',
    'release_candidates',
  ])
    await knex.schema.dropTableIfExists(t);
}
