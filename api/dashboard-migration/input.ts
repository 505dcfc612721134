/**
 * The migration request and its task input, built in one place for the HTTP route and the
 * assistant, so the two cannot drift: both parse the same body schema (same defaults) and get
 * the same input and params.
 */
import { z } from 'zod';
import type { TaskInputOf } from '../../contracts/task-kinds.ts';
import { COMPANION_KINDS, COMPANION_MODES, DEFAULT_COMPANION_MODES } from '../../contracts/companions.ts';
import { RLS_MODES } from '../../contracts/rls.ts';
import { MAX_DASHBOARDS_PER_TASK } from '../../contracts/tasks.ts';
import { supersetId } from '../http/schemas.ts';
import { VERIFICATION_MODES } from '../../contracts/browser-check.ts';
import { verificationOption } from '../http/verification.ts';

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
        "row-level-security rules on the dashboard's datasets (no export carries them): `strict` (the default) fails a dashboard whose rules differ, `copy` writes the source's rules after the import, `ignore` records the differences. Details: docs/migrating-dashboards.md#field-rls",
      ),
    rls_overwrite: z
      .boolean()
      .default(false)
      .describe(
        "with `rls: copy`: a same-named target rule whose clause, filter type, group key or roles differ from the source's, or that would lose one of the migrated tables, is replaced by the source's (this may widen access). Default false: such a rule is left as it is and listed in `rls.writes` as `not_updated` with its `fields` and a next action; a rule that only gains tables is written",
      ),
    verification: migrationVerificationOption(),
    companions: companionsSchema(),
  })
  .strict();

/** The migration's `verification`: the shared modes, and `if_changed` for a rerun that carries what it does not check again. */
function migrationVerificationOption() {
  return z
    .enum([...VERIFICATION_MODES, 'if_changed'])
    .default('queries')
    .describe(
      `${verificationOption.description}. A dashboard unchanged since its last migration has its target checked again (\`verification_state: verified\`); with \`if_changed\` (chart queries otherwise) one whose last verification passed carries it instead (\`verification_state: carried\`, naming that task and time)`,
    );
}

/** `companions`: a mode per kind (each optional, its default in contracts/companions.ts) and `pause_reports`. */
export function companionsSchema() {
  const modes = Object.fromEntries(
    COMPANION_KINDS.map((k) => [k, z.enum(COMPANION_MODES).optional().describe(`default \`${DEFAULT_COMPANION_MODES[k]}\``)]),
  ) as Record<(typeof COMPANION_KINDS)[number], z.ZodOptional<z.ZodEnum<{ copy: 'copy'; strict: 'strict'; ignore: 'ignore' }>>>;
  return z
    .object({
      ...modes,
      pause_reports: z
        .boolean()
        .optional()
        .describe(
          "copied reports and alerts are created inactive in the target (default true), so nothing mails from there before someone checks; an update that changes the recipients, format, SQL, database, chart or dashboard of an active target report pauses it (named with a next action). false: every copied report takes the source's active switch, the explicit way to keep an updated report mailing",
        ),
      embedded_any_domain: z
        .boolean()
        .optional()
        .describe(
          "an embedded configuration whose source allows any domain (empty `allowed_domains`) replaces a target's non-empty list (default false: the target's list is kept and the item names it with a next action)",
        ),
    })
    .strict()
    .optional()
    .describe(
      `what the dashboard's companions that no export carries get, per kind: \`copy\`, \`strict\` or \`ignore\`; ${defaultsInWords()} (reports paused). Details: docs/migrating-dashboards.md#field-companions`,
    );
}

/** `roles default to \`strict\`, every other kind to \`copy\``: the defaults as the kinds' traits say them. */
function defaultsInWords(): string {
  const others = COMPANION_KINDS.filter((k) => DEFAULT_COMPANION_MODES[k] !== 'copy');
  if (!others.length) return 'every kind defaults to `copy`';
  return `${others.map((k) => `${k} default to \`${DEFAULT_COMPANION_MODES[k]}\``).join(', ')}, every other kind to \`copy\``;
}

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
      ...(body.rls_overwrite ? { rlsOverwrite: true } : {}),
      ...(body.verification === 'queries' ? {} : { verification: body.verification }),
      ...(body.companions ? { companions: body.companions } : {}),
    },
    params: { ...body },
  };
}
