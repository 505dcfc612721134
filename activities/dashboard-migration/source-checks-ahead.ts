/**
 * The source side of a batch's verification, run while the batch imports: each dashboard it is
 * about to import has its source charts checked, and the checks that pass are kept by the worker
 * (./chart-check/source-cache.ts). The verification that follows the import then finds them kept
 * and queries the target alone, while the source, idle during the import, has done its share.
 * A check that fails is not kept, so the verification makes it again; anything this step cannot
 * do (the source unreachable) is left to the verification, which meets it as its own.
 */
import type { MigrationServices, Request } from './context.ts';
import { inParallel } from './chart-check/parallel.ts';
import { runChecks } from './chart-check/run.ts';
import { upstreamFor } from './superset-upstream.ts';
import { sourceChartList } from './companions/view-caches.ts';

/** Dashboards checked at once, as the verification does (chart queries stay within VERIFY_CONCURRENCY). */
const DASHBOARDS_AT_ONCE = 3;
/** Calls of one dashboard's checks at once. */
const CHART_PARALLELISM = 2;

export async function checkSourcesAhead(svc: MigrationServices, input: Request, taskId: string, dashboardIds: number[]): Promise<void> {
  if (input.dryRun || !dashboardIds.length) return;
  try {
    const source = svc.chartQueries.limited(await upstreamFor(svc.deps, input.sourceEnvId), input.sourceEnvId);
    const release = await source.version().catch(() => null);
    const kept = svc.caches.sourceChecks;
    await inParallel(dashboardIds, DASHBOARDS_AT_ONCE, async (id) => {
      // The chart list the companions' views read of this dashboard, when they did (not asked twice).
      const charts = await source.chartsForCheck(id, sourceChartList(input, id)).catch(() => null);
      if (!charts) return;
      kept.keepCharts(taskId, id, charts);
      const keys = charts.map((c) => kept.keyOf(input.sourceEnvId, c, release));
      const todo = charts.filter((_, i) => !kept.get(keys[i]!));
      const checks = await runChecks(source, todo, release, CHART_PARALLELISM).catch(() => null);
      if (checks) for (const [k, c] of todo.entries()) kept.record(kept.keyOf(input.sourceEnvId, c, release), checks[k]!);
    });
  } catch {
    // The verification checks the source itself.
  }
}
