import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  CancelledFailure,
  ContinueAsNew,
  isCancellation,
  log,
  proxyActivities,
} from '@temporalio/workflow';
import type { Activities } from '../activities/index.ts';
import type { ApprovalOutcome, TaskApproval } from '../contracts/tasks.ts';
import { awaitApproval, denialOf } from './approval-gate.ts';

const lifecycle = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '500 ms', maximumInterval: '10 seconds' },
});

export const { reportTaskProgress, finishTask } = lifecycle;

/**
 * Wraps a task workflow's body: marks the row RUNNING, then records the outcome. The final
 * write runs in a non-cancellable scope so a cancelled task still gets CANCELLED in its row.
 * A body that continues as new (a long task's next run) leaves the row open: its next run
 * passes here again and the row stays RUNNING with the new run id.
 * With `items: 'stored'`, the body recorded its items in `task_items` and returns the result
 * without them; the row gets them read back (finishTaskWithStoredItems). With `closesRow`, the
 * body's own activity wrote the row's final status and result (assembled from its items): nothing
 * more is written on success.
 * With `gate` (the input's approval), a task writing into a protected environment first waits for
 * another person's decision; rejected or timed out, it ends CANCELLED without running its body
 * (`onDenied` settles what the task's own records need), and the body gets the decision.
 */
export async function runAsTask<T>(
  body: (approval: ApprovalOutcome) => Promise<T>,
  opts: { items?: 'stored'; closesRow?: boolean; gate?: { approval?: TaskApproval; what: string; onDenied?: () => Promise<void> } } = {},
): Promise<T> {
  // Not cancellable: a cancel arriving meanwhile (say, just as a long task continued as new) must
  // reach the body, which ends the row with what was done, rather than leave the row open.
  const state = await CancellationScope.nonCancellable(() => lifecycle.markTaskRunning());
  if (state === 'missing') {
    // Only the API starts tasks (it writes the row, checks permissions and input first).
    const message =
      'no Switchyard task exists for this workflow id: tasks are started through the Switchyard API, which checks permissions and input; nothing was done';
    log.error(message);
    throw ApplicationFailure.nonRetryable(message, 'TaskNotRegistered');
  }
  if (state === 'closed') {
    log.warn('the task was cancelled before its workflow started; nothing was done');
    throw new CancelledFailure('cancelled before it started');
  }
  try {
    const approval = await awaitApproval(opts.gate?.approval, opts.gate?.what ?? 'this task');
    const denied = denialOf(approval, opts.gate?.approval, 'nothing was done');
    if (denied) {
      await CancellationScope.nonCancellable(async () => opts.gate?.onDenied?.());
      await endTaskWithResult('CANCELLED', { approval }, denied.message, denied.type);
    }
    const result = await body(approval);
    if (!opts.closesRow)
      await CancellationScope.nonCancellable(() =>
        opts.items === 'stored'
          ? lifecycle.finishTaskWithStoredItems({ status: 'SUCCEEDED', summary: result as Record<string, unknown> })
          : lifecycle.finishTask({ status: 'SUCCEEDED', result }),
      );
    log.info('task succeeded');
    return result;
  } catch (err) {
    // A long task going on in a new run (same workflow id, same task) is neither done nor failed.
    if (err instanceof ContinueAsNew) throw err;
    if (isCancellation(err)) {
      await CancellationScope.nonCancellable(() =>
        lifecycle.finishTask({ status: 'CANCELLED', error: { message: 'cancelled on request' } }),
      );
      log.warn('task cancelled');
    } else {
      const error = describeFailure(err);
      await CancellationScope.nonCancellable(() => lifecycle.finishTask({ status: 'FAILED', error }));
      log.error(`task failed: ${error.message}`);
    }
    throw err;
  }
}

function describeFailure(err: unknown): { message: string; type?: string; details?: unknown } {
  let cause: unknown = err;
  // An activity failure wraps the real one; the user wants the inner message.
  while (cause instanceof ActivityFailure && cause.cause) cause = cause.cause;
  if (cause instanceof ApplicationFailure) {
    return { message: cause.message, type: cause.type ?? undefined, details: cause.details?.length ? cause.details : undefined };
  }
  if (cause instanceof Error) return { message: cause.message, type: cause.name };
  return { message: String(cause) };
}

/**
 * Ends a task that stopped part-way (cancelled, or some items failed) while keeping what it did:
 * the row gets its status and the partial result, then the workflow closes the same way.
 * runAsTask's own final write is a no-op afterwards (the row is no longer open).
 */
export async function endTaskWithResult(status: 'CANCELLED' | 'FAILED', result: unknown, message: string, type?: string): Promise<never> {
  log.warn(message);
  await CancellationScope.nonCancellable(() => lifecycle.finishTask({ status, result, error: { message, ...(type ? { type } : {}) } }));
  if (status === 'CANCELLED') throw new CancelledFailure(message);
  throw ApplicationFailure.nonRetryable(message, type);
}

/** endTaskWithResult for a task whose items are in `task_items`: `summary` is its result without them. */
export async function endTaskWithStoredItems(
  status: 'CANCELLED' | 'FAILED',
  summary: Record<string, unknown>,
  message: string,
  type?: string,
): Promise<never> {
  log.warn(message);
  await CancellationScope.nonCancellable(() =>
    lifecycle.finishTaskWithStoredItems({ status, summary, error: { message, ...(type ? { type } : {}) } }),
  );
  if (status === 'CANCELLED') throw new CancelledFailure(message);
  throw ApplicationFailure.nonRetryable(message, type);
}
