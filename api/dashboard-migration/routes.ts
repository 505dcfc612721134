import { z } from 'zod';
import { supersetId } from '../http/schemas.ts';
import { RLS_MODES } from '../../contracts/rls.ts';
import { ValidationError } from '../../lib/errors.ts';
import type { AppContext } from '../context.ts';
import { defineRoute, type AnyRoute } from '../http/routes.ts';
import { acceptTask, taskAccess } from '../tasks/routes.ts';
import { taskAccepted } from '../tasks/schemas.ts';

const id = supersetId('Superset');

export const migrateBody = z
  .object({
    // Any string: an id that is not a UUID is an unknown environment (404), as on every other endpoint.
    source_env_id: z.string({ error: 'source_env_id is required' }).trim().min(1, 'source_env_id is required').max(200),
    target_env_id: z.string({ error: 'target_env_id is required' }).trim().min(1, 'target_env_id is required').max(200),
    dashboard_ids: z
      .array(id, { error: 'dashboard_ids must be a list of dashboard ids' })
      .min(1, 'dashboard_ids must not be empty')
      .max(200, 'at most 200 dashboards per migration')
      .transform((ids) => [...new Set(ids)]),
    db_mappings: z
      .array(z.object({ source_database_id: id, target_database_id: id }).strict())
      .max(500)
      .default([])
      .refine((m) => new Set(m.map((x) => x.source_database_id)).size === m.length, 'each source database may be mapped once')
      .describe('source database id → target database id, overriding the persisted mappings for this run'),
    overwrite: z.boolean().default(true).describe('update dashboards (and changed charts and datasets) that already exist in the target'),
    dry_run: z.boolean().default(false).describe('import nothing; report per object what would be created, updated or left unchanged, with differences'),
    rls: z
      .enum(RLS_MODES)
      .default('strict')
      .describe(
        "row-level-security rules on the dashboard's datasets (no export carries them): `strict` fails a dashboard whose rules differ between source and target (`code: rls_mismatch`); `copy` creates or updates the source's rules in the target after the import (by name; tables resolved to the imported datasets, roles matched by name; a role missing in the target fails the dashboard before anything is imported, `code: rls_role_missing`); `ignore` imports anyway and records the differences as the requester's choice",
      ),
  })
  .strict();

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
        'import, dropping exactly the fields the target Superset rejects (learned from its own answer, reported per object); then verify that the dashboard is there, its charts are linked and each chart query runs.',
        'Each dashboard succeeds or fails on its own. Re-running converges without duplicates; a dashboard unchanged since the last migration into that target (same planned bundle, and the target still exports it as right after that import) is reported `unchanged` and not imported. `dry_run: true` imports nothing and reports per object create / update / unchanged / reuse with field differences.',
        'Row-level security (`rls`): the rules on each dashboard\'s datasets are compared between source and target (by name, filter type, clause, group key, role names and the migrated tables); each outcome carries them as `rls` (both sides, the differences, and what was written or ignored). A dry run reports the difference per dashboard and writes nothing.',
        'Cancelling finishes the dashboard in flight and leaves the rest untouched.',
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
          throw new ValidationError('source and target environments must differ', [{ field: 'body.target_env_id', message: 'must differ from source_env_id' }]);
        }
        await app.environmentStore.get(body.source_env_id, 'Source environment');
        await app.environmentStore.get(body.target_env_id, 'Target environment');
        await acceptTask(ctx, app, {
          kind: 'migration',
          input: {
            sourceEnvId: body.source_env_id,
            targetEnvId: body.target_env_id,
            dashboardIds: body.dashboard_ids,
            dbMappings: body.db_mappings,
            overwrite: body.overwrite,
            dryRun: body.dry_run,
            rls: body.rls,
          },
          params: body,
          owner: principal,
        });
      },
    }),
  ];
}
