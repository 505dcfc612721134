import type { Context, Next } from 'koa';
import { metrics } from '../../lib/telemetry/metrics.ts';

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/**
 * The route label of a request: the matched route's template (`/api/tasks/:task_id`), never the
 * raw path, so ids and probes cannot grow the label set; `unmatched` for an API path no route
 * took, `web_console` for the console's pages and assets.
 */
export function routeLabel(ctx: Pick<Context, 'path'> & { _matchedRoute?: string | RegExp }): string {
  if (typeof ctx._matchedRoute === 'string') return ctx._matchedRoute;
  return ctx.path === '/api' || ctx.path.startsWith('/api/') ? 'unmatched' : 'web_console';
}

/** Counts and times every request by method, route template and status (switchyard_http_*). */
export function httpMetrics() {
  return async (ctx: Context, next: Next): Promise<void> => {
    const started = performance.now();
    try {
      await next();
    } finally {
      const labels = { method: METHODS.has(ctx.method) ? ctx.method : 'other', route: routeLabel(ctx), status: String(ctx.status) };
      metrics.httpRequests.inc(labels);
      metrics.httpDuration.observe(labels, (performance.now() - started) / 1000);
    }
  };
}
