/**
 * A Superset call asked again (lib/superset/transport/retry.ts) is a line in the log of the task
 * whose activity made it, so the task's log shows every retry, what came back and the wait.
 * Calls made outside an activity (the API's) only reach the process log.
 */
import { Context } from '@temporalio/activity';
import { describeRetry, type RetryEvent } from '../lib/superset/transport/retry.ts';

export function logRetryInTask(event: RetryEvent): void {
  let ctx: Context;
  try {
    ctx = Context.current();
  } catch {
    // expected: Context.current() throws outside an activity, where there is no task log to write to.
    return; // not inside an activity
  }
  ctx.log.warn(describeRetry(event), {
    superset: event.host,
    path: event.path,
    attempt: event.attempt,
    attempts: event.attempts,
    reason: event.reason,
    delay_ms: event.delayMs,
  });
}
