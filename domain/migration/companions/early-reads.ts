/**
 * The companions' reads begun ahead of the comparisons that need them (a migration's batch begins
 * them as its exports land, or as it sends its import: ../batch.ts), kept under the task's source
 * snapshot (or the activity) for those comparisons. None of them ever rejects: a comparison that
 * finds a read failed asks again and meets the failure itself.
 */
import type { Bundle } from '../../../lib/bundles/bundle.ts';
import { detached, fallbackLogged } from '../../../lib/detached.ts';
import type { SupersetClient } from '../../../lib/superset/client.ts';
import type { MigrationDeps } from '../deps.ts';
import { directoryOf } from './people.ts';
import { memoisedLists } from './recording.ts';
import { clientsOf, snapshotOf, type CompanionScope } from './scope.ts';
import { readSourceDashboardRows, readSourceEmbeddedAhead, sourceViewsTogether } from './view-caches.ts';

/** A migration's scope: its services' deps with their logger, which the reads' failures are logged to. */
type EarlyScope = Pick<CompanionScope, 'input' | 'clients' | 'taskSnapshot'> & {
  svc: { deps: Pick<MigrationDeps, 'superset' | 'logger'> };
};

/**
 * Begins `read` (`what`) of these dashboards on the source, under the scope's snapshot: settles
 * once begun (not when read), never rejects; a failure to open the source or of the read is logged.
 */
function beginOnSource(
  scope: EarlyScope,
  dashboardIds: number[],
  what: string,
  read: (source: SupersetClient, ids: number[], snapshot: object) => unknown,
): Promise<void> {
  if (!dashboardIds.length) return Promise.resolve();
  const log = scope.svc.deps.logger;
  const label = `${what} of dashboards ${dashboardIds.join(', ')} read ahead`;
  const begun = clientsOf(scope).then(([source]) => {
    // Detached: kept under the snapshot for the comparisons, which await it (or read again and meet the failure).
    detached(label, Promise.resolve(read(source, dashboardIds, snapshotOf(scope))), log);
  });
  return fallbackLogged(`${label}, opening the source`, begun, undefined, log);
}

/**
 * The source dashboards' views read together (one list read for all their charts, another for
 * their datasets: ./views.ts readViews) ahead of the comparisons: each then finds its dashboard's
 * view read (once per snapshot either way, ./view-caches.ts sourceViewOf). If the joint read
 * fails, each comparison reads its own and meets its failure. Settles when the reads are begun:
 * the source's chart checks then find them (../source-checks-ahead.ts).
 */
export function readSourceViewsAhead(
  scope: EarlyScope,
  dashboardIds: number[],
  /** The batch's source export of a dashboard, when it holds one: the views read their dashboards from it and one list read. */
  exportOf?: (dashboardId: number) => Bundle | undefined,
): Promise<void> {
  return beginOnSource(scope, dashboardIds, 'the companions’ views', (source, ids, snapshot) =>
    sourceViewsTogether(source, ids, snapshot, exportOf),
  );
}

/**
 * Begins reading these source dashboards' embedded configurations (one read each: no list gives
 * them), kept under the snapshot for their comparisons.
 */
export function readSourceEmbeddedEarly(scope: EarlyScope, dashboardIds: number[]): Promise<void> {
  return beginOnSource(scope, dashboardIds, 'the embedded configurations', readSourceEmbeddedAhead);
}

/**
 * Begins reading these source dashboards' list rows in one read (./view-caches.ts
 * readSourceDashboardRows): what the roles kind compares before an import.
 */
export function readSourceDashboardRowsAhead(scope: EarlyScope, dashboardIds: number[]): Promise<void> {
  return beginOnSource(scope, dashboardIds, 'the dashboards’ list rows', readSourceDashboardRows);
}

/**
 * Begins reading what every dashboard's copy kinds compare of the environments as a whole: both
 * sides' accounts (owners, the owners of reports) and the source's lists of reports and saved
 * queries, kept under the snapshot. Never rejects: a failed read is logged, and asked again by
 * the comparison, which meets its failure.
 */
export function readEnvironmentsEarly(scope: EarlyScope): void {
  const log = scope.svc.deps.logger;
  const begun = clientsOf(scope).then(([source, target]) => {
    const snapshot = snapshotOf(scope);
    const lists = memoisedLists(source, snapshot);
    const reads: Array<[string, Promise<unknown>]> = [
      ["the source's accounts", directoryOf(source, snapshot)],
      ["the target's accounts", directoryOf(target, snapshot)],
      ["the source's reports", lists.reports.list()],
      ["the source's saved queries", lists.savedQueries.list()],
    ];
    // Detached: kept under the snapshot for the copy kinds' comparisons, which await them.
    for (const [what, read] of reads) detached(`${what} read ahead`, read, log);
  });
  // Detached: the batch goes on while the environments are read; each comparison awaits its own read.
  detached('the environments read ahead, opening them', begun, log);
}
