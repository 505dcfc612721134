import { ApplicationFailure, Context } from '@temporalio/activity';
import type { BackupScheduleParams, DriftScheduleParams, ScheduledRunInput } from '../../contracts/schedules.ts';
import { TASK_KINDS, type TaskKind } from '../../contracts/task-kinds.ts';
import { TERMINAL_STATUSES, type TaskStatus } from '../../contracts/tasks.ts';
import { EnvironmentStore } from '../../db/environments/store.ts';
import { AccessStore } from '../../db/identity/access.ts';
import { ScheduleStore } from '../../db/schedules/store.ts';
import type { ActivityDeps } from '../deps.ts';

export interface ScheduledTask {
  taskId: string;
  workflowType: string;
  input: unknown;
}

/** The activities of a schedule's run: register the run as an ordinary task, follow it, and plan a drift report. */
export function createScheduleActivities(deps: ActivityDeps) {
  const schedules = new ScheduleStore(deps.knex);
  const environments = new EnvironmentStore(deps.knex);
  const access = new AccessStore(deps.knex);

  /** Every dashboard of the environment now (a schedule of "all" follows what the environment holds). */
  async function allDashboards(envId: string): Promise<number[]> {
    const rows = await (await deps.superset(envId)).listRows('dashboard', ['id']);
    return rows.map((r) => r.id).sort((a, b) => a - b);
  }

  return {
    /**
     * Registers this run of a schedule as a task row (owned by the schedule's creator) and returns
     * what the run starts as its child. Idempotent by the run's workflow id; null when the schedule
     * was deleted meanwhile.
     */
    async registerScheduledRun(input: ScheduledRunInput & { runWorkflowId: string }): Promise<ScheduledTask | null> {
      const schedule = await schedules.find(input.scheduleId);
      if (!schedule) return null;
      let kind: TaskKind<never>;
      let workflowInput: unknown;
      let params: Record<string, unknown>;
      if (schedule.kind === 'backup') {
        const p = schedule.params as BackupScheduleParams;
        const ids = p.dashboard_ids?.length ? p.dashboard_ids : await allDashboards(p.env_id);
        if (!ids.length) throw ApplicationFailure.nonRetryable(`environment ${p.env_id} holds no dashboard to back up`, 'NothingToDo');
        kind = TASK_KINDS.backup as TaskKind<never>;
        workflowInput = { envId: p.env_id, dashboardIds: ids };
        params = { env_id: p.env_id, dashboard_ids: ids };
      } else {
        const p = schedule.params as DriftScheduleParams;
        kind = TASK_KINDS.drift_report as TaskKind<never>;
        workflowInput = { sourceEnvId: p.source_env_id, targetEnvId: p.target_env_id };
        params = { source_env_id: p.source_env_id, target_env_id: p.target_env_id };
      }
      // A schedule runs with its creator's rights as they are now: a deactivated creator, or one
      // who lost the permission, stops its runs (before anything is registered).
      if (schedule.created_by) {
        const who = await access.ofUser(schedule.created_by);
        const needed = kind.permission;
        const allowed = !!who?.active && (who.roles.includes('Admin') || (needed !== 'admin' && who.permissions.includes(needed)));
        if (!allowed)
          throw ApplicationFailure.nonRetryable(
            `${schedule.created_by_username ?? 'the creator'} of schedule '${schedule.name}' may no longer start ${kind.type} tasks (${needed}); nothing was run`,
            'NothingToDo',
          );
      }
      const envIds = kind.envIds(workflowInput as never);
      const names = await environments.namesById(envIds);
      const { summary, details } = kind.describe(workflowInput as never, (id) => names.get(id) ?? id);
      const { task } = await deps.tasks.create({
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
      });
      return { taskId: task.id, workflowType: task.workflow_type, input: task.workflow_input };
    },

    /** Follows a task started around this run (by the reconciler) to its end. */
    async awaitTaskEnd(input: { taskId: string }): Promise<TaskStatus> {
      for (;;) {
        const task = await deps.tasks.get(input.taskId);
        if (!task) return 'FAILED';
        if (TERMINAL_STATUSES.includes(task.status)) return task.status;
        Context.current().heartbeat();
        await Context.current().sleep(2000);
      }
    },

    /** Source dashboards the target holds (same UUID): what a drift report compares. */
    async driftCandidates(input: { sourceEnvId: string; targetEnvId: string }): Promise<number[]> {
      const source = await deps.superset(input.sourceEnvId);
      const target = await deps.superset(input.targetEnvId);
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
