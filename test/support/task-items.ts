/**
 * A large finished migration task arranged through the stores (no Superset, no workflow): its
 * dashboards recorded in `task_items` as a migration records them, and its result summarised from
 * them as the workflow does (contracts/migration.ts summariseMigration). Every `failEvery`-th
 * dashboard failed on row-level security with the suggested fix (a migration again with
 * `rls: "copy"`), every `changeEvery`-th would create or update objects, the rest are unchanged.
 */
import { randomUUID } from 'node:crypto';
import { migrateAgainAction, summariseMigration, type DashboardOutcome, type ObjectPlan } from '../../contracts/migration.ts';
import { TASK_KINDS } from '../../contracts/task-kinds.ts';
import type { Harness } from './harness.ts';

export interface SeededTask {
  id: string;
  failed: number[];
  changed: number[];
  unchanged: number[];
}

const CHARTS = 10;

function objects(id: number, action: ObjectPlan['action']): ObjectPlan[] {
  const plan = (kind: ObjectPlan['kind'], name: string, n: number): ObjectPlan => ({
    kind,
    file: `${kind}s/${name.replace(/\W+/g, '_')}.yaml`,
    name,
    uuid: `00000000-0000-4000-8000-${String(id * 100 + n).padStart(12, '0')}`,
    action: kind === 'chart' && n === 1 ? action : action === 'create' ? 'create' : 'unchanged',
    ...(action === 'update' && kind === 'chart' && n === 1
      ? { differences: [{ field: 'slice_name', source: `Chart ${id}-1 new`, target: `Chart ${id}-1` }] }
      : {}),
  });
  return [
    plan('dashboard', `Board ${id}`, 0),
    ...Array.from({ length: CHARTS }, (_, c) => plan('chart', `Chart ${id}-${c + 1}`, c + 1)),
    plan('dataset', `sales_${id}`, 50),
    plan('database', 'examples', 99),
  ];
}

/** Seeds the task; `ownerId` owns it (null: the system). */
export async function seedMigrationTask(
  h: Harness,
  opts: {
    dashboards: number;
    failEvery: number;
    changeEvery: number;
    ownerId?: string | null;
    ownerUsername?: string | null;
    title?: (id: number) => string;
  },
): Promise<SeededTask> {
  const { tasks, taskItems } = h.boot.context.stores;
  const input = { sourceEnvId: 'src-env', targetEnvId: 'dst-env', dbMappings: [], overwrite: true, dryRun: true };
  const ids = Array.from({ length: opts.dashboards }, (_, i) => i + 1);
  const id = `migration-${randomUUID()}`;
  await tasks.create({
    id,
    type: 'migration',
    ownerId: opts.ownerId ?? null,
    ownerUsername: opts.ownerUsername ?? null,
    envIds: [input.sourceEnvId, input.targetEnvId],
    dashboardIds: ids.map(String),
    // what the caller asked for, as the migrate route stores it
    params: {
      source_env_id: input.sourceEnvId,
      target_env_id: input.targetEnvId,
      dashboard_ids: ids,
      dry_run: true,
      overwrite: true,
      verification: 'browser',
      db_mappings: [],
    },
    idempotencyKey: null,
    summary: `Migrate ${ids.length} dashboards (seeded)`,
    details: null,
    workflowType: TASK_KINDS.migration.workflow,
    workflowInput: { ...input, dashboardIds: ids },
    firstLogLine: 'seeded',
  });
  const seeded: SeededTask = { id, failed: [], changed: [], unchanged: [] };
  const outcomes: DashboardOutcome[] = ids.map((d) => {
    const title = opts.title?.(d) ?? `Board ${d}`;
    const base = {
      kind: 'dashboard' as const,
      id: d,
      title,
      target_dashboard_id: null,
      dashboard_uuid: null,
      database_mappings: [],
      collisions: [],
      dropped_fields: [],
      defaulted_fields: [],
      learned_rejections: [],
      chart_uuids: [],
      import_attempts: 0,
    };
    if (d % opts.failEvery === 0) {
      seeded.failed.push(d);
      const fix = migrateAgainAction(
        'retry_with_rls_copy',
        `Migrate dashboard ${d} again copying its row-level security`,
        { ...input, rls: 'copy' },
        [d],
        true,
      );
      return {
        ...base,
        status: 'failed',
        outcome: 'failed',
        step: 'plan',
        code: 'rls_mismatch',
        error: `RLS differs for dashboard ${d}`,
        objects: objects(d, 'unchanged'),
        next_actions: [fix],
      };
    }
    const changed = d % opts.changeEvery === 0;
    (changed ? seeded.changed : seeded.unchanged).push(d);
    return {
      ...base,
      status: 'planned',
      outcome: 'planned',
      objects: objects(d, changed ? (d % 2 ? 'create' : 'update') : 'unchanged'),
      next_actions: [],
    };
  });
  const result = summariseMigration(
    { ...input, requested: ids.length, cancelled: false, timings: { migration_ms: 61_000, verification_ms: 0 } },
    outcomes,
  );
  // Finished at once, so no reconciler ever starts a workflow for it; the items follow.
  await tasks.finish(id, seeded.failed.length ? 'FAILED' : 'SUCCEEDED', result, null);
  for (let i = 0; i < outcomes.length; i += 50)
    await Promise.all(outcomes.slice(i, i + 50).map((o, n) => taskItems.record(id, i + n, o.id, o)));
  return seeded;
}

/**
 * One task row as the API would write it, for a test that arranges its result through the
 * stores (nothing runs: finish it with `stores.tasks.finish`). The workflow type is the kind's own.
 */
export async function createStoredTask(
  h: Harness,
  opts: { type: keyof typeof TASK_KINDS; id?: string; summary?: string; owner?: { id: string; username: string } },
): Promise<string> {
  const id = opts.id ?? randomUUID();
  const { created } = await h.boot.context.stores.tasks.create({
    id,
    type: opts.type,
    ownerId: opts.owner?.id ?? null,
    ownerUsername: opts.owner?.username ?? null,
    envIds: [],
    dashboardIds: [],
    params: {},
    idempotencyKey: null,
    summary: opts.summary ?? `${opts.type} arranged by the test`,
    details: null,
    workflowType: TASK_KINDS[opts.type].workflow,
    workflowInput: {},
    firstLogLine: opts.owner ? `task created by ${opts.owner.username}` : 'created by the test',
  });
  if (!created) throw new Error(`task ${id} already existed`);
  return id;
}
