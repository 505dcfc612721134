import { CancellationScope, log, ParentClosePolicy, proxyActivities, startChild, workflowInfo } from '@temporalio/workflow';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import type { Activities } from '../activities/index.ts';
import { forEachItem } from './for-each-item.ts';
import { IGNORE_COMPANIONS } from '../contracts/companions.ts';
import { NON_RETRYABLE_FAILURE_TYPES } from '../contracts/failures.ts';
import { migrateAgainAction, type DashboardOutcome } from '../contracts/migration.ts';
import type {
  DriftItem,
  DriftObject,
  DriftReportInput,
  DriftReportResult,
  ScheduledRunInput,
  ScheduledRunResult,
} from '../contracts/schedules.ts';
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
            // Companions are compared and recorded, never a reason to call a dashboard failed here (drift of companions is not reported yet).
            companions: IGNORE_COMPANIONS,
            dashboardId,
            learnedRejections: [],
          });
          item = driftOf(o);
        } catch (err) {
          item = { ...failedDrift(dashboardId), ...failureOf(err, 'plan') };
        }
        log.info(
          `dashboard ${dashboardId}${item.title ? ` ('${item.title}')` : ''}: ${item.status}${item.differences.length ? ` (${item.differences.map((d) => `${d.kind} ${d.name}: ${d.action}`).join('; ')})` : ''}${item.error ? ` (${item.error})` : ''}`,
        );
        return item;
      },
    );
    const count = (s: DriftItem['status']) => items.filter((i) => i.status === s).length;
    const result: DriftReportResult = {
      source_env_id: input.sourceEnvId,
      target_env_id: input.targetEnvId,
      totals: { compared: items.length, in_sync: count('in_sync'), drifted: count('drifted'), failed: count('failed') },
      items,
      not_started: ids.length - items.length,
      cancelled,
      next_actions: count('drifted')
        ? [
            migrateAgainAction(
              'migrate_drifted',
              `Bring the ${count('drifted')} drifted dashboard(s) in line by migrating them again (source wins)`,
              input,
              items.filter((i) => i.status === 'drifted').map((i) => i.id),
              true,
            ),
          ]
        : [],
    };
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

function failedDrift(id: number): DriftItem {
  return {
    kind: 'dashboard',
    id,
    title: null,
    status: 'failed',
    outcome: 'failed',
    dashboard_uuid: null,
    target_dashboard_id: null,
    differences: [],
    next_actions: [],
  };
}

/** A dry run's plan read as drift: every object the migration would create or update differs. */
function driftOf(o: DashboardOutcome): DriftItem {
  if (o.status !== 'planned') {
    return {
      ...failedDrift(o.id),
      title: o.title,
      dashboard_uuid: o.dashboard_uuid,
      error: o.error ?? `the dry run ended ${o.status}`,
      step: o.step ?? 'plan',
      ...(o.upstream_error ? { upstream_error: o.upstream_error } : {}),
      next_actions: o.next_actions,
    };
  }
  const differences: DriftObject[] = o.objects
    .filter((x) => x.action === 'create' || x.action === 'update')
    .map((x) => ({ kind: x.kind, name: x.name, uuid: x.uuid, action: x.action as 'create' | 'update', differences: x.differences ?? [] }));
  return {
    kind: 'dashboard',
    id: o.id,
    title: o.title,
    status: differences.length ? 'drifted' : 'in_sync',
    outcome: 'succeeded',
    dashboard_uuid: o.dashboard_uuid,
    target_dashboard_id: o.objects.find((x) => x.kind === 'dashboard')?.target_id ?? null,
    differences,
    next_actions: [],
  };
}
