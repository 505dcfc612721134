/**
 * The target side of a batch's verification, begun by the batch: as soon as its imports (and
 * their companions' writes) are done, each imported dashboard's charts are read and checked in the
 * target, beside the source's checks (./source-checks-ahead.ts) and the next batch's plan, without
 * waiting for the verification activity to be scheduled. The verification takes what passed
 * (./chart-check/target-ahead.ts) and classifies it against the source as before; what failed, or
 * was not checked here, it checks itself.
 */
import type { MigrationServices, Request } from './context.ts';
import { inParallel } from './chart-check/parallel.ts';
import { runChecks } from './chart-check/run.ts';
import { upstreamFor } from './superset-upstream.ts';
import type { TargetChecked } from './chart-check/target-ahead.ts';
import type { ChartForCheck } from './chart-check/types.ts';

/** Dashboards whose charts are read at once. */
const DASHBOARDS_AT_ONCE = 3;
/** Chart-data calls of the batch's checks at once (the environment's own bound is ./chart-check/limit.ts's). */
const CALLS_AT_ONCE = 4;

/**
 * Begins the checks and returns at once: the batch does not wait for them (the next batch plans
 * meanwhile); each dashboard's checks are kept as a promise its verification awaits. The batch's
 * charts are checked as one list, so charts on one dataset go out together whichever dashboard
 * holds them (./chart-check/run.ts). Nothing here throws: what cannot be checked is left to the
 * verification.
 */
export function checkTargetsAhead(svc: MigrationServices, input: Request, taskId: string, targetDashboardIds: number[]): void {
  if (input.dryRun || !targetDashboardIds.length) return;
  const made = new Map(targetDashboardIds.map((id) => [id, Promise.withResolvers<TargetChecked | undefined>()]));
  for (const [id, m] of made) svc.caches.targetChecks.keep(taskId, id, m.promise);
  const run = async () => {
    const target = svc.chartQueries.limited(await upstreamFor(svc.deps, input.targetEnvId), input.targetEnvId);
    const release = await target.version().catch(() => null);
    const read = new Map<number, ChartForCheck[]>();
    await inParallel(targetDashboardIds, DASHBOARDS_AT_ONCE, async (id) => {
      const charts = await target.chartsForCheck(id).catch(() => null);
      if (charts) read.set(id, charts);
      else made.get(id)!.resolve(undefined);
    });
    const all = [...read.values()].flat();
    const checks = await runChecks(target, all, release, CALLS_AT_ONCE).catch(() => null);
    let at = 0;
    for (const [id, charts] of read) {
      made.get(id)!.resolve(checks ? { charts, checks: checks.slice(at, at + charts.length) } : undefined);
      at += charts.length;
    }
  };
  // Whatever is left unsettled (the target could not be opened) is the verification's to check.
  void run()
    .catch(() => undefined)
    .finally(() => {
      for (const m of made.values()) m.resolve(undefined);
    });
}
