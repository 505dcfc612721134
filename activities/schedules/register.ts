import { ApplicationFailure } from '@temporalio/activity';
import {
  scheduledRunTaskId,
  type BackupScheduleParams,
  type DriftScheduleParams,
  type ScheduledRunRegistration,
  type ValidateScheduleParams,
} from '../../contracts/schedules.ts';
import { TASK_KINDS, type TaskKind } from '../../contracts/task-kinds.ts';
import { validateTask } from '../../contracts/validation.ts';
import type { ScheduleRow } from '../../db/schedules/store.ts';
import type { NewTask } from '../../db/tasks/store.ts';
import type { ActivityDeps } from '../deps.ts';
import { upstreamFor } from '../../domain/migration/index.ts';
import { runRefusal } from './refusal.ts';

export interface ScheduledTask {
  taskId: string;
  workflowType: string;
  input: unknown;
}

/**
 * Registers this run of a schedule as a task row (owned by the schedule's creator) and returns
 * what the run starts as its child. Idempotent by the run (its workflow id and run id: contracts/schedules.ts, scheduledRunTaskId); null when the schedule
 * was deleted meanwhile. A run its creator may no longer start is recorded as a FAILED task
 * that never started, with the reason, before anything is read from Superset.
 */
export async function registerScheduledRun(deps: ActivityDeps, input: ScheduledRunRegistration): Promise<ScheduledTask | null> {
  const schedule = await deps.stores.schedules.find(input.scheduleId);
  if (!schedule) return null;
  const type = TASK_KINDS[schedule.kind];
  const refusal = await runRefusal(deps, schedule, type.permission, type.type);
  const plan = await runPlan(schedule, refusal ? async () => [] : (envId) => allDashboards(deps, envId));
  const { kind, workflowInput, params } = plan;
  if (!refusal && kind.type === 'backup' && !(workflowInput as { dashboardIds: number[] }).dashboardIds.length)
    throw ApplicationFailure.nonRetryable(`environment ${String(params.env_id)} holds no dashboard to back up`, 'NothingToDo');
  const envIds = kind.envIds(workflowInput as never);
  const names = await deps.stores.environments.namesById(envIds);
  const { summary, details } = kind.describe(workflowInput as never, (id) => names.get(id) ?? id);
  const id = scheduledRunTaskId(schedule.kind, 'run' in input ? input.run : { workflowId: input.runWorkflowId });
  const task: NewTask = {
    id,
    type: kind.type,
    ownerId: schedule.created_by,
    ownerUsername: schedule.created_by_username,
    envIds,
    dashboardIds: kind.dashboardIds(workflowInput as never),
    params: { ...params, schedule_id: schedule.id, schedule_name: schedule.name },
    idempotencyKey: id,
    summary,
    details: details ?? null,
    workflowType: kind.workflow,
    workflowInput,
    firstLogLine: `task created by schedule '${schedule.name}' (${schedule.id}) of ${schedule.created_by_username ?? 'system'}: ${summary}`,
  };
  if (refusal) {
    await recordRefusedRun(deps, task, refusal);
    throw ApplicationFailure.nonRetryable(refusal, 'NothingToDo');
  }
  const { task: row } = await deps.stores.tasks.create(task);
  return { taskId: row.id, workflowType: row.workflow_type, input: row.workflow_input };
}

/** Every dashboard of the environment now (a schedule of "all" follows what the environment holds). */
async function allDashboards(deps: ActivityDeps, envId: string): Promise<number[]> {
  const rows = await (await upstreamFor(deps, envId)).listRows('dashboard', ['id']);
  return rows.map((r) => r.id).sort((a, b) => a - b);
}

/** A run that may not go ahead: its task row, closed FAILED with the reason in one transaction, so no reconciler ever starts it. */
async function recordRefusedRun(deps: Pick<ActivityDeps, 'stores'>, task: NewTask, reason: string): Promise<void> {
  await deps.stores.tasks.transaction(async (store) => {
    const { created } = await store.create(task);
    if (!created) return;
    await store.appendLog(task.id, 'ERROR', `not run: ${reason}`);
    await store.finish(task.id, 'FAILED', undefined, { message: reason, type: 'CreatorMayNotRun' });
  });
}

/** What a run of this schedule starts; `dashboardsNow` lists an environment's dashboards (only when the run goes ahead). */
async function runPlan(schedule: ScheduleRow, dashboardsNow: (envId: string) => Promise<number[]>) {
  if (schedule.kind === 'backup') {
    const p = schedule.params as BackupScheduleParams;
    const ids = p.dashboard_ids?.length ? p.dashboard_ids : await dashboardsNow(p.env_id);
    return {
      kind: TASK_KINDS.backup as TaskKind<never>,
      workflowInput: { envId: p.env_id, dashboardIds: ids },
      params: { env_id: p.env_id, dashboard_ids: ids } as Record<string, unknown>,
    };
  }
  if (schedule.kind === 'validate') return validatePlan(schedule.params as ValidateScheduleParams);
  const p = schedule.params as DriftScheduleParams;
  return {
    kind: TASK_KINDS.drift_report as TaskKind<never>,
    workflowInput: { sourceEnvId: p.source_env_id, targetEnvId: p.target_env_id },
    params: { source_env_id: p.source_env_id, target_env_id: p.target_env_id } as Record<string, unknown>,
  };
}

/** A validation reads its selection when it starts (the workflow's first activity), so a run of "all" follows what the environment holds. */
function validatePlan(p: ValidateScheduleParams) {
  const { env_id, ...body } = p;
  const { input, params } = validateTask(env_id, body);
  return { kind: TASK_KINDS.validate as TaskKind<never>, workflowInput: input, params };
}
