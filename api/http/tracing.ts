import { context, propagation, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { Context, Next } from 'koa';
import { tracer } from '../../lib/telemetry/tracing.ts';
import { routeLabel } from './metrics.ts';
import { routeTaskId } from './request-context.ts';

/**
 * A server span per request, named by method and route template, the root of a task's trace (or
 * a child of the caller's, from its `traceparent`). With tracing off the tracer is the API's no-op
 * and this costs next to nothing.
 */
export function httpTracing() {
  return async (ctx: Context, next: Next): Promise<void> => {
    const parent = propagation.extract(context.active(), ctx.headers);
    const span = tracer.startSpan(
      ctx.method,
      { kind: SpanKind.SERVER, attributes: { 'http.request.method': ctx.method, 'url.path': ctx.path } },
      parent,
    );
    try {
      await context.with(trace.setSpan(parent, span), next);
    } finally {
      const route = routeLabel(ctx);
      span.updateName(`${ctx.method} ${route}`);
      span.setAttributes({ 'http.route': route, 'http.response.status_code': ctx.status });
      const envId = (ctx.params as Record<string, string> | undefined)?.env_id;
      if (envId) span.setAttribute('switchyard.environment_id', envId);
      const taskId = routeTaskId(ctx);
      if (taskId) span.setAttribute('switchyard.task_id', taskId);
      if (ctx.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    }
  };
}
