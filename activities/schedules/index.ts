import { ApplicationFailure, Context } from '@temporalio/activity';
import type { BackupScheduleParams, DriftScheduleParams, ScheduledRunInput } from '../../contracts/schedules.ts';
import { TASK_KINDS, type TaskKind } from '../../contracts/task-kinds.ts';
import { TERMINAL_STATUSES, type TaskStatus } from '../../contracts/tasks.ts';
import { ADMIN_ROLE_NAME, holds, keyPermissions } from '../../contracts/permissions.ts';
import type { ScheduleRow } from '../../db/schedules/store.ts';
import type { NewTask } from '../../db/tasks/store.ts';
import type { ActivityDeps } from '../deps.ts';
import { upstreamFor } from '../migration/superset-upstream.ts';

export interface ScheduledTask {
  taskId: string;
  workflowType: string;
  input: unknown;
}

/** The activities of a schedule's run: register the run as an ordinary task, follow it, and plan a drift report. */
export function createScheduleActivities(deps: ActivityDeps) {
  const { schedules, environments } = deps.stores;
  const { access } = deps.stores.identity;

  /** Every dashboard of the environment now (a schedule of "all" follows what the environment holds). */
  async function allDashboards(envId: string): Promise<number[]> {
    const rows = await (await upstreamFor(deps, envId)).listRows('dashboard', ['id']);
    return rows.map((r) => r.id).sort((a, b) => a - b);
  }

  /** A run that may not go ahead: its task row, closed FAILED with the reason in one transaction, so no reconciler ever starts it. */
  async function recordRefusedRun(task: NewTask, reason: string): Promise<void> {
    await deps.stores.tasks.transaction(async (store) => {
      const { created } = await store.create(task);
      if (!created) return;
      await store.appendLog(task.id, 'ERROR', `not run: ${reason}`);
      await store.finish(task.id, 'FAILED', undefined, { message: reason, type: 'CreatorMayNotRun' });
    });
  }

  /**
   * Why a schedule may not run now, or null: each run has the rights its creator has at that
   * moment (and, made with an API key, only those the key still grants). The one decider for runs.
   */
  async function runRefusal(schedule: ScheduleRow, permission: string, taskType: string): Promise<string | null> {
    const who = `${schedule.created_by_username ?? 'the creator'} (who made schedule '${schedule.name}')`;
    if (!schedule.created_by)
      return `schedule '${schedule.name}' has no person behind it (made with an API key before keys acted for their creators): make it again`;
    const person = await access.ofUser(schedule.created_by);
    if (!person) return `${who} was deleted; nothing was run`;
    if (!person.active) return `${who} is deactivated; nothing was run`;
    let held = permission === 'admin' ? person.roles.includes(ADMIN_ROLE_NAME) : holds(person, permission);
    if (held && schedule.created_by_api_key_id) {
      const key = await access.ofApiKey(schedule.created_by_api_key_id);
      if (!key || !key.usable || key.user_id !== schedule.created_by)
        return `the API key schedule '${schedule.name}' was made with is revoked or expired; nothing was run`;
      held = keyPermissions(key.permissions, person).includes(permission);
    }
    if (!held) return `${who} may no longer start ${taskType} tasks (${permission}); nothing was run`;
    return null;
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
    const p = schedule.params as DriftScheduleParams;
    return {
      kind: TASK_KINDS.drift_report as TaskKind<never>,
      workflowInput: { sourceEnvId: p.source_env_id, targetEnvId: p.target_env_id },
      params: { source_env_id: p.source_env_id, target_env_id: p.target_env_id } as Record<string, unknown>,
    };
  }

  return {
    /**
     * Registers this run of a schedule as a task row (owned by the schedule's creator) and returns
     * what the run starts as its child. Idempotent by the run's workflow id; null when the schedule
     * was deleted meanwhile. A run its creator may no longer start is recorded as a FAILED task
     * that never started, with the reason, before anything is read from Superset.
     */
    async registerScheduledRun(input: ScheduledRunInput & { runWorkflowId: string }): Promise<ScheduledTask | null> {
      const schedule = await schedules.find(input.scheduleId);
      if (!schedule) return null;
      const type = schedule.kind === 'backup' ? TASK_KINDS.backup : TASK_KINDS.drift_report;
      const refusal = await runRefusal(schedule, type.permission, type.type);
      const plan = await runPlan(schedule, refusal ? async () => [] : allDashboards);
      const { kind, workflowInput, params } = plan;
      if (!refusal && kind.type === 'backup' && !(workflowInput as { dashboardIds: number[] }).dashboardIds.length)
        throw ApplicationFailure.nonRetryable(`environment ${params.env_id} holds no dashboard to back up`, 'NothingToDo');
      const envIds = kind.envIds(workflowInput as never);
      const names = await environments.namesById(envIds);
      const { summary, details } = kind.describe(workflowInput as never, (id) => names.get(id) ?? id);
      const task: NewTask = {
        id: `${kind.type}-${input.runWorkflowId}`,
        type: kind.type,
        ownerId: schedule.created_by,
        ownerUsername: schedule.created_by_username,
        envIds,
        dashboardIds: kind.dashboardIds(workflowInput as never),
        params: { ...params, schedule_id: schedule.id, schedule_name: schedule.name },
        idempotencyKey: input.runWorkflowId,
        summary,
        details: details ?? null,
        workflowType: kind.workflow,
        workflowInput,
        firstLogLine: `task created by schedule '${schedule.name}' (${schedule.id}) of ${schedule.created_by_username ?? 'system'}: ${summary}`,
      };
      if (refusal) {
        await recordRefusedRun(task, refusal);
        throw ApplicationFailure.nonRetryable(refusal, 'NothingToDo');
      }
      const { task: row } = await deps.stores.tasks.create(task);
      return { taskId: row.id, workflowType: row.workflow_type, input: row.workflow_input };
    },

    /** Follows a task started around this run (by the reconciler) to its end. */
    async awaitTaskEnd(input: { taskId: string }): Promise<TaskStatus> {
      for (;;) {
        const task = await deps.stores.tasks.get(input.taskId);
        if (!task) return 'FAILED';
        if (TERMINAL_STATUSES.includes(task.status)) return task.status;
        Context.current().heartbeat();
        await Context.current().sleep(2000);
      }
    },

    /** Source dashboards the target holds (same UUID): what a drift report compares. */
    async driftCandidates(input: { sourceEnvId: string; targetEnvId: string }): Promise<number[]> {
      const source = await upstreamFor(deps, input.sourceEnvId);
      const target = await upstreamFor(deps, input.targetEnvId);
      const targetUuids = new Set(
        (await target.listRows('dashboard', ['id', 'uuid'])).map((r) => (typeof r.uuid === 'string' ? r.uuid : null)).filter(Boolean),
      );
      const ids: number[] = [];
      for (const row of await source.listRows('dashboard', ['id', 'uuid'])) {
        let uuid = typeof row.uuid === 'string' ? row.uuid : null;
        // Releases whose lists carry no uuid answer it on the detail path.
        if (!uuid) uuid = (await source.findDashboard(String(row.id)))?.uuid ?? null;
        if (uuid && (targetUuids.has(uuid) || (targetUuids.size === 0 && (await target.findDashboard(uuid))))) ids.push(row.id);
        Context.current().heartbeat();
      }
      return ids.sort((a, b) => a - b);
    },
  };
}
