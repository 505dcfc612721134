import { CancellationScope, continueAsNew, log, proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../activities/index.ts';
import {
  failedBackupItem,
  type BackupInput,
  type BackupItemBrief,
  type BackupRunState,
  type BackupSummary,
  type RetentionTotals,
  type RestoreInput,
  type RestoreItem,
  type RestoreResult,
  type RetentionOutcome,
} from '../contracts/backup.ts';
import { NON_RETRYABLE_FAILURE_TYPES } from '../contracts/failures.ts';
import { failureOf } from './item-failure.ts';
import { endTaskWithResult, endTaskWithStoredItems, reportTaskProgress, runAsTask } from './task-run.ts';

/** One dashboard = one activity; Superset outages are retried, a refusal is that dashboard's outcome. */
const perDashboard = proxyActivities<Activities>({
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '1 minute',
  retry: {
    initialInterval: '2 seconds',
    maximumInterval: '30 seconds',
    maximumAttempts: 4,
    nonRetryableErrorTypes: NON_RETRYABLE_FAILURE_TYPES,
  },
});

const housekeeping = proxyActivities<Activities>({
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '1 minute',
  retry: { initialInterval: '2 seconds', maximumInterval: '30 seconds', maximumAttempts: 5 },
});

/**
 * Backs up dashboards one by one into the backup store, then applies the retention policy to
 * them. Each dashboard succeeds or fails on its own; the task ends FAILED (with the per-dashboard
 * result kept) when any of them failed, so a partial backup never reads as a success.
 * Cancellation takes effect between dashboards: the one in flight is finished and recorded.
 *
 * Any number of dashboards runs in this one task with a bounded history: each dashboard's item is
 * recorded in `task_items` by its activity (the workflow sees a brief answer), and after
 * TASK_ITEMS_PER_RUN dashboards, or sooner when Temporal suggests it, the workflow continues as
 * new under the same workflow id carrying counters only (BackupRunState). Each run prunes the
 * dashboards it backed up; the task row's result is assembled from `task_items` at the end.
 */
export async function backupWorkflow(input: BackupInput): Promise<BackupSummary> {
  return runAsTask(
    async () => {
      const state: BackupRunState = input.continued ?? (await firstRun(input));
      const total = state.requested;
      const backedUp: number[] = [];
      let cancelled = false;
      let reached = 0;
      for (const [i, dashboardId] of input.dashboardIds.entries()) {
        if (CancellationScope.current().consideredCancelled) {
          cancelled = true;
          break;
        }
        // The run is full: the next run goes on from here (a cancel was looked for just above).
        if (i >= state.itemsPerRun || (i > 0 && workflowInfo().continueAsNewSuggested)) break;
        await backUpOne(input.envId, dashboardId, state.offset + i, state, backedUp);
        reached = i + 1;
      }

      if (backedUp.length) {
        state.retention = await CancellationScope.nonCancellable(() => pruneRun(input.envId, backedUp, state.retention));
      }
      if (!cancelled && reached < input.dashboardIds.length) {
        const next: BackupInput = {
          envId: input.envId,
          dashboardIds: input.dashboardIds.slice(reached),
          continued: { ...state, offset: state.offset + reached, run: state.run + 1 },
        };
        log.info(`continuing as a new workflow run (${state.run + 1}) after ${state.offset + reached} of ${total} dashboards`);
        return await continueAsNew<typeof backupWorkflow>(next);
      }

      const done = state.succeeded + state.failed;
      const summary = summaryOf(input.envId, state, cancelled);
      if (cancelled) {
        await endTaskWithStoredItems('CANCELLED', summary, `cancelled after ${done} of ${total} dashboards; the rest were not backed up`);
      }
      if (state.failed) {
        const more = state.failed - state.firstFailures.length;
        await endTaskWithStoredItems(
          'FAILED',
          summary,
          `${state.failed} of ${total} dashboard backup(s) failed: ${state.firstFailures.join('; ')}${more > 0 ? `; and ${more} more (every one is in the result)` : ''}`,
          'BackupIncomplete',
        );
      }
      return summary;
    },
    { items: 'stored' },
  );
}

/**
 * One dashboard (its item and progress line written by the activity), run to the end even when a
 * cancel arrives meanwhile; the loop stops before the next one. Its outcome is counted in `state`,
 * and a dashboard backed up is added to `backedUp`.
 */
function backUpOne(envId: string, dashboardId: number, position: number, state: BackupRunState, backedUp: number[]): Promise<void> {
  const total = state.requested;
  return CancellationScope.nonCancellable(async () => {
    let brief: BackupItemBrief;
    try {
      brief = await perDashboard.backupDashboardOfTask({ envId, dashboardId, position, total });
    } catch (err) {
      const item = failedBackupItem(dashboardId, failureOf(err, 'backup'));
      log.error(`dashboard ${dashboardId}: backup failed: ${item.error}`);
      await housekeeping.recordTaskItem({ position, key: dashboardId, item });
      await reportTaskProgress({ done: position + 1, total, message: `dashboard ${dashboardId}: failed` });
      brief = { status: 'failed', deduplicated: false, store: state.store, error: item.error };
    }
    if (brief.store) state.store = brief.store;
    if (brief.status === 'succeeded') {
      state.succeeded++;
      if (brief.deduplicated) state.deduplicated++;
      backedUp.push(dashboardId);
    } else {
      state.failed++;
      if (state.firstFailures.length < MAX_FAILURES_NAMED)
        state.firstFailures.push(`${dashboardId} (${(brief.error ?? 'failed').slice(0, 300)})`);
    }
  });
}

/** The task's summary from the counters every run carried on. */
function summaryOf(envId: string, state: BackupRunState, cancelled: boolean): BackupSummary {
  const total = state.requested;
  const notStarted = total - (state.succeeded + state.failed);
  return {
    env_id: envId,
    store: state.store,
    totals: {
      requested: total,
      succeeded: state.succeeded,
      failed: state.failed,
      deduplicated: state.deduplicated,
      not_started: notStarted,
    },
    not_started: notStarted,
    retention: retentionOutcome(state.retention),
    cancelled,
    next_actions: [],
  };
}

/** Failures named in a failed backup's error message; the result lists every one. */
const MAX_FAILURES_NAMED = 20;

async function firstRun(input: BackupInput): Promise<BackupRunState> {
  const total = input.dashboardIds.length;
  const [itemsPerRun] = await CancellationScope.nonCancellable(() =>
    Promise.all([housekeeping.taskItemsPerRun(), reportTaskProgress({ done: 0, total, message: `backing up ${total} dashboard(s)` })]),
  );
  return {
    offset: 0,
    requested: total,
    itemsPerRun,
    run: 1,
    store: '',
    succeeded: 0,
    failed: 0,
    deduplicated: 0,
    firstFailures: [],
    retention: null,
  };
}

/** Prunes the dashboards one run backed up, and adds the outcome to the task's totals. */
async function pruneRun(envId: string, dashboardIds: number[], sum: RetentionTotals | null): Promise<RetentionTotals> {
  const totals = sum ?? { policy: null, pruned: 0, blobs_deleted: 0, skipped_other_store: 0, failed_runs: 0, error: null };
  try {
    const r = await housekeeping.applyBackupRetention({ envId, dashboardIds });
    return {
      ...totals,
      policy: r.policy,
      pruned: totals.pruned + r.pruned,
      blobs_deleted: totals.blobs_deleted + r.blobs_deleted,
      skipped_other_store: totals.skipped_other_store + r.skipped_other_store,
    };
  } catch (err) {
    // The backups themselves are safe; pruning runs again with the next backup.
    const message = failureOf(err, 'retention').error;
    log.warn(`retention could not be applied: ${message}`);
    return { ...totals, failed_runs: totals.failed_runs + 1, error: totals.error ?? message };
  }
}

/** The task's retention outcome; null when pruning failed in every run (nothing is known of it). */
function retentionOutcome(t: RetentionTotals | null): RetentionOutcome | null {
  if (!t?.policy) return null;
  return {
    policy: t.policy,
    pruned: t.pruned,
    blobs_deleted: t.blobs_deleted,
    skipped_other_store: t.skipped_other_store,
    ...(t.error ? { error: `pruning failed in ${t.failed_runs} run(s): ${t.error}` } : {}),
  };
}

/**
 * Imports a stored backup into its environment with overwrite: the dashboard comes back with the
 * backed-up layout and settings; charts, datasets and databases it needs are re-created when they
 * were deleted. Objects that would collide with something else in the environment block the
 * restore instead of being taken over.
 */
export async function restoreWorkflow(input: RestoreInput): Promise<RestoreResult> {
  return runAsTask(
    async () => {
      await reportTaskProgress({ done: 0, total: 1, message: `restoring backup ${input.backupId}` });
      // Once the import starts it is finished and recorded: a cancel then comes too late to undo it.
      const item = await CancellationScope.nonCancellable(async () => {
        let outcome: RestoreItem;
        try {
          outcome = await perDashboard.restoreBackup(input);
        } catch (err) {
          outcome = {
            kind: 'dashboard',
            id: input.dashboardId,
            title: null,
            status: 'failed',
            outcome: 'failed',
            backup_id: input.backupId,
            dashboard_uuid: null,
            restored_dashboard_id: null,
            ...failureOf(err, 'restore'),
          };
        }
        await reportTaskProgress({ done: 1, total: 1, message: outcome.status });
        return outcome;
      });
      const result: RestoreResult = {
        backup_id: input.backupId,
        env_id: input.envId,
        restored_dashboard_id: item.restored_dashboard_id,
        items: [item],
        not_started: 0,
        cancelled: false,
        next_actions: [],
      };
      if (item.status === 'failed')
        await endTaskWithResult('FAILED', result, `restore of backup ${input.backupId} failed: ${item.error}`, 'RestoreFailed');
      log.info(`restored '${item.title}' as dashboard ${item.restored_dashboard_id}`);
      return result;
    },
    { gate: { approval: input.approval, what: `restoring backup ${input.backupId}` } },
  );
}
