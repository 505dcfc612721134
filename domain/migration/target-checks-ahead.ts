/**
 * The target side of a batch's verification, begun by the batch: as soon as its imports (and
 * their companions' writes) are done, each imported dashboard's charts are read and checked in the
 * target, beside the source's checks (./source-checks-ahead.ts) and the next batch's plan, without
 * waiting for the verification activity to be scheduled. The verification takes what passed from
 * the task's prefetch plan (./prefetch-plan.ts targetChecks; ./chart-check/target-ahead.ts) and
 * classifies it against the source as before; what failed, or was not checked here, it checks
 * itself.
 *
 * The charts are read the way the source's are, from the target's own export: one export of the
 * batch's dashboards (the target as the writes left it, which the verification then records as
 * the target's state instead of exporting it again; the one the companions' views were read from
 * after the import when nothing was written since) gives each chart's viz type and saved query
 * context, the chart list the companions' views read after the import their uuids (one list read
 * when they did not), and each dashboard's chart list is the one its companions' view read after
 * the import when nothing was written since; no chart detail is read.
 */
import { Bundle } from '../../lib/bundles/bundle.ts';
import { splitByDashboard } from '../../lib/bundles/split.ts';
import type { DashboardChart } from '../../lib/superset/types.ts';
import { fallbackLogged, failureText } from '../../lib/detached.ts';
import { maxBundleBytes } from './deps.ts';
import type { AheadScope } from './batch-context.ts';
import type { MigrationServices } from './context.ts';
import { exportedCharts } from './chart-check/exported.ts';
import { inParallel } from './chart-check/parallel.ts';
import { runChecks } from './chart-check/run.ts';
import type { TargetChecked } from './chart-check/target-ahead.ts';
import type { ChartForCheck } from './chart-check/types.ts';
import { takeTargetChartList, takeTargetExport, targetChartUuidsRead } from './companions/views-ahead.ts';
import type { TargetChecksName } from './prefetch-plan.ts';
import { upstreamFor } from './superset-upstream.ts';
import type { MigrationUpstream } from './upstream.ts';

/** Dashboards whose charts are read at once. */
const DASHBOARDS_AT_ONCE = 3;
/** Chart-data calls of the batch's checks at once (the environment's own bound is ./chart-check/limit.ts's). */
const CALLS_AT_ONCE = 4;

/** What a caller already holds of the dashboards in the target: their exports, their charts' uuids by id (a rerun's unchanged ones, ./unchanged-checks.ts). */
export interface HeldOfTarget {
  exports?: ReadonlyMap<number, Bundle>;
  uuids?: ReadonlyMap<number, string>;
  /** Wraps the target before its checks (an unchanged dashboard's: fresh answers, ./unchanged-checks.ts freshAnswers). */
  wrap?: (up: MigrationUpstream) => MigrationUpstream;
}

/** Each dashboard's part of the checks, settled as they are made (undefined: not checked here). */
interface Made {
  checks: Map<number, PromiseWithResolvers<TargetChecked | undefined>>;
  exports: Map<number, PromiseWithResolvers<Bundle | undefined>>;
}

/**
 * Begins the checks and returns at once: the read `name` of the batch's prefetch plan, handed to
 * the verification (the next batch plans meanwhile). Each dashboard's checks, and the export they
 * were read from, are its parts (`targetChecks`, `targetExport`), promises its verification takes.
 * The batch's charts are checked as one list, so charts on one dataset go out together whichever
 * dashboard holds them (./chart-check/run.ts). Nothing here throws: what cannot be checked is
 * left to the verification.
 */
export function checkTargetsAhead(ctx: AheadScope, name: TargetChecksName, targetDashboardIds: number[], held: HeldOfTarget = {}): void {
  if (ctx.input.dryRun || !targetDashboardIds.length) return;
  const made: Made = {
    checks: new Map(targetDashboardIds.map((id) => [id, Promise.withResolvers<TargetChecked | undefined>()])),
    exports: new Map(targetDashboardIds.map((id) => [id, Promise.withResolvers<Bundle | undefined>()])),
  };
  // Taken now, before the next batch's writes: a list read before them is only used if the companions wrote nothing since.
  const taken = {
    lists: new Map(targetDashboardIds.map((id) => [id, takeTargetChartList(ctx.input, id)])),
    viewed: targetDashboardIds.map((id) => takeTargetExport(ctx.input, id)),
    uuidsRead: uuidsHeldOrViewed(held.uuids, targetChartUuidsRead(ctx.input)),
  };
  const settleRest = () => [...made.checks.values(), ...made.exports.values()].forEach((m) => m.resolve(undefined));
  const promises = <T>(m: Map<number, PromiseWithResolvers<T>>) => new Map([...m].map(([id, p]) => [id, p.promise]));
  // The batch does not wait for the target's checks (the next batch plans meanwhile): the verification takes each
  // dashboard's parts, awaiting them, and checks itself whatever is left unsettled; the task's end settles what it never took.
  ctx.prefetch.begin(
    name,
    `the target checks of dashboards ${targetDashboardIds.join(', ')}`,
    (signal) => checkTargets(ctx, targetDashboardIds, held, { made, taken, signal }).finally(settleRest),
    { targetChecks: promises(made.checks), targetExport: promises(made.exports) },
  );
}

