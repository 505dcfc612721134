import { Context } from '@temporalio/activity';
import { redact } from '../../lib/redact.ts';
import { OPEN_STATUSES, type TaskProgress, type TaskStatus, type TaskType } from '../../db/tasks/task.model.ts';
import type { ActivityDeps } from '../deps.ts';
import { currentRunId, currentTaskId as taskId } from '../task-context.ts';

const OPEN = OPEN_STATUSES as TaskStatus[];

/**
 * Keeps the `tasks` row true to the workflow. Every transition is a conditional update on an
 * open status, so retries and late duplicates cannot move a finished task back.
 */
export function createTaskLifecycleActivities({ knex }: ActivityDeps) {
  return {
    /** Returns false when the row was cancelled before the workflow got to run: the workflow then stops. */
    async markTaskRunning(input: { type: TaskType }): Promise<boolean> {
      const id = taskId();
      const runId = currentRunId();
      // A workflow started from the Temporal console has no row yet: give it one.
      await knex('tasks')
        .insert({
          id,
          type: input.type,
          status: 'RUNNING',
          started_at: knex.fn.now(),
          workflow_type: Context.current().info.workflowType,
          workflow_input: JSON.stringify(null),
          workflow_run_id: runId,
        })
        .onConflict('id')
        .ignore();
      const updated = await knex('tasks')
        .where({ id })
        .whereIn('status', OPEN)
        .update({
          status: 'RUNNING',
          started_at: knex.raw('coalesce(started_at, now())'),
          workflow_run_id: runId,
          updated_at: knex.fn.now(),
        });
      return updated > 0;
    },

    async reportTaskProgress(progress: TaskProgress): Promise<void> {
      await knex('tasks')
        .where({ id: taskId() })
        .whereIn('status', OPEN)
        .update({ progress: JSON.stringify(progress), updated_at: knex.fn.now() });
      Context.current().log.info(`progress ${progress.done}/${progress.total}${progress.message ? `: ${progress.message}` : ''}`);
    },

    async finishTask(input: {
      status: 'SUCCEEDED' | 'FAILED' | 'CANCELLED';
      result?: unknown;
      error?: { message: string; type?: string; details?: unknown };
    }): Promise<void> {
      await knex('tasks')
        .where({ id: taskId() })
        .whereIn('status', OPEN)
        .update({
          status: input.status,
          result: input.result === undefined ? null : JSON.stringify(redact(input.result)),
          error: input.error ? JSON.stringify(redact(input.error)) : null,
          finished_at: knex.fn.now(),
          updated_at: knex.fn.now(),
        });
    },
  };
}
