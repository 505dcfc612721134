/**
 * The target side of a batch's verification, begun by the batch: as soon as its imports (and
 * their companions' writes) are done, each imported dashboard's charts are read and checked in the
 * target, beside the source's checks (./source-checks-ahead.ts) and the next batch's plan, without
 * waiting for the verification activity to be scheduled. The verification takes what passed
 * (./chart-check/target-ahead.ts) and classifies it against the source as before; what failed, or
 * was not checked here, it checks itself.
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
import { detached, fallbackLogged, failureText } from '../../lib/detached.ts';
import { maxBundleBytes } from './deps.ts';
import type { MigrationServices, Request } from './context.ts';
import { exportedCharts } from './chart-check/exported.ts';
import { inParallel } from './chart-check/parallel.ts';
import { runChecks } from './chart-check/run.ts';
import type { TargetChecked } from './chart-check/target-ahead.ts';
import type { ChartForCheck } from './chart-check/types.ts';
import { takeTargetChartList, takeTargetExport, targetChartUuidsRead } from './companions/views-ahead.ts';
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

/**
 * Begins the checks and returns at once: the batch does not wait for them (the next batch plans
 * meanwhile); each dashboard's checks, and the export they were read from, are kept as promises
 * its verification awaits. The batch's charts are checked as one list, so charts on one dataset go
 * out together whichever dashboard holds them (./chart-check/run.ts). Nothing here throws: what
 * cannot be checked is left to the verification.
 */
export function checkTargetsAhead(
  svc: MigrationServices,
  input: Request,
  taskId: string,
  targetDashboardIds: number[],
  held: HeldOfTarget = {},
): void {
  if (input.dryRun || !targetDashboardIds.length) return;
  const cache = svc.caches.targetChecks;
  const made = new Map(targetDashboardIds.map((id) => [id, Promise.withResolvers<TargetChecked | undefined>()]));
  const exports = new Map(targetDashboardIds.map((id) => [id, Promise.withResolvers<Bundle | undefined>()]));
  for (const id of targetDashboardIds) {
    cache.checks.keep(taskId, id, made.get(id)!.promise);
    cache.exports.keep(taskId, id, exports.get(id)!.promise);
  }
  // Taken now, before the next batch's writes: a list read before them is only used if the companions wrote nothing since.
  const lists = new Map(targetDashboardIds.map((id) => [id, takeTargetChartList(input, id)]));
  const viewed = targetDashboardIds.map((id) => takeTargetExport(input, id));
  const uuidsRead = uuidsHeldOrViewed(held.uuids, targetChartUuidsRead(input));
  const log = svc.deps.logger;
  const step = `task ${taskId}: target checks ahead`;
  const orNull = <T>(what: string, read: PromiseLike<T>) => fallbackLogged(`${step}, ${what}`, read, null, log);
  const run = async () => {
    const target = svc.chartQueries.limited((held.wrap ?? ((up) => up))(await upstreamFor(svc.deps, input.targetEnvId)), input.targetEnvId);
    const release = await orNull("the target's release", target.version());
    const bundles =
      (await exportTaken(targetDashboardIds, viewed)) ??
      heldExports(targetDashboardIds, held.exports) ??
      (await exportOf(svc, target, targetDashboardIds));
    for (const [id, e] of exports) e.resolve(bundles?.get(id));
    const read = new Map<number, DashboardChart[]>();
    await inParallel(targetDashboardIds, DASHBOARDS_AT_ONCE, async (id) => {
      const list = await orNull(`dashboard ${id}'s chart list`, lists.get(id) ?? target.dashboardCharts(id));
      if (list) read.set(id, list as DashboardChart[]);
    });
    const chartIds = [...read.values()].flat().map((c) => c.id);
    const uuids = bundles ? await orNull("the charts' uuids", chartUuids(target, chartIds, uuidsRead)) : null;
    const charts = new Map<number, ChartForCheck[]>();
    await inParallel(targetDashboardIds, DASHBOARDS_AT_ONCE, async (id) => {
      const bundle = bundles?.get(id);
      const list = read.get(id);
      const exported =
        bundle && list && uuids ? exportedCharts(bundle, new Map(list.map((c) => [c.id, uuids.get(c.id) ?? null]))) : undefined;
      const got = await orNull(`dashboard ${id}'s charts`, target.chartsForCheck(id, list && Promise.resolve(list), exported));
      if (got) charts.set(id, got);
      else made.get(id)!.resolve(undefined);
    });
    const checks = await orNull("the charts' checks", runChecks(target, [...charts.values()].flat(), release, CALLS_AT_ONCE));
    let at = 0;
    for (const [id, list] of charts) {
      made.get(id)!.resolve(checks ? { charts: list, checks: checks.slice(at, at + list.length) } : undefined);
      at += list.length;
    }
  };
  const settleRest = () => [...made.values(), ...exports.values()].forEach((m) => m.resolve(undefined));
  // Detached: the batch does not wait for the target's checks (the next batch plans meanwhile); the verification awaits what
  // they kept and checks itself whatever is left unsettled. Not yet bounded by the activity: issue 49's prefetch plan.
  detached(step, run().finally(settleRest), log);
}

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
