/**
 * The workflow's part of a task's trace, bundled into every workflow (worker/create-worker.ts,
 * WORKFLOW_INTERCEPTOR_MODULES). Temporal's own workflow interceptors
 * (@temporalio/interceptors-opentelemetry/lib/workflow-interceptors) would bring the OpenTelemetry
 * SDK into the bundle, which every workflow evaluates (1.7 MB more, past the lean-runtime bound):
 * this speaks their header instead, with nothing but the SDK's own workflow API.
 *
 * The client's StartWorkflow span arrives in the `_tracer-data` header (a W3C `traceparent`); the
 * run gets a span of its own (`RunWorkflow:<type>`, exported through the worker's `exporter`
 * sink when the run ends), and each activity, child workflow and continued run is handed a
 * traceparent under it, which Temporal's activity interceptor on the worker picks up. No header
 * (tracing off in the API): nothing is done at all.
 */
import {
  defaultPayloadConverter,
  proxySinks,
  uuid4,
  workflowInfo,
  type ActivityInput,
  type ContinueAsNewInput,
  type LocalActivityInput,
  type Next,
  type StartChildWorkflowExecutionInput,
  type WorkflowExecuteInput,
  type WorkflowInboundCallsInterceptor,
  type WorkflowInterceptors,
  type WorkflowOutboundCallsInterceptor,
} from '@temporalio/workflow';
import type { HrTime, TracingSinks } from '../contracts/tracing.ts';

/** The header Temporal's OpenTelemetry interceptors read and write. */
const TRACE_HEADER = '_tracer-data';

interface Parent {
  traceId: string;
  spanId: string;
  flags: number;
}

/** This run's span, when its start carried a trace (module state is per workflow run). */
let run: { parent: Parent; spanId: string } | undefined;

function parentOf(headers: WorkflowExecuteInput['headers']): Parent | undefined {
  const payload = headers[TRACE_HEADER];
  if (!payload) return undefined;
  const carrier = defaultPayloadConverter.fromPayload<{ traceparent?: string }>(payload);
  const m = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/.exec(carrier?.traceparent ?? '');
  return m ? { traceId: m[1]!, spanId: m[2]!, flags: parseInt(m[3]!, 16) } : undefined;
}

/** Headers carrying a traceparent whose parent is `spanId` of this trace. */
function withTrace<H extends Record<string, unknown>>(headers: H, spanId: string): H {
  if (!run) return headers;
  const traceparent = `00-${run.parent.traceId}-${spanId}-${run.parent.flags.toString(16).padStart(2, '0')}`;
  return { ...headers, [TRACE_HEADER]: defaultPayloadConverter.toPayload({ traceparent }) };
}

const hrTime = (ms: number): HrTime => [Math.floor(ms / 1000), (ms % 1000) * 1e6];

/** Environment ids the input names (sourceEnvId, targetEnvId, envId, envIds), as lib/telemetry/scope.ts reads them. */
function environmentIds(input: unknown): string[] {
  if (!input || typeof input !== 'object') return [];
  return Object.entries(input).flatMap(([k, v]) =>
    /^(source|target)?_?env(ironment)?_?ids?$/i.test(k)
      ? (Array.isArray(v) ? v : [v]).filter((x): x is string => typeof x === 'string')
      : [],
  );
}

class Inbound implements WorkflowInboundCallsInterceptor {
  async execute(input: WorkflowExecuteInput, next: Next<WorkflowInboundCallsInterceptor, 'execute'>): Promise<unknown> {
    const parent = parentOf(input.headers);
    if (!parent) return next(input);
    run = { parent, spanId: uuid4().replace(/-/g, '').slice(0, 16) };
    const started = Date.now();
    let failed: string | undefined;
    try {
      return await next(input);
    } catch (err) {
      // Continuing as new ends this run, not the task.
      if ((err as Error)?.name !== 'ContinueAsNew') failed = (err as Error)?.name ?? 'Error';
      throw err;
    } finally {
      const info = workflowInfo();
      const ended = Date.now();
      const envIds = environmentIds(input.args[0]);
      proxySinks<TracingSinks>().exporter.export([
        {
          name: `RunWorkflow:${info.workflowType}`,
          kind: 0,
          spanContext: { traceId: parent.traceId, spanId: run.spanId, traceFlags: parent.flags },
          parentSpanId: parent.spanId,
          startTime: hrTime(started),
          endTime: hrTime(ended),
          duration: hrTime(ended - started),
          status: failed ? { code: 2, message: failed } : { code: 0 },
          attributes: {
            'switchyard.task_id': info.workflowId,
            'temporal.run_id': info.runId,
            ...(envIds.length ? { 'switchyard.environment_ids': envIds } : {}),
          },
          links: [],
          events: [],
          ended: true,
          droppedAttributesCount: 0,
          droppedLinksCount: 0,
          droppedEventsCount: 0,
          instrumentationLibrary: { name: 'switchyard-workflow' },
        },
      ]);
    }
  }
}

class Outbound implements WorkflowOutboundCallsInterceptor {
  scheduleActivity(input: ActivityInput, next: Next<WorkflowOutboundCallsInterceptor, 'scheduleActivity'>) {
    return next(run ? { ...input, headers: withTrace(input.headers, run.spanId) } : input);
  }
  scheduleLocalActivity(input: LocalActivityInput, next: Next<WorkflowOutboundCallsInterceptor, 'scheduleLocalActivity'>) {
    return next(run ? { ...input, headers: withTrace(input.headers, run.spanId) } : input);
  }
  startChildWorkflowExecution(
    input: StartChildWorkflowExecutionInput,
    next: Next<WorkflowOutboundCallsInterceptor, 'startChildWorkflowExecution'>,
  ) {
    return next(run ? { ...input, headers: withTrace(input.headers, run.spanId) } : input);
  }
  /** The next run of the task joins the same trace, under the span that started the task. */
  continueAsNew(input: ContinueAsNewInput, next: Next<WorkflowOutboundCallsInterceptor, 'continueAsNew'>) {
    return next(run ? { ...input, headers: withTrace(input.headers, run.parent.spanId) } : input);
  }
}

export const interceptors = (): WorkflowInterceptors => ({ inbound: [new Inbound()], outbound: [new Outbound()] });
