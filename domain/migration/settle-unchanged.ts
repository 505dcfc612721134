import { mayShortcut } from '../../db/dashboard-migration/store.ts';
import { carriedVerification } from '../../contracts/migration.ts';
import type { RlsReport } from '../../contracts/rls.ts';
import { Bundle } from '../../lib/bundles/bundle.ts';
import { splitByDashboard } from '../../lib/bundles/split.ts';
import { maxBundleBytes } from './deps.ts';
import { outcomeBase } from './apply.ts';
import type { BatchContext } from './batch-context.ts';
import { envRulesFor, mappingsFor, openUpstreams, type BatchDashboard } from './context.ts';
import type { PreparedBundle } from './plan.ts';
import { settledCompanions } from './companions/step.ts';
import { rehashAfterCompanions, wroteCompanions } from './companion-state.ts';
import { planOnRecordedCopy, rulesMayTouch } from './recorded-copy.ts';
import { checkUnchangedAhead, targetChartUuids } from './unchanged-checks.ts';

/**
 * A rerun's first look (see ./recorded-copy.ts): each dashboard whose source and target copy
 * are as the last migration left them is recorded `unchanged` from the batch's two exports and
 * both environments' databases and rules, without the target's lists. Returns the rest, for the
 * full plan: all of them when a read fails (the full plan meets the failure per dashboard).
 * Each one's verification is carried (`verification: "if_changed"`) or its target checked again,
 * those checks begun here, beside the companions' comparison (./unchanged-checks.ts).
 */
export async function settleUnchanged(ctx: BatchContext): Promise<BatchDashboard[]> {
  const { input, todo, records, log, taskId } = ctx;
  let both: Awaited<ReturnType<typeof readBoth>>;
  try {
    both = await readBoth(ctx);
  } catch (err) {
    log.info(`a rerun, but its exports could not be compared (${(err as Error).message.slice(0, 200)}): each dashboard is planned in full`);
    return todo;
  }
  const rest: BatchDashboard[] = [];
  const same: Array<{ d: BatchDashboard; prepared: PreparedBundle; last: string }> = [];
  for (const d of todo) {
    const prepared = unchangedPlan(ctx, both, d);
    if (prepared) same.push({ d, prepared, last: records.get(d.id)!.task_id ?? '?' });
    else rest.push(d);
  }
  const carried = verifyOrCarry(ctx, both, same);
  // Companions are compared (side by side) and the copy kinds written here too; a strict difference or a refused write sends it to the full plan.
  const companions = await settledCompanions(
    { svc: ctx.svc, input, mappings: both.mappings, envRules: both.envRules, log, taskSnapshot: ctx.taskSnapshot },
    same.map(({ d, prepared }) => ({ dashboardId: d.id, subject: prepared })),
    // The views read from the two exports the comparison was made on (nothing is written before they are read).
    { source: (id) => ctx.svc.caches.exportedSources.get(taskId, id), target: (id) => both.copies.get(id) },
  );
  const rewritten: Array<{ targetDashboardId: number; dashboardUuid: string }> = [];
  for (const [at, { d, prepared, last }] of same.entries()) {
    const settled = companions[at];
    if (!settled) {
      rest.push(d);
      continue;
    }
    if (wroteCompanions(settled.reports))
      rewritten.push({ targetDashboardId: records.get(d.id)!.target_dashboard_id, dashboardUuid: prepared.dashboardUuid });
    const state = carried.get(d.id);
    log.info(
      `'${prepared.title}' is unchanged since task ${last} migrated it and the target holds it as then: not imported; ${state ? `its verification carried from task ${state.from_task_id ?? '?'}` : 'its target verified again'}`,
    );
    const rls = { mode: input.rls ?? 'strict', source_rules: [], target_rules: [], differences: [] } satisfies RlsReport;
    await ctx.outcomes.finish(d.position, {
      ...outcomeBase(d.id, prepared),
      status: 'unchanged',
      rls,
      companions: settled.reports,
      next_actions: settled.next_actions,
      ...(state ? { verification_state: state } : {}),
    });
  }
  await rehashAfterCompanions(ctx.svc, input.targetEnvId, both.target, rewritten, log);
  // In the batch's order, for the full plan.
  return todo.filter((d) => rest.includes(d));
}

