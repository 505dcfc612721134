/**
 * The companions' reads begun ahead of the comparisons that need them (a migration's batch begins
 * them as its exports land, or as it sends its import: ../batch.ts), kept under the task's source
 * snapshot (or the activity) for those comparisons. None of them ever rejects: a comparison that
 * finds a read failed asks again and meets the failure itself.
 */
import type { Bundle } from '../../../lib/bundles/bundle.ts';
import { directoryOf } from './people.ts';
import { memoisedLists } from './recording.ts';
import { clientsOf, snapshotOf, type CompanionScope } from './scope.ts';
import { readSourceDashboardRows, readSourceEmbeddedAhead, sourceViewsTogether } from './view-caches.ts';

/**
 * The source dashboards' views read together (one list read for all their charts, another for
 * their datasets: ./views.ts readViews) while the batch plans them one after another: each plan's
 * comparison then finds its dashboard's view read (once per activity either way, ./view-caches.ts
 * sourceViewOf). If the joint read fails, each comparison reads its own and meets its failure.
 * Answers when the reads are begun: the source's chart checks then find them (../source-checks-ahead.ts).
 */
export function readSourceViewsAhead(
  scope: Pick<CompanionScope, 'svc' | 'input' | 'clients' | 'taskSnapshot'>,
  dashboardIds: number[],
  /** The batch's source export of a dashboard, when it holds one: the views read their dashboards from it and one list read. */
  exportOf?: (dashboardId: number) => Bundle | undefined,
): Promise<void> {
  if (!dashboardIds.length) return Promise.resolve();
  // Settles once the reads are begun (and kept for the activity), not when they end; never rejects.
  return clientsOf(scope)
    .then(([source]) => void sourceViewsTogether(source, dashboardIds, snapshotOf(scope), exportOf))
    .catch(() => undefined);
}

/**
 * Begins reading these source dashboards' embedded configurations (kept under the snapshot for
 * their comparisons): they need no export, so a batch asks for them beside its exports. Never
 * rejects; a failed read is asked again by its comparison.
 */
export function readSourceEmbeddedEarly(
  scope: Pick<CompanionScope, 'svc' | 'input' | 'clients' | 'taskSnapshot'>,
  dashboardIds: number[],
): Promise<void> {
  if (!dashboardIds.length) return Promise.resolve();
  return clientsOf(scope)
    .then(([source]) => readSourceEmbeddedAhead(source, dashboardIds, snapshotOf(scope)))
    .catch(() => undefined);
}

/**
 * Begins reading what every dashboard's copy kinds compare of the environments as a whole: both
 * sides' people (owners, the accounts of reports) and the source's lists of reports and saved
 * queries, kept under the snapshot. Never rejects: a failed read is asked again by the
 * comparison, which meets its failure.
 */
export function readEnvironmentsEarly(scope: Pick<CompanionScope, 'svc' | 'input' | 'clients' | 'taskSnapshot'>): void {
  void clientsOf(scope)
    .then(([source, target]) => {
      const snapshot = snapshotOf(scope);
      const lists = memoisedLists(source, snapshot);
      const reads: Array<Promise<unknown>> = [
        directoryOf(source, snapshot),
        directoryOf(target, snapshot),
        lists.reports.list(),
        lists.savedQueries.list(),
      ];
      for (const read of reads) read.catch(() => undefined);
    })
    .catch(() => undefined);
}

/**
 * Begins reading these source dashboards' list rows in one read (./view-caches.ts
 * readSourceDashboardRows): what the roles kind compares before an import. Settles once begun;
 * never rejects.
 */
export function readSourceDashboardRowsAhead(
  scope: Pick<CompanionScope, 'svc' | 'input' | 'clients' | 'taskSnapshot'>,
  dashboardIds: number[],
): Promise<void> {
  if (!dashboardIds.length) return Promise.resolve();
  return clientsOf(scope)
    .then(([source]) => readSourceDashboardRows(source, dashboardIds, snapshotOf(scope)))
    .catch(() => undefined);
}
