/**
 * The source side of a batch's verification, begun while the batch imports: each dashboard it is
 * about to import has its source charts checked, and the checks that pass are kept by the worker
 * (./chart-check/source-cache.ts). The batch does not wait for them: the verification that follows
 * takes a dashboard's source charts from the task's prefetch plan (./prefetch-plan.ts sourceChecks,
 * a promise settled once its checks are kept), finds its checks kept and queries the target
 * alone. A check that fails is not kept, so the verification makes it again; anything this step
 * cannot do (the source unreachable) is left to the verification, which meets it as its own.
 *
 * The charts are read from what the batch already holds of the source: each dashboard's chart
 * list and chart uuids as the companions' views read them, and its export (uuid, viz type, saved
 * query context), so no chart's detail is read again (./chart-check/exported.ts).
 */
import type { Bundle } from '../../lib/bundles/bundle.ts';
import { fallbackLogged } from '../../lib/detached.ts';
import type { AheadScope } from './batch-context.ts';
import { exportedCharts } from './chart-check/exported.ts';
import { inParallel } from './chart-check/parallel.ts';
import { runChecks } from './chart-check/run.ts';
import type { ChartForCheck } from './chart-check/types.ts';
import type { SourceChecksName } from './prefetch-plan.ts';
import { upstreamFor } from './superset-upstream.ts';
import { sourceChartList, sourceChartUuids } from './companions/view-caches.ts';

/** Dashboards whose charts are read at once. */
const DASHBOARDS_AT_ONCE = 3;
/** Chart-data calls of the batch's checks at once (the environment's own bound is ./chart-check/limit.ts's). */
const CALLS_AT_ONCE = 4;

/**
 * Begins the checks and returns at once: the read `name` of the batch's prefetch plan, handed to
 * the verification. Each dashboard's source charts are its part (`sourceCharts`), a promise that
 * settles once its checks are kept (undefined: not read here, the verification reads them). The
 * batch's charts are checked as one list, so charts on one dataset go out together whichever
 * dashboard holds them (./chart-check/run.ts). Nothing here throws.
 */
export function checkSourcesAhead(
  ctx: AheadScope,
  name: SourceChecksName,
  dashboardIds: number[],
  /** Settles once the companions' views of these dashboards are begun (their chart lists and uuids are then kept). */
  viewsBegun: Promise<void> = Promise.resolve(),
  /** What those views are kept under (../companions/step.ts snapshotOf): the task's snapshot, or the input. */
  taskSnapshot: object = ctx.input,
): void {
  const { svc, input, taskId } = ctx;
  if (input.dryRun || !dashboardIds.length) return;
  const kept = svc.caches.sourceChecks;
  const made = new Map(dashboardIds.map((id) => [id, Promise.withResolvers<ChartForCheck[] | undefined>()]));
  // Taken now: the batch forgets its source exports when it ends, which may come before a dashboard's turn here.
  const bundles = new Map(dashboardIds.map((id) => [id, svc.caches.exportedSources.get(taskId, id)]));
  const log = svc.deps.logger;
  const step = `task ${taskId}: source checks ahead`;
  const run = async (signal: AbortSignal) => {
    const source = svc.chartQueries.limited(await upstreamFor(svc.deps, input.sourceEnvId), input.sourceEnvId);
    const release = await fallbackLogged(`${step}, the source's release`, source.version(), null, log);
    await viewsBegun;
    const read = new Map<number, ChartForCheck[]>();
    await inParallel(dashboardIds, DASHBOARDS_AT_ONCE, async (id) => {
      signal.throwIfAborted();
      const exported = await exportedOf(bundles.get(id), sourceChartUuids(taskSnapshot, id));
      // The chart list the companions' views read of this dashboard, when they did (not asked twice).
      const list = sourceChartList(taskSnapshot, id);
      const charts = await fallbackLogged(`${step}, dashboard ${id}'s charts`, source.chartsForCheck(id, list, exported), null, log);
      if (charts) read.set(id, charts);
      else made.get(id)!.resolve(undefined);
    });
    signal.throwIfAborted();
    const todo = [...read.values()].flat().filter((c) => !kept.get(kept.keyOf(input.sourceEnvId, c, release)));
    const checks = await fallbackLogged(`${step}, the charts' checks`, runChecks(source, todo, release, CALLS_AT_ONCE), null, log);
    if (checks) for (const [k, c] of todo.entries()) kept.record(kept.keyOf(input.sourceEnvId, c, release), checks[k]!);
    for (const [id, charts] of read) made.get(id)!.resolve(charts);
  };
  const settleRest = () => [...made.values()].forEach((m) => m.resolve(undefined));
  // The batch does not wait for the source's checks: the verification takes each dashboard's part, and reads and checks
  // itself whatever is left unsettled (e.g. the source could not be opened).
  const parts = { sourceCharts: new Map([...made].map(([id, m]) => [id, m.promise])) };
  ctx.prefetch.begin(
    name,
    `the source checks of dashboards ${dashboardIds.join(', ')}`,
    (signal) => run(signal).finally(settleRest),
    parts,
  );
}

/** The dashboard's charts as the source's export wrote them, paired by the uuids its views listed; undefined without both. */
async function exportedOf(bundle: Bundle | undefined, uuids: Promise<Map<number, string | null> | undefined> | undefined) {
  const byId = bundle && (await uuids);
  return bundle && byId ? exportedCharts(bundle, byId) : undefined;
}
