import { ApplicationFailure, Context } from '@temporalio/activity';
import { itemsResultSchema } from '../../contracts/outcome-schemas.ts';
import { isItemsResult } from '../../contracts/outcomes.ts';
import type { FinalStatus, TaskError, TaskProgress } from '../../contracts/tasks.ts';
import { redact } from '../../lib/redact.ts';
import type { ActivityDeps } from '../deps.ts';
import { currentRunId, currentTaskId as taskId } from '../task-context.ts';

/** Keeps the task's row true to its workflow, through the task store. */
export function createTaskLifecycleActivities({ tasks }: Pick<ActivityDeps, 'tasks'>) {
  return {
    /**
     * 'running' when the task may go on; 'closed' when it was cancelled before the workflow got
     * to run; 'missing' when no task row exists: the workflow was started around the API (say,
     * from the Temporal console or a client with network access) and must not act.
     */
    async markTaskRunning(): Promise<'running' | 'closed' | 'missing'> {
      return tasks.markRunning(taskId(), currentRunId());
    },

    async reportTaskProgress(progress: TaskProgress): Promise<void> {
      await tasks.setProgress(taskId(), progress);
      Context.current().log.info(`progress ${progress.done}/${progress.total}${progress.message ? `: ${progress.message}` : ''}`);
    },

    async finishTask(input: { status: FinalStatus; result?: unknown; error?: TaskError }): Promise<void> {
      // A result that lists items must follow the one outcome shape reports read; drift is a bug.
      if (isItemsResult(input.result)) {
        const checked = itemsResultSchema.safeParse(input.result);
        if (!checked.success)
          throw ApplicationFailure.nonRetryable(`task result breaks the outcome contract: ${checked.error.message}`, 'ContractViolation');
      }
      await tasks.finish(taskId(), input.status, input.result === undefined ? undefined : redact(input.result), input.error ? redact(input.error) : null);
    },
  };
}
