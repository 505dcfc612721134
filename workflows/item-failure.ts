import { ActivityFailure, ApplicationFailure } from '@temporalio/workflow';
import { isItemFailure, type ItemFailure } from '../contracts/failures.ts';

/**
 * An item activity that failed for good (its retries ran out, or it failed the item outright)
 * becomes that item's failure instead of the whole task's: the fields it reported when it last
 * failed, or, for a failure nobody classified, its message.
 */
export function failureOf(err: unknown, step: string): ItemFailure {
  let cause: unknown = err;
  while (cause instanceof ActivityFailure && cause.cause) cause = cause.cause;
  const reported = cause instanceof ApplicationFailure ? cause.details?.[0] : undefined;
  if (isItemFailure(reported)) return reported;
  return {
    error: cause instanceof Error ? cause.message : String(cause),
    step,
    next_actions: [{ action: 'read_logs', description: "The task's log has what each attempt did and how it failed" }],
  };
}
