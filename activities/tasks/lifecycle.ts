import { ApplicationFailure, Context } from '@temporalio/activity';
import { itemsResultSchema } from '../../contracts/outcome-schemas.ts';
import { isItemsResult, type ItemOutcome } from '../../contracts/outcomes.ts';
import { progressLogLine, type ApprovalOutcome, type FinalStatus, type TaskError, type TaskProgress } from '../../contracts/tasks.ts';
import { redact } from '../../lib/redact.ts';
import type { ActivityDeps } from '../deps.ts';
import { currentRunId, currentTaskId as taskId } from '../task-context.ts';

/** A result that lists items must follow the one outcome shape reports read; drift is a bug. */
function checkedResult(result: unknown): unknown {
  if (isItemsResult(result)) {
    const checked = itemsResultSchema.safeParse(result);
    if (!checked.success)
      throw ApplicationFailure.nonRetryable(`task result breaks the outcome contract: ${checked.error.message}`, 'ContractViolation');
  }
  return result === undefined ? undefined : redact(result);
}

/** Keeps the task's row true to its workflow, through the task store. */
export function createTaskLifecycleActivities({ stores, config }: Pick<ActivityDeps, 'stores' | 'config'>) {
  const { tasks, taskItems: items } = stores;

  return {
    /**
     * 'running' when the task may go on; 'closed' when it was cancelled before the workflow got
     * to run; 'missing' when no task row exists: the workflow was started around the API (say,
     * from the Temporal console or a client with network access) and must not act.
     */
    async markTaskRunning(): Promise<'running' | 'closed' | 'missing'> {
      return tasks.markRunning(taskId(), currentRunId());
    },

    /**
     * A gated task starts waiting for a person's decision (the row shows AWAITING_APPROVAL), or
     * stops with the decision, which the row keeps for the task's answer and report.
     */
    async recordTaskApproval(input: { waiting: true } | { waiting: false; outcome: ApprovalOutcome }): Promise<void> {
      await tasks.recordApproval(taskId(), input.waiting ? { waiting: true } : { waiting: false, outcome: input.outcome });
    },

    async reportTaskProgress(progress: TaskProgress): Promise<void> {
      await tasks.setProgress(taskId(), progress);
      Context.current().log.info(progressLogLine(progress));
    },

    async finishTask(input: { status: FinalStatus; result?: unknown; error?: TaskError }): Promise<void> {
      await tasks.finish(taskId(), input.status, checkedResult(input.result), input.error ? redact(input.error) : null);
    },

    /**
     * The final write of a task whose items are in `task_items` rather than in its workflow: the
     * row's result is `summary` with `items` read back in request order, so the workflow's history
     * and its own result carry totals only.
     */
    async finishTaskWithStoredItems(input: { status: FinalStatus; summary: Record<string, unknown>; error?: TaskError }): Promise<void> {
      const id = taskId();
      const result = { ...input.summary, items: await items.list(id) };
      await tasks.finish(id, input.status, checkedResult(result), input.error ? redact(input.error) : null);
    },

    /** Records an item the workflow had to end itself (its activity gave up); a recorded one stays. */
    async recordTaskItem(input: { position: number; key: string | number; item: ItemOutcome }): Promise<void> {
      await items.record(taskId(), input.position, input.key, input.item);
    },

    /** How many items a task handles per workflow run before it continues as new (TASK_ITEMS_PER_RUN). */
    async taskItemsPerRun(): Promise<number> {
      return config.TASK_ITEMS_PER_RUN;
    },
  };
}
