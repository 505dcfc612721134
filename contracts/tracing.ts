/**
 * What the workflows hand the worker of a task's trace (workflows/tracing.ts to
 * worker/telemetry.ts): each run's span, through the `exporter` sink, in the shape Temporal's
 * OpenTelemetry `makeWorkflowExporter` takes (its SerializableSpan).
 */
import type { Sinks } from '@temporalio/workflow';

export type HrTime = [number, number];

/** The span as Temporal's `makeWorkflowExporter` sink takes it (its SerializableSpan). */
export interface WorkflowSpan {
  name: string;
  kind: number;
  spanContext: { traceId: string; spanId: string; traceFlags: number };
  parentSpanId?: string;
  startTime: HrTime;
  endTime: HrTime;
  duration: HrTime;
  status: { code: number; message?: string };
  attributes: Record<string, string | string[]>;
  links: [];
  events: [];
  ended: true;
  droppedAttributesCount: 0;
  droppedLinksCount: 0;
  droppedEventsCount: 0;
  instrumentationLibrary: { name: string };
}

export interface TracingSinks extends Sinks {
  exporter: { export(spans: WorkflowSpan[]): void };
}
