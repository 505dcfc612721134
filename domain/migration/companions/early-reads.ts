/**
 * The companions' reads begun ahead of the comparisons that need them (a migration's batch begins
 * them as its exports land, or as it sends its import: ../batch.ts), kept under the task's source
 * snapshot (or the activity) for those comparisons, each through the batch's prefetch run under
 * the name the plan declares for it (../prefetch-plan.ts), which holds it until it is settled.
 * None of them ever rejects: a comparison that finds a read failed asks again and meets the
 * failure itself; the run logs it.
 */
import type { Bundle } from '../../../lib/bundles/bundle.ts';
import type { SupersetClient } from '../../../lib/superset/client.ts';
import type { MigrationDeps } from '../deps.ts';
import type { PrefetchName } from '../prefetch-plan.ts';
import type { PrefetchRun } from '../prefetch-runs.ts';
import { directoryOf } from './people.ts';
import { memoisedLists } from './recording.ts';
import { clientsOf, snapshotOf, type CompanionScope } from './scope.ts';
import { readSourceDashboardRows, readSourceEmbeddedAhead, sourceDashboardRowsRead, sourceViewsTogether } from './view-caches.ts';

/** A migration's scope: its services' deps, the request and the task's snapshot. */
type EarlyScope = Pick<CompanionScope, 'input' | 'clients' | 'taskSnapshot'> & {
  svc: { deps: Pick<MigrationDeps, 'superset' | 'logger'> };
};

/**
 * Begins `read` (`what`) of these dashboards on the source as the read `name`, under the scope's
 * snapshot; `begun` is called once the read is asked (or the source could not be opened).
 */
function beginOnSource(
  run: PrefetchRun,
  name: PrefetchName,
  scope: EarlyScope,
  dashboardIds: number[],
  what: string,
  read: (source: SupersetClient, ids: number[], snapshot: object) => Promise<unknown>,
  begun: () => void = () => undefined,
): void {
  if (!dashboardIds.length) return begun();
  run.begin(name, `${what} of dashboards ${dashboardIds.join(', ')}`, async () => {
    let reading: Promise<unknown>;
    try {
      const [source] = await clientsOf(scope);
      reading = read(source, dashboardIds, snapshotOf(scope));
    } finally {
      begun();
    }
    await reading;
  });
}

/**
 * The source dashboards' views read together (one list read for all their charts, another for
 * their datasets: ./views.ts readViews) ahead of the comparisons: each then finds its dashboard's
 * view read (once per snapshot either way, ./view-caches.ts sourceViewOf). If the joint read
 * fails, each comparison reads its own and meets its failure. Settles when the reads are begun:
 * the source's chart checks then find them (../source-checks-ahead.ts).
 */
export function readSourceViewsAhead(
  run: PrefetchRun,
  scope: EarlyScope,
  dashboardIds: number[],
  /** The batch's source export of a dashboard, when it holds one: the views read their dashboards from it and one list read. */
  exportOf?: (dashboardId: number) => Bundle | undefined,
  /** The batch's own dashboards, or the next batch's (read during this one's import). */
  name: 'sourceViews' | 'nextBatchViews' = 'sourceViews',
): Promise<void> {
  const begun = Promise.withResolvers<void>();
  const read = (source: SupersetClient, ids: number[], snapshot: object) => sourceViewsTogether(source, ids, snapshot, exportOf);
  beginOnSource(run, name, scope, dashboardIds, 'the companions’ views', read, begun.resolve);
  return begun.promise;
}

/**
 * Begins reading these source dashboards' embedded configurations (one read each: no list gives
 * them), kept under the snapshot for their comparisons.
 */
export function readSourceEmbeddedEarly(
  run: PrefetchRun,
  scope: EarlyScope,
  dashboardIds: number[],
  name: 'embeddedConfigurations' | 'nextBatchEmbedded' = 'embeddedConfigurations',
): void {
  beginOnSource(run, name, scope, dashboardIds, 'the embedded configurations', readSourceEmbeddedAhead);
}

/**
 * Begins reading these source dashboards' list rows in one read (./view-caches.ts
 * readSourceDashboardRows): what the roles kind compares before an import. Settles when begun.
 */
export function readSourceDashboardRowsAhead(run: PrefetchRun, scope: EarlyScope, dashboardIds: number[]): Promise<void> {
  const begun = Promise.withResolvers<void>();
  const read = (source: SupersetClient, ids: number[], snapshot: object) => {
    readSourceDashboardRows(source, ids, snapshot);
    return sourceDashboardRowsRead(snapshot, ids);
  };
  beginOnSource(run, 'sourceDashboardRows', scope, dashboardIds, 'the dashboards’ list rows', read, begun.resolve);
  return begun.promise;
}

/**
 * Begins reading what every dashboard's copy kinds compare of the environments as a whole: both
 * sides' accounts (owners, the owners of reports) and the source's lists of reports and saved
 * queries, kept under the snapshot. A failed read is logged by the run, and asked again by the
 * comparison, which meets its failure.
 */
export function readEnvironmentsEarly(run: PrefetchRun, scope: EarlyScope): void {
  run.begin('environmentLists', 'the environments, opening them', async () => {
    const [source, target] = await clientsOf(scope);
    const snapshot = snapshotOf(scope);
    const lists = memoisedLists(source, snapshot);
    const reads: Array<[string, () => Promise<unknown>]> = [
      ["the source's accounts", () => directoryOf(source, snapshot)],
      ["the target's accounts", () => directoryOf(target, snapshot)],
      ["the source's reports", () => lists.reports.list()],
      ["the source's saved queries", () => lists.savedQueries.list()],
    ];
    for (const [what, read] of reads) run.begin('environmentLists', what, read);
  });
}
