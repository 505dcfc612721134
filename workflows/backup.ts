import { CancellationScope, log, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities/index.ts';
import {
  failedBackupItem,
  type BackupInput,
  type BackupItem,
  type BackupResult,
  type RestoreInput,
  type RestoreItem,
  type RestoreResult,
  type RetentionOutcome,
} from '../contracts/backup.ts';
import { NON_RETRYABLE_FAILURE_TYPES } from '../contracts/failures.ts';
import { failureOf } from './item-failure.ts';
import { endTaskWithResult, reportTaskProgress, runAsTask } from './task-run.ts';

/** One dashboard = one activity; Superset outages are retried, a refusal is that dashboard's outcome. */
const perDashboard = proxyActivities<Activities>({
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '1 minute',
  retry: { initialInterval: '2 seconds', maximumInterval: '30 seconds', maximumAttempts: 4, nonRetryableErrorTypes: NON_RETRYABLE_FAILURE_TYPES },
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
 */
export async function backupWorkflow(input: BackupInput): Promise<BackupResult> {
  return runAsTask(async () => {
    const total = input.dashboardIds.length;
    const items: BackupItem[] = [];
    let store = '';
    let cancelled = false;
    await CancellationScope.nonCancellable(() => reportTaskProgress({ done: 0, total, message: `backing up ${total} dashboard(s)` }));
    for (const [i, dashboardId] of input.dashboardIds.entries()) {
      if (CancellationScope.current().consideredCancelled) {
        cancelled = true;
        break;
      }
      // The dashboard and its progress line run to the end even when a cancel arrives meanwhile;
      // the loop stops before the next one, so the result always holds what was done.
      await CancellationScope.nonCancellable(async () => {
        let item: BackupItem;
        try {
          const r = await perDashboard.backupDashboard({ envId: input.envId, dashboardId });
          store = r.store;
          item = r.item;
        } catch (err) {
          item = failedBackupItem(dashboardId, failureOf(err, 'backup'));
        }
        items.push(item);
        if (item.status === 'succeeded') {
          log.info(
            `dashboard ${dashboardId} ('${item.title}'): backed up${item.deduplicated ? ', unchanged since an earlier backup (no new blob)' : ''}`,
          );
        } else {
          log.error(`dashboard ${dashboardId}${item.title ? ` ('${item.title}')` : ''}: backup failed: ${item.error}`);
        }
        await reportTaskProgress({ done: i + 1, total, message: `dashboard ${dashboardId}: ${item.status}` });
      });
    }

    let retention: RetentionOutcome | null = null;
    const backedUp = items.filter((i) => i.status === 'succeeded').map((i) => i.id);
    if (backedUp.length) {
      retention = await CancellationScope.nonCancellable(async () => {
        try {
          return await housekeeping.applyBackupRetention({ envId: input.envId, dashboardIds: backedUp });
        } catch (err) {
          // The backups themselves are safe; pruning runs again with the next backup.
          const message = failureOf(err, 'retention').error;
          log.warn(`retention could not be applied: ${message}`);
          return null;
        }
      });
    }

    const failed = items.filter((i) => i.status === 'failed');
    const result: BackupResult = {
      env_id: input.envId,
      store,
      totals: {
        requested: total,
        succeeded: items.length - failed.length,
        failed: failed.length,
        deduplicated: items.filter((i) => i.deduplicated).length,
        not_started: total - items.length,
      },
      items,
      not_started: total - items.length,
      retention,
      cancelled,
      next_actions: [],
    };
    if (cancelled) {
      await endTaskWithResult('CANCELLED', result, `cancelled after ${items.length} of ${total} dashboards; the rest were not backed up`);
    }
    if (failed.length) {
      await endTaskWithResult(
        'FAILED',
        result,
        `${failed.length} of ${total} dashboard backup(s) failed: ${failed.map((f) => `${f.id} (${f.error})`).join('; ')}`,
        'BackupIncomplete',
      );
    }
    return result;
  });
}

/**
 * Imports a stored backup into its environment with overwrite: the dashboard comes back with the
 * backed-up layout and settings; charts, datasets and databases it needs are re-created when they
 * were deleted. Objects that would collide with something else in the environment block the
 * restore instead of being taken over.
 */
export async function restoreWorkflow(input: RestoreInput): Promise<RestoreResult> {
  return runAsTask(async () => {
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
  });
}