/**
 * Each unchanged dashboard's verification carried (`if_changed`, contracts/migration.ts
 * carriedVerification) or, for the others, its target's checks begun now, beside the companions'
 * comparison, from the copy's export in hand (./unchanged-checks.ts). Returns what is carried, by source id.
 */
function verifyOrCarry(
  ctx: BatchContext,
  both: Awaited<ReturnType<typeof readBoth>>,
  same: ReadonlyArray<{ d: BatchDashboard; prepared: PreparedBundle }>,
): Map<number, ReturnType<typeof carriedVerification>> {
  const carried = new Map(same.map(({ d }) => [d.id, carriedVerification(ctx.input.verification, ctx.records.get(d.id)!)]));
  const toCheck = same
    .filter(({ d }) => !carried.get(d.id))
    .map(({ d, prepared }) => ({
      sourceDashboardId: d.id,
      targetDashboardId: prepared.targetDashboardId!,
      copy: both.copies.get(prepared.targetDashboardId!),
      chartUuids: targetChartUuids(prepared.objects),
    }));
  checkUnchangedAhead(ctx, toCheck);
  return carried;
}

/** The dashboard's plan on the target's recorded copy when both sides are as the last migration left them; null otherwise. */
function unchangedPlan(ctx: BatchContext, both: Awaited<ReturnType<typeof readBoth>>, d: BatchDashboard): PreparedBundle | null {
  const { input, records, taskId } = ctx;
  const last = records.get(d.id)!;
  const source = ctx.svc.caches.exportedSources.get(taskId, d.id);
  const copy = both.copies.get(last.target_dashboard_id);
  let prepared: PreparedBundle | null = null;
  try {
    if (source && copy && last.task_id !== taskId) {
      prepared = planOnRecordedCopy({
        bundle: source.clone(),
        copy,
        copyId: last.target_dashboard_id,
        sourceDbs: both.sourceDbs,
        targetDbs: both.targetDbs,
        mappings: both.mappings,
        envRules: both.envRules,
        catalogs: both.catalogs,
        request: { ...input, dashboardId: d.id },
      });
    }
  } catch {
    // expected: a dashboard this shortcut cannot plan is left to the full plan, which reads it again and reports its failure.
    return null; // an export the full plan reads and reports on
  }
  const same =
    prepared &&
    prepared.dashboardUuid === last.dashboard_uuid &&
    prepared.bundle.contentHash() === last.bundle_hash &&
    prepared.targetHash === last.target_hash &&
    mayShortcut(last) &&
    !rulesMayTouch(
      both.rules,
      prepared.datasets.map((x) => x.table_name),
    );
  return same ? prepared : null;
}

/**
 * What the comparison needs, read without the target's lists: both exports (the source's into
 * the worker's cache), the mappings, both environments' databases and rules.
 */
async function readBoth(ctx: BatchContext) {
  const { svc, input, todo, taskId } = ctx;
  const up = await openUpstreams(svc, input, taskId, { targetLists: false });
  // The source's export is kept in the worker's cache as it lands (./read-ahead.ts startReads).
  const [, early] = await Promise.all([ctx.reads.sourceExport, ctx.reads.targetExport]);
  const copies = early ? splitByDashboard(Bundle.fromZip(early.zip, maxBundleBytes(svc.deps))) : new Map<number, Bundle>();
  const mappings = await mappingsFor(svc.deps, input);
  // A database created since either index was read is read once more (no call when all are known).
  const bundled = todo.flatMap(
    (d) =>
      svc.caches.exportedSources
        .get(taskId, d.id)
        ?.of('databases')
        .map((f) => String(f.content.uuid)) ?? [],
  );
  const sourceDbs = await up.sourceIndex.databasesCovering(bundled);
  for (const id of new Set(mappings.values())) await up.index.database(id);
  // The catalogs each bundled dataset's target database has, as the full plan reads them (once per database per task).
  for (const d of todo) {
    const bundle = svc.caches.exportedSources.get(taskId, d.id);
    if (bundle) await up.index.catalogs.readFor(bundle, sourceDbs, mappings);
  }
  const rules = [...(await up.sourceIndex.rlsRules()), ...(await up.index.rlsRules())];
  const envRules = await envRulesFor(svc.deps, input);
  return { copies, mappings, sourceDbs, targetDbs: up.index.databases, rules, envRules, catalogs: up.index.catalogs, target: up.target };
}
