import { randomUUID } from 'node:crypto';
import type { Context, Next } from 'koa';
import type { Logger } from '../../lib/logger.ts';
import { runInScope } from '../../lib/telemetry/scope.ts';

const INCOMING_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Request id on every response (a caller's own X-Request-Id is kept when sane), the time the app
 * spent on it as `Server-Timing: app;dur=<ms>` (tells a slow handler from a queue in front of it),
 * and one access log line.
 */
export function requestContext(logger: Logger) {
  return async (ctx: Context, next: Next): Promise<void> => {
    const incoming = ctx.get('x-request-id');
    const requestId = INCOMING_ID.test(incoming) ? incoming : randomUUID();
    ctx.state.requestId = requestId;
    ctx.set('X-Request-Id', requestId);
    const started = performance.now();
    // The request's scope: every log line it causes carries its id, and the task's once it creates one (lib/telemetry/scope.ts).
    await runInScope({ requestId }, () => logged(ctx, next, logger, requestId, started));
  };
}

/**
 * The task a request is about, by its route's `:task_id` (`/api/tasks/:task_id/...`): its access
 * line and span name it as the lines of a request that created one do.
 */
export function routeTaskId(ctx: Context): string | undefined {
  const id = (ctx.params as Record<string, string> | undefined)?.task_id;
  return typeof id === 'string' && INCOMING_ID.test(id) ? id : undefined;
}

/** Runs the request and writes its access line (with the task it created or is about, if any). */
async function logged(ctx: Context, next: Next, logger: Logger, requestId: string, started: number): Promise<void> {
  try {
    await next();
    if (!ctx.headerSent) ctx.set('Server-Timing', `app;dur=${(performance.now() - started).toFixed(1)}`);
  } finally {
    const ms = Math.round((performance.now() - started) * 10) / 10;
    if (ctx.path !== '/api/health') {
      logger.info(
        {
          requestId,
          ...(routeTaskId(ctx) ? { taskId: routeTaskId(ctx) } : {}),
          method: ctx.method,
          path: ctx.path,
          status: ctx.status,
          ms,
          principal: ctx.state.principal?.username,
          // An API key acts for its creator (the principal); the key used is named beside.
          ...(ctx.state.principal?.apiKeyName ? { via_key: ctx.state.principal.apiKeyName } : {}),
        },
        'request',
      );
    }
  }
}