/** The checks themselves: the target's export, each dashboard's charts read from it, one list of checks for all. */
async function checkTargets(
  ctx: AheadScope,
  ids: number[],
  held: HeldOfTarget,
  r: {
    made: Made;
    taken: {
      lists: Map<number, Promise<DashboardChart[]> | undefined>;
      viewed: Array<Promise<Bundle | undefined> | undefined>;
      uuidsRead: UuidsRead;
    };
    signal: AbortSignal;
  },
): Promise<void> {
  const { svc, input } = ctx;
  const step = `task ${ctx.taskId}: target checks ahead`;
  const orNull = <T>(what: string, read: PromiseLike<T>) => fallbackLogged(`${step}, ${what}`, read, null, svc.deps.logger);
  const target = svc.chartQueries.limited((held.wrap ?? ((up) => up))(await upstreamFor(svc.deps, input.targetEnvId)), input.targetEnvId);
  const release = await orNull("the target's release", target.version());
  const bundles = (await exportTaken(ids, r.taken.viewed)) ?? heldExports(ids, held.exports) ?? (await exportOf(svc, target, ids));
  for (const [id, e] of r.made.exports) e.resolve(bundles?.get(id));
  const read = new Map<number, DashboardChart[]>();
  await inParallel(ids, DASHBOARDS_AT_ONCE, async (id) => {
    r.signal.throwIfAborted();
    const list = await orNull(`dashboard ${id}'s chart list`, r.taken.lists.get(id) ?? target.dashboardCharts(id));
    if (list) read.set(id, list as DashboardChart[]);
  });
  const chartIds = [...read.values()].flat().map((c) => c.id);
  const uuids = bundles ? await orNull("the charts' uuids", chartUuids(target, chartIds, r.taken.uuidsRead)) : null;
  const charts = new Map<number, ChartForCheck[]>();
  await inParallel(ids, DASHBOARDS_AT_ONCE, async (id) => {
    r.signal.throwIfAborted();
    const bundle = bundles?.get(id);
    const list = read.get(id);
    const exported =
      bundle && list && uuids ? exportedCharts(bundle, new Map(list.map((c) => [c.id, uuids.get(c.id) ?? null]))) : undefined;
    const got = await orNull(`dashboard ${id}'s charts`, target.chartsForCheck(id, list && Promise.resolve(list), exported));
    if (got) charts.set(id, got);
    else r.made.checks.get(id)!.resolve(undefined);
  });
  r.signal.throwIfAborted();
  const checks = await orNull("the charts' checks", runChecks(target, [...charts.values()].flat(), release, CALLS_AT_ONCE));
  let at = 0;
  for (const [id, list] of charts) {
    r.made.checks.get(id)!.resolve(checks ? { charts: list, checks: checks.slice(at, at + list.length) } : undefined);
    at += list.length;
  }
}

type UuidsRead = (ids: number[]) => Promise<Map<number, string>>;

/** The charts' uuids by id: those the companions' views listed after the import, the rest in one list read. */
async function chartUuids(
  target: MigrationUpstream,
  ids: number[],
  read: (ids: number[]) => Promise<Map<number, string>>,
): Promise<Map<number, string | null>> {
  const known: Map<number, string | null> = await read(ids);
  const rest = ids.filter((id) => !known.has(id));
  if (rest.length) for (const [id, uuid] of await target.chartUuids(rest)) known.set(id, uuid);
  return known;
}

/**
 * The export the companions' views were read from after the import (./companions/views-ahead.ts),
 * when it holds every one of these dashboards and nothing was written since; null otherwise.
 */
async function exportTaken(ids: number[], taken: Array<Promise<Bundle | undefined> | undefined>): Promise<Map<number, Bundle> | null> {
  if (taken.some((t) => !t)) return null;
  const bundles = await Promise.all(taken.map((t) => t ?? Promise.resolve(undefined)));
  if (bundles.some((b) => !b)) return null;
  return new Map(ids.map((id, at) => [id, bundles[at]!]));
}

/** The charts' uuids the caller holds, the rest as the companions' views listed them. */
function uuidsHeldOrViewed(
  held: ReadonlyMap<number, string> | undefined,
  viewed: (ids: number[]) => Promise<Map<number, string>>,
): (ids: number[]) => Promise<Map<number, string>> {
  return async (ids) => {
    const known = new Map([...(held ?? [])].filter(([id]) => ids.includes(id)));
    for (const [id, uuid] of await viewed(ids.filter((id) => !known.has(id)))) known.set(id, uuid);
    return known;
  };
}

/** The exports the caller holds, when they cover every one of these dashboards; null otherwise. */
function heldExports(ids: number[], held: ReadonlyMap<number, Bundle> | undefined): Map<number, Bundle> | null {
  return held && ids.every((id) => held.has(id)) ? new Map(ids.map((id) => [id, held.get(id)!])) : null;
}

/** The target's export of these dashboards, one call for all, by dashboard id; null when it could not be read. */
async function exportOf(svc: MigrationServices, target: MigrationUpstream, ids: number[]): Promise<Map<number, Bundle> | null> {
  try {
    return splitByDashboard(Bundle.fromZip(await target.exportDashboards(ids), maxBundleBytes(svc.deps)));
  } catch (err) {
    svc.deps.logger.warn(`the target's export of dashboards ${ids.join(', ')} for the checks ahead failed: ${failureText(err)}`);
    return null;
  }
}
