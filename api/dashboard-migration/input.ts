/**
 * The migration request and its task input, built in one place for the HTTP route and the
 * assistant, so the two cannot drift: both parse the same body schema (same defaults) and get
 * the same input and params.
 */
import { z } from 'zod';
import type { TaskInputOf } from '../../contracts/task-kinds.ts';
import { RLS_MODES } from '../../contracts/rls.ts';
import { MAX_DASHBOARDS_PER_TASK } from '../../contracts/tasks.ts';
import { supersetId } from '../http/schemas.ts';
import { verificationInput, verificationOption } from '../http/verification.ts';

const id = supersetId('Superset');

export const migrateBody = z
  .object({
    // Any string: an id that is not a UUID is an unknown environment (404), as on every other endpoint.
    source_env_id: z.string({ error: 'source_env_id is required' }).trim().min(1, 'source_env_id is required').max(200),
    target_env_id: z.string({ error: 'target_env_id is required' }).trim().min(1, 'target_env_id is required').max(200),
    dashboard_ids: z
      .array(id, { error: 'dashboard_ids must be a list of dashboard ids' })
      .min(1, 'dashboard_ids must not be empty')
      .max(MAX_DASHBOARDS_PER_TASK, `at most ${MAX_DASHBOARDS_PER_TASK} dashboards per migration`)
      .transform((ids) => [...new Set(ids)]),
    db_mappings: z
      .array(z.object({ source_database_id: id, target_database_id: id }).strict())
      .max(500)
      .default([])
      .refine((m) => new Set(m.map((x) => x.source_database_id)).size === m.length, 'each source database may be mapped once')
      .describe('source database id → target database id, overriding the persisted mappings for this run'),
    overwrite: z.boolean().default(true).describe('update dashboards (and changed charts and datasets) that already exist in the target'),
    dry_run: z
      .boolean()
      .default(false)
      .describe('import nothing; report per object what would be created, updated or left unchanged, with differences'),
    rls: z
      .enum(RLS_MODES)
      .default('strict')
      .describe(
        "row-level-security rules on the dashboard's datasets (no export carries them): `strict` fails a dashboard whose rules differ between source and target (`code: rls_mismatch`); `copy` creates or updates the source's rules in the target after the import (by name; tables resolved to the imported datasets, roles matched by name; a role missing in the target fails the dashboard before anything is imported, `code: rls_role_missing`); `ignore` imports anyway and records the differences as the requester's choice",
      ),
    verification: verificationOption,
  })
  .strict();

export type MigrateBody = z.output<typeof migrateBody>;

export function migrationInput(body: MigrateBody): { input: TaskInputOf<'migration'>; params: Record<string, unknown> } {
  return {
    input: {
      sourceEnvId: body.source_env_id,
      targetEnvId: body.target_env_id,
      dashboardIds: body.dashboard_ids,
      dbMappings: body.db_mappings,
      overwrite: body.overwrite,
      dryRun: body.dry_run,
      rls: body.rls,
      ...verificationInput(body.verification),
    },
    params: { ...body },
  };
}
