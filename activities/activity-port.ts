/**
 * The running Temporal activity as the engine's port (domain/migration/port.ts): its log and its
 * heartbeat, so that code under domain/ never calls `Context.current()` itself.
 */
import { Context } from '@temporalio/activity';
import type { ActivityPort } from '../domain/migration/index.ts';

/** The port of the activity running now (call it inside the activity, where Context.current() is its own). */
export function activityPort(): ActivityPort {
  const ctx = Context.current();
  return { log: ctx.log, heartbeat: (details?: unknown) => ctx.heartbeat(details) };
}
