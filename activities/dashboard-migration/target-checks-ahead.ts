/**
 * The target side of a batch's verification, begun inside the batch: as soon as its imports (and
 * their companions' writes) are done, each imported dashboard's charts are read and checked in the
 * target while the source's checks (./source-checks-ahead.ts) still run on the other Superset. The
 * verification that follows takes what passed (./chart-check/target-ahead.ts) and classifies it
 * against the source as before; what failed, or was not checked here, it checks itself.
 */
import type { MigrationServices, Request } from './context.ts';
import { inParallel } from './chart-check/parallel.ts';
import { runChecks } from './chart-check/run.ts';
import { upstreamFor } from './superset-upstream.ts';

/** Dashboards checked at once, as the verification does (chart queries stay within VERIFY_CONCURRENCY). */
const DASHBOARDS_AT_ONCE = 3;
/** Calls of one dashboard's checks at once. */
const CHART_PARALLELISM = 2;

export async function checkTargetsAhead(
  svc: MigrationServices,
  input: Request,
  taskId: string,
  targetDashboardIds: number[],
): Promise<void> {
  if (input.dryRun || !targetDashboardIds.length) return;
  try {
    const target = svc.chartQueries.limited(await upstreamFor(svc.deps, input.targetEnvId), input.targetEnvId);
    const release = await target.version().catch(() => null);
    await inParallel(targetDashboardIds, DASHBOARDS_AT_ONCE, async (id) => {
      const charts = await target.chartsForCheck(id).catch(() => null);
      if (!charts) return;
      const checks = await runChecks(target, charts, release, CHART_PARALLELISM).catch(() => null);
      if (checks) svc.caches.targetChecks.keep(taskId, id, { charts, checks });
    });
  } catch {
    // The verification checks the target itself.
  }
}
