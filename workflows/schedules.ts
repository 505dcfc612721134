import { CancellationScope, log, ParentClosePolicy, proxyActivities, startChild, workflowInfo } from '@temporalio/workflow';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import type { Activities } from '../activities/index.ts';
import { forEachItem } from './for-each-item.ts';
import { IGNORE_COMPANIONS } from '../contracts/companions.ts';
import { NON_RETRYABLE_FAILURE_TYPES } from '../contracts/failures.ts';
import { migrateAgainAction } from '../contracts/migration.ts';
import type { DriftItem, DriftReportInput, DriftReportResult, ScheduledRunInput, ScheduledRunResult } from '../contracts/schedules.ts';
import { driftOf, failedDrift } from './drift.ts';
import { failureOf } from './item-failure.ts';
import { endTaskWithResult, reportTaskProgress, runAsTask } from './task-run.ts';

const bookkeeping = proxyActivities<Activities>({
  startToCloseTimeout: '2 minutes',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds', maximumAttempts: 10, nonRetryableErrorTypes: ['NothingToDo'] },
});

const following = proxyActivities<Activities>({
  startToCloseTimeout: '24 hours',
  heartbeatTimeout: '30 seconds',
  retry: { initialInterval: '2 seconds', maximumInterval: '30 seconds' },
});

const planning = proxyActivities<Activities>({
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '15 seconds',
  retry: {
    initialInterval: '2 seconds',
    maximumInterval: '30 seconds',
    maximumAttempts: 4,
    nonRetryableErrorTypes: NON_RETRYABLE_FAILURE_TYPES,
  },
});

/**
 * One run of a schedule (started by its Temporal Schedule): registers an ordinary task, runs the
 * task's workflow as a child with the task id as workflow id, and waits for it, so the schedule's
 * overlap policy sees a run as busy until its task ends.
 */
export async function scheduledRunWorkflow(input: ScheduledRunInput): Promise<ScheduledRunResult> {
  const { workflowId, firstExecutionRunId } = workflowInfo();
  let task;
  try {
    task = await bookkeeping.registerScheduledRun({ ...input, run: { workflowId, runId: firstExecutionRunId } });
  } catch (err) {
    const note = failureOf(err, 'register').error;
    log.warn(`schedule ${input.scheduleId}: nothing run: ${note}`);
    return { schedule_id: input.scheduleId, task_id: null, status: 'NOT_RUN', note };
  }
  if (!task) {
    log.warn(`schedule ${input.scheduleId} no longer exists; nothing run`);
    return { schedule_id: input.scheduleId, task_id: null, status: 'NOT_RUN', note: 'the schedule was deleted' };
  }
  let status: string;
  try {
    const child = await startChild(task.workflowType, {
      workflowId: task.taskId,
      args: [task.input],
      taskQueue: workflowInfo().taskQueue,
      // The task outlives this run: terminating a schedule's run never cuts a backup short.
      parentClosePolicy: ParentClosePolicy.ABANDON,
    });
    try {
      await child.result();
      status = 'SUCCEEDED';
    } catch {
      status = await CancellationScope.nonCancellable(() => following.awaitTaskEnd({ taskId: task.taskId }));
    }
  } catch (err) {
    // The API's reconciler started the registered task first: follow it through its row.
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    status = await following.awaitTaskEnd({ taskId: task.taskId });
  }
  log.info(`schedule ${input.scheduleId}: task ${task.taskId} ended ${status}`);
  return { schedule_id: input.scheduleId, task_id: task.taskId, status };
}

/** One dashboard's drift in the task's log: its status, each object and companion that differs, the error. */
function logDrift(dashboardId: number, item: DriftItem): void {
  const named = [
    ...item.differences.map((d) => `${d.kind} ${d.name}: ${d.action}`),
    ...(item.companions ?? []).map((c) => `${c.kind} '${c.name}'${c.on ? ` on ${c.on}` : ''}: ${c.action}`),
  ];
  log.info(
    `dashboard ${dashboardId}${item.title ? ` ('${item.title}')` : ''}: ${item.status}${named.length ? ` (${named.join('; ')})` : ''}${item.error ? ` (${item.error})` : ''}`,
  );
}

/** The report: each dashboard's drift, the totals, and (when some drifted) the migration that brings them in line. */
function driftResultOf(input: DriftReportInput, requested: number, items: DriftItem[], cancelled: boolean): DriftReportResult {
  const count = (s: DriftItem['status']) => items.filter((i) => i.status === s).length;
  const drifted = items.filter((i) => i.status === 'drifted');
  // Kinds to copy so migrating brings every drifted companion in line (roles are strict by default).
  const kinds = [...new Set(drifted.flatMap((i) => (i.companions ?? []).filter((c) => c.action !== 'missing').map((c) => c.kind)))];
  return {
    source_env_id: input.sourceEnvId,
    target_env_id: input.targetEnvId,
    totals: { compared: items.length, in_sync: count('in_sync'), drifted: count('drifted'), failed: count('failed') },
    items,
    not_started: requested - items.length,
    cancelled,
    next_actions: count('drifted')
      ? [
          migrateAgainAction(
            'migrate_drifted',
            `Bring the ${count('drifted')} drifted dashboard(s) in line by migrating them again (source wins${kinds.length ? `; their ${kinds.join(', ')} copied` : ''})`,
            { ...input, companions: Object.fromEntries(kinds.map((k) => [k, 'copy'])) },
            drifted.map((i) => i.id),
            true,
          ),
        ]
      : [],
  };
}

/**
 * A drift report: a dry-run migration (overwrite on, so every shared object is compared) of each
 * source dashboard the target holds, one activity per dashboard; nothing is written anywhere.
 */
export async function driftReportWorkflow(input: DriftReportInput): Promise<DriftReportResult> {
  return runAsTask(async () => {
    const ids = await planning.driftCandidates(input);
    await reportTaskProgress({ done: 0, total: ids.length, message: `comparing ${ids.length} dashboard(s)` });
    const { items, cancelled } = await forEachItem(
      ids,
      (id) => `dashboard ${id}`,
      async (dashboardId) => {
        let item: DriftItem;
        try {
          const o = await planning.migrateDashboard({
            sourceEnvId: input.sourceEnvId,
            targetEnvId: input.targetEnvId,
            dbMappings: [],
            overwrite: true,
            dryRun: true,
            // Companions are compared, never written nor a reason to fail the dashboard: a difference is drift (./drift.ts).
            companions: IGNORE_COMPANIONS,
            dashboardId,
            learnedRejections: [],
          });
          item = driftOf(o, input);
        } catch (err) {
          item = { ...failedDrift(dashboardId), ...failureOf(err, 'plan') };
        }
        logDrift(dashboardId, item);
        return item;
      },
    );
    const result = driftResultOf(input, ids.length, items, cancelled);
    if (cancelled) await endTaskWithResult('CANCELLED', result, `cancelled after ${items.length} of ${ids.length} dashboards`);
    if (result.totals.failed)
      await endTaskWithResult(
        'FAILED',
        result,
        `${result.totals.failed} of ${ids.length} dashboard(s) could not be compared; see the report`,
        'PartialDriftReport',
      );
    return result;
  });
}
