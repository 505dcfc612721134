/**
 * The source side of a batch's verification, begun while the batch imports: each dashboard it is
 * about to import has its source charts checked, and the checks that pass are kept by the worker
 * (./chart-check/source-cache.ts). The batch does not wait for them: the verification that follows
 * awaits a dashboard's source charts (kept as a promise, settled once its checks are kept), finds
 * its checks kept and queries the target alone. A check that fails is not kept, so the
 * verification makes it again; anything this step cannot do (the source unreachable) is left to
 * the verification, which meets it as its own.
 *
 * The charts are read from what the batch already holds of the source: each dashboard's chart
 * list and chart uuids as the companions' views read them, and its export (uuid, viz type, saved
 * query context), so no chart's detail is read again (./chart-check/exported.ts).
 */
import type { Bundle } from '../../lib/bundles/bundle.ts';
import { detached, fallbackLogged } from '../../lib/detached.ts';
import type { MigrationServices, Request } from './context.ts';
import { exportedCharts } from './chart-check/exported.ts';
import { inParallel } from './chart-check/parallel.ts';
import { runChecks } from './chart-check/run.ts';
import type { ChartForCheck } from './chart-check/types.ts';
import { upstreamFor } from './superset-upstream.ts';
import { sourceChartList, sourceChartUuids } from './companions/view-caches.ts';

/** Dashboards whose charts are read at once. */
const DASHBOARDS_AT_ONCE = 3;
/** Chart-data calls of the batch's checks at once (the environment's own bound is ./chart-check/limit.ts's). */
const CALLS_AT_ONCE = 4;

/**
 * Begins the checks and returns at once. Each dashboard's source charts are kept for the task's
 * verification as a promise that settles once its checks are kept (undefined: not read here, the
 * verification reads them). The batch's charts are checked as one list, so charts on one dataset
 * go out together whichever dashboard holds them (./chart-check/run.ts). Nothing here throws.
 */
export function checkSourcesAhead(
  svc: MigrationServices,
  input: Request,
  taskId: string,
  dashboardIds: number[],
  /** Settles once the companions' views of these dashboards are begun (their chart lists and uuids are then kept). */
  viewsBegun: Promise<void> = Promise.resolve(),
  /** What those views are kept under (../companions/step.ts snapshotOf): the task's snapshot, or the input. */
  taskSnapshot: object = input,
): void {
  if (input.dryRun || !dashboardIds.length) return;
  const kept = svc.caches.sourceChecks;
  const made = new Map(dashboardIds.map((id) => [id, Promise.withResolvers<ChartForCheck[] | undefined>()]));
  for (const [id, m] of made) kept.charts.keep(taskId, id, m.promise);
  // Taken now: the batch forgets its source exports when it ends, which may come before a dashboard's turn here.
  const bundles = new Map(dashboardIds.map((id) => [id, svc.caches.exportedSources.get(taskId, id)]));
  const log = svc.deps.logger;
  const step = `task ${taskId}: source checks ahead`;
  const run = async () => {
    const source = svc.chartQueries.limited(await upstreamFor(svc.deps, input.sourceEnvId), input.sourceEnvId);
    const release = await fallbackLogged(`${step}, the source's release`, source.version(), null, log);
    await viewsBegun;
    const read = new Map<number, ChartForCheck[]>();
    await inParallel(dashboardIds, DASHBOARDS_AT_ONCE, async (id) => {
      const exported = await exportedOf(bundles.get(id), sourceChartUuids(taskSnapshot, id));
      // The chart list the companions' views read of this dashboard, when they did (not asked twice).
      const charts = await fallbackLogged(
        `${step}, dashboard ${id}'s charts`,
        source.chartsForCheck(id, sourceChartList(taskSnapshot, id), exported),
        null,
        log,
      );
      if (charts) read.set(id, charts);
      else made.get(id)!.resolve(undefined);
    });
    const todo = [...read.values()].flat().filter((c) => !kept.get(kept.keyOf(input.sourceEnvId, c, release)));
    const checks = await fallbackLogged(`${step}, the charts' checks`, runChecks(source, todo, release, CALLS_AT_ONCE), null, log);
    if (checks) for (const [k, c] of todo.entries()) kept.record(kept.keyOf(input.sourceEnvId, c, release), checks[k]!);
    for (const [id, charts] of read) made.get(id)!.resolve(charts);
  };
  // Detached: the batch does not wait for the source's checks (the verification awaits what they
  // kept, and reads and checks itself whatever is left unsettled, e.g. the source could not be opened).
  detached(
    step,
    run().finally(() => {
      for (const m of made.values()) m.resolve(undefined);
    }),
    log,
  );
}

/** The dashboard's charts as the source's export wrote them, paired by the uuids its views listed; undefined without both. */
async function exportedOf(bundle: Bundle | undefined, uuids: Promise<Map<number, string | null> | undefined> | undefined) {
  const byId = bundle && (await uuids);
  return bundle && byId ? exportedCharts(bundle, byId) : undefined;
}
