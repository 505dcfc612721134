// One owner per table: a table is named in the code of its store and nowhere else (migrations
// aside). A route or service that queries a table directly fails here, with the file and line.
// The tables themselves come from the schema the migrations build, so a new table without an
// owner fails too.
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { createKnex, migrateLatest } from '../../db/knex.ts';
import { withDatabase } from '../../lib/embedded/postgres.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const SOURCES = ['api', 'activities', 'domain', 'worker', 'workflows', 'lib', 'contracts', 'db', 'scripts', 'bench'];

/** Table → the files that may name it. `db/identity/access.ts` only reads (checked below). */
const OWNERS: Record<string, string[]> = {
  users: ['db/identity/users.ts', 'db/identity/access.ts'],
  roles: ['db/identity/roles.ts', 'db/identity/access.ts'],
  role_permissions: ['db/identity/roles.ts', 'db/identity/access.ts'],
  user_roles: ['db/identity/roles.ts', 'db/identity/access.ts'],
  group_mappings: ['db/identity/roles.ts'],
  sessions: ['db/identity/sessions.ts', 'db/identity/access.ts'],
  api_keys: ['db/identity/api-keys.ts', 'db/identity/access.ts'],
  oidc_login_states: ['db/identity/oidc-login-states.ts'],
  login_throttle: ['db/identity/login-throttle.ts'],
  security_events: ['db/identity/security-events.ts'],
  profile_preferences: ['db/profile/store.ts'],
  tasks: ['db/tasks/store.ts', 'db/tasks/item-pages.ts'],
  task_logs: ['db/tasks/store.ts'],
  task_items: ['db/tasks/items.ts', 'db/tasks/item-pages.ts'],
  environments: ['db/environments/store.ts'],
  environment_rules: ['db/environments/rules.ts'],
  git_configs: ['db/git/configs.ts'],
  git_repositories: ['db/git/repositories.ts'],
  git_dashboard_bindings: ['db/git/repositories.ts'],
  git_deployments: ['db/git/repositories.ts'],
  git_pull_requests: ['db/git/reviews.ts'],
  git_webhooks: ['db/git/reviews.ts'],
  git_webhook_deliveries: ['db/git/reviews.ts'],
  validation_verdicts: ['db/validation/verdicts.ts'],
  llm_providers: ['db/llm-providers/store.ts'],
  schedules: ['db/schedules/store.ts'],
  dataset_dictionaries: ['db/datasets/dictionaries.ts'],
  dataset_changes: ['db/datasets/changes.ts'],
  dataset_suggestions: ['db/datasets/suggestions.ts'],
  release_candidates: ['db/clean-release/store.ts'],
  release_artifacts: ['db/clean-release/store.ts'],
  release_manifests: ['db/clean-release/store.ts'],
  release_settings: ['db/clean-release/store.ts'],
  release_reports: ['db/clean-release/store.ts'],
  release_decisions: ['db/clean-release/store.ts'],
  release_publications: ['db/clean-release/store.ts'],
  review_sessions: ['db/dataset-review/sessions.ts'],
  review_fields: ['db/dataset-review/fields.ts'],
  review_field_feedback: ['db/dataset-review/fields.ts'],
  review_mappings: ['db/dataset-review/mappings.ts'],
  review_clarifications: ['db/dataset-review/clarifications.ts'],
  review_launches: ['db/dataset-review/launches.ts'],
  review_dictionaries: ['db/dataset-review/dictionaries.ts'],
  review_dictionary_versions: ['db/dataset-review/dictionaries.ts'],
  assistant_conversations: ['db/assistant/conversations.ts'],
  assistant_messages: ['db/assistant/conversations.ts'],
  assistant_confirmations: ['db/assistant/confirmations.ts'],
  assistant_audit: ['db/assistant/audit.ts'],
  migration_target_state: ['db/dashboard-migration/store.ts'],
  migration_items: ['db/dashboard-migration/items.ts'],
  browser_screenshots: ['db/browser-check/screenshots.ts'],
  database_mappings: ['db/environments/mappings.ts'],
  backups: ['db/backups/store.ts'],
  selfcheck_effects: ['db/selfcheck/store.ts'],
};

/** Every table the schema migrations create, read from a database they just built. */
async function schemaTables(): Promise<string[]> {
  const adminUrl = inject('pgAdminUrl');
  const name = `owners_${randomBytes(5).toString('hex')}`;
  const admin = createKnex(adminUrl);
  await admin.raw(`create database ${name}`);
  const knex = createKnex(withDatabase(adminUrl, name));
  try {
    await migrateLatest(knex);
    const rows = await knex('information_schema.tables').where({ table_schema: 'public', table_type: 'BASE TABLE' }).select('table_name');
    return rows
      .map((r: { table_name: string }) => r.table_name)
      .filter((t) => !t.startsWith('knex_migrations'))
      .sort();
  } finally {
    await knex.destroy();
    await admin.raw(`drop database ${name}`);
    await admin.destroy();
  }
}

const names = Object.keys(OWNERS).join('|');
// A table as a query builder names it (knex('users'), .join('users as u')) or as SQL text does (from users, join users u).
const REFERENCE = new RegExp(
  `\\b(?:knex|trx|from|join|leftJoin|innerJoin|into|table)(?:<[^>]*>)?\\(\\s*['"](${names})( as \\w+)?['"]|\\b(?:from|join|into|update)\\s+(${names})\\b`,
  'g',
);

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return e.name === 'node_modules' ? [] : sourceFiles(path);
    return e.name.endsWith('.ts') ? [path] : [];
  });
}

function references(): Array<{ file: string; line: number; table: string }> {
  const found: Array<{ file: string; line: number; table: string }> = [];
  for (const top of SOURCES) {
    for (const path of sourceFiles(join(ROOT, top))) {
      const file = relative(ROOT, path);
      if (file.startsWith('db/migrations/')) continue;
      readFileSync(path, 'utf8')
        .split('\n')
        .forEach((text, i) => {
          for (const m of text.matchAll(REFERENCE)) found.push({ file, line: i + 1, table: m[1] ?? m[3] });
        });
    }
  }
  return found;
}

describe('table owners', () => {
  it('gives every table the migrations create an owner', async () => {
    const tables = await schemaTables();
    expect(tables.length).toBeGreaterThan(40);
    expect(tables.filter((t) => !(t in OWNERS))).toEqual([]);
    expect(Object.keys(OWNERS).filter((t) => !tables.includes(t))).toEqual([]);
  });

  it('names each identity and profile table only in its store', () => {
    const refs = references();
    expect(refs.length).toBeGreaterThan(0); // the scan does see the stores
    const strays = refs.filter((r) => !OWNERS[r.table].includes(r.file)).map((r) => `${r.file}:${r.line} names ${r.table}`);
    expect(strays).toEqual([]);
    for (const table of Object.keys(OWNERS))
      expect(
        refs.some((r) => r.table === table),
        table,
      ).toBe(true);
  });

  it.each(['db/identity/access.ts', 'db/tasks/item-pages.ts'])('keeps the cross-aggregate reads of %s read-only', (file) => {
    const text = readFileSync(join(ROOT, file), 'utf8');
    expect(text).not.toMatch(/\.(insert|update|delete|del|truncate)\(|\b(insert\s+into|delete\s+from)\b|^\s*update\s/im);
  });
});
