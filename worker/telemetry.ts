import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import {
  OpenTelemetryActivityInboundInterceptor,
  OpenTelemetryActivityOutboundInterceptor,
} from '@temporalio/interceptors-opentelemetry/lib/worker/index.js';
import type { ActivityInterceptorsFactory, InjectedSinks, RuntimeOptions } from '@temporalio/worker';
import type { Config } from '../lib/config.ts';
import type { Logger } from '../lib/logger.ts';
import { serveMetrics, type MetricsServer } from '../lib/telemetry/metrics-server.ts';
import { environmentIdsOf, runInScope } from '../lib/telemetry/scope.ts';
import type { Tracing } from '../lib/telemetry/tracing.ts';
import type { TracingSinks, WorkflowSpan } from '../contracts/tracing.ts';

/**
 * Each activity runs in its task's scope (task id = workflow id, the environments its input
 * names): its log lines and spans carry them (lib/telemetry/scope.ts). First in the chain, so the
 * activity's own span already sees it.
 */
export const activityScope: ActivityInterceptorsFactory = (ctx) => ({
  inbound: {
    execute: (input, next) =>
      runInScope({ taskId: ctx.info.workflowExecution?.workflowId, environmentIds: environmentIdsOf(input.args[0]) }, () => next(input)),
  },
});

/** Temporal's activity interceptors: a `RunActivity:<type>` span under the workflow's, from the header it was scheduled with. */
export const activityTracing: ActivityInterceptorsFactory = (ctx) => ({
  inbound: new OpenTelemetryActivityInboundInterceptor(ctx),
  outbound: new OpenTelemetryActivityOutboundInterceptor(ctx),
});

/**
 * The sink the workflows' spans leave through (workflows/tracing.ts): to this process's span
 * processor when tracing is on, nowhere otherwise (registered either way, so a workflow started
 * by a tracing API never calls a missing sink). Not called during replay: each span once.
 */
export function workflowSpanSinks(tracing: Tracing | undefined): InjectedSinks<TracingSinks> {
  return {
    exporter: {
      export: {
        fn: (_info, spans) => {
          for (const s of tracing ? spans : []) tracing!.processor.onEnd(readableSpan(s, tracing!));
        },
        callDuringReplay: false,
      },
    },
  };
}

function readableSpan(s: WorkflowSpan, tracing: Tracing): ReadableSpan {
  const { spanContext, ...rest } = s;
  return { ...rest, spanContext: () => spanContext, resource: tracing.resource, instrumentationLibrary: s.instrumentationLibrary };
}

const hostPort = (host: string, port: number) => `${host.includes(':') ? `[${host}]` : host}:${port}`;

/**
 * The Temporal SDK's own worker metrics (poll latency, schedule-to-start, slots, sticky cache...)
 * through its core runtime's Prometheus exporter, which serves `/metrics` on its own address
 * (TEMPORAL_METRICS_PORT): names end in `_total`, `_seconds` as Prometheus expects.
 */
export function runtimeTelemetry(config: Config): Pick<RuntimeOptions, 'telemetryOptions'> {
  if (config.TEMPORAL_METRICS_PORT === undefined) return {};
  return {
    telemetryOptions: {
      metrics: {
        prometheus: {
          bindAddress: hostPort(config.METRICS_HOST, config.TEMPORAL_METRICS_PORT),
          countersTotalSuffix: true,
          unitSuffix: true,
          useSecondsForDurations: true,
        },
      },
    },
  };
}

/** The worker's own metrics (tasks finished, Superset, git and LLM calls) on WORKER_METRICS_PORT, when set. */
export async function serveWorkerMetrics(config: Config, logger: Logger): Promise<MetricsServer | undefined> {
  if (config.WORKER_METRICS_PORT === undefined) return undefined;
  const server = await serveMetrics(config.METRICS_HOST, config.WORKER_METRICS_PORT);
  logger.info(
    {
      metrics: `http://${server.address}/metrics`,
      ...(config.TEMPORAL_METRICS_PORT !== undefined
        ? { temporalMetrics: `http://${hostPort(config.METRICS_HOST, config.TEMPORAL_METRICS_PORT)}/metrics` }
        : {}),
    },
    'worker metrics served',
  );
  return server;
}
