import { ValidationError } from '../../lib/errors.ts';
import type { AppContext } from '../context.ts';
import { defineRoute, type AnyRoute } from '../http/routes.ts';
import { acceptTask, taskAccess } from '../tasks/routes.ts';
import { taskAccepted } from '../tasks/schemas.ts';
import { migrateBody, migrationInput } from './input.ts';

export { migrateBody };

export function migrationRoutes(app: AppContext): AnyRoute[] {
  return [
    defineRoute({
      method: 'post',
      path: '/api/dashboards/migrate',
      tag: 'Dashboards',
      summary: 'Migrate dashboards to another environment (a task)',
      description: [
        'Per dashboard: export from the source; point every database at its mapped target database (request `db_mappings` over the persisted mappings; an unmapped database fails that dashboard with a next action, never a silent skip);',
        'pre-resolve collisions (a slug held by another target dashboard is dropped, a table that already has a dataset in the target is reused, a same-named database is never taken over);',
        "a dataset's `catalog` follows its database's mapping; when the target refuses to show the mapped database's connection or catalogs (403), the catalog goes as exported and the outcome's `warnings` name it (`step`, `code: catalog_not_checked`, `message`, `next_actions`: grant the permission or add a catalog rule), the dashboard not failed;",
        'import, dropping exactly the fields the target Superset rejects (learned from its own answer, reported per object); then verify that the dashboard is there, its charts are linked and each chart query runs.',
        'Each dashboard succeeds or fails on its own. Re-running converges without duplicates; a dashboard unchanged since the last migration into that target (same planned bundle, and the target still exports it as right after that import) is reported `unchanged` and not imported. `dry_run: true` imports nothing and reports per object create / update / unchanged / reuse with field differences.',
        "Row-level security (`rls`): the rules on each dashboard's datasets are compared between source and target (by name, filter type, clause, group key, role names and the migrated tables); each outcome carries them as `rls` (both sides, the differences, and what was written or ignored). A dry run reports the difference per dashboard and writes nothing.",
        "Companions (`companions`): what people build around a dashboard that no export carries (alerts and reports on it or its charts, owners of the dashboard, its charts and datasets, dashboard roles, custom tags, the annotation layers its charts draw with their annotations, the CSS template its CSS came from, saved queries behind its datasets, certification, its theme (6.0+: by uuid and content, a later edit written through the theme API), its embedded configuration (`allowed_domains` through the pair's text rules; the item lists `source_uuid` and the target's new `target_uuid`)) are read from the source and compared with the target by name or uuid, each kind as its mode says (`copy`, `strict`, `ignore`); each outcome lists them per kind as `companions` (each item `create`, `update`, `unchanged`, `only_in_target` or `missing`, with `done` once written). A kind an environment does not offer (alerts and reports without ALERT_REPORTS, themes before 6.0: named as dropped with a next action) is reported `available: false`, never failed. Copied reports start paused unless `companions.pause_reports` is false.",
        "Dashboards go in batches, each exported from the source in one call (and the target's copies in one more) and planned one by one; how many a batch reads and imports, and which imports go to Superset in one call, is described once in docs/migration-batching.md. A refused joint import is followed by each of its dashboards alone, with its own answer. The result's `timings` gives the time until the last import and the verification's time after it apart (each batch's dashboards are verified while the next batch imports, at most `VERIFY_CONCURRENCY` chart queries at once per environment). Up to 10,000 dashboards per task: outcomes are kept outside the workflow history, whose runs continue as new every `TASK_ITEMS_PER_RUN` dashboards.",
        'Cancelling finishes the batch in flight and leaves the rest untouched.',
      ].join(' '),
      access: taskAccess('migration'),
      body: migrateBody,
      responses: {
        202: { description: 'Migration task accepted', schema: taskAccepted },
        400: { description: 'Invalid body: empty `dashboard_ids`, the same environment twice, bad mappings (`validation_failed`)' },
        404: { description: 'An environment does not exist (an id that is not a UUID cannot exist either)' },
      },
      async handler(ctx, { body, principal }) {
        if (body.source_env_id === body.target_env_id) {
          throw new ValidationError('source and target environments must differ', [
            { field: 'body.target_env_id', message: 'must differ from source_env_id' },
          ]);
        }
        await app.stores.environments.get(body.source_env_id, 'Source environment');
        await app.stores.environments.get(body.target_env_id, 'Target environment');
        await acceptTask(ctx, app, {
          kind: 'migration',
          ...migrationInput(body),
          owner: principal,
        });
      },
    }),
  ];
}
