/**
 * OpenTelemetry traces, exported over OTLP/HTTP when OTEL_EXPORTER_OTLP_ENDPOINT (or
 * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is set; without it nothing is loaded and every span is the
 * API's no-op. One tracer provider per process (per thread in the all-in-one process): the API
 * names its spans' service `switchyard-api`, a worker `switchyard-worker`.
 *
 * The trace of a task: the API's request span, Temporal's StartWorkflow span (its client
 * interceptor), the workflow's run (workflows/tracing.ts), each activity (Temporal's activity
 * interceptor), and in it each Superset, git and LLM call (./upstream.ts).
 */
import { context, SpanKind, SpanStatusCode, trace, type Attributes, type Context, type Span } from '@opentelemetry/api';
import type { SpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { Resource } from '@opentelemetry/resources';
import type { Config } from '../config.ts';
import { redactText } from '../redact.ts';
import { currentScope, runInScope, spanAttributes } from './scope.ts';

export const tracer = trace.getTracer('switchyard');

export interface Tracing {
  /** What exports spans: the workflow span sink of a worker hands its spans here too. */
  processor: SpanProcessor;
  resource: Resource;
  flush(): Promise<void>;
}

let started: Promise<Tracing | undefined> | undefined;

/** Where spans go: the signal-specific variable as given, else the base endpoint with `/v1/traces` (the OTLP specification's rule). */
export function tracesUrl(config: Pick<Config, 'OTEL_EXPORTER_OTLP_ENDPOINT' | 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT'>): string | undefined {
  if (config.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) return config.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
  const base = config.OTEL_EXPORTER_OTLP_ENDPOINT;
  return base ? `${base.replace(/\/+$/, '')}/v1/traces` : undefined;
}

export function tracingEnabled(config: Pick<Config, 'OTEL_EXPORTER_OTLP_ENDPOINT' | 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT'>): boolean {
  return tracesUrl(config) !== undefined;
}

/** Starts this process's tracer provider once (later calls answer the first); undefined when tracing is off. */
export function startTracing(config: Config, serviceName: string): Promise<Tracing | undefined> {
  const url = tracesUrl(config);
  if (!url) return Promise.resolve(undefined);
  return (started ??= register(url, serviceName));
}

/** The tracer provider of this process, if tracing was started. */
export function activeTracing(): Promise<Tracing | undefined> {
  return started ?? Promise.resolve(undefined);
}

/** Sends the spans still buffered (at shutdown: a batch not yet sent would be lost). */
export async function flushTracing(): Promise<void> {
  // expected: at shutdown, an exporter that cannot be reached is reported by OpenTelemetry's own diagnostics; the exit is not held up.
  await (await activeTracing())?.flush().catch(() => undefined);
}

async function register(url: string, serviceName: string): Promise<Tracing> {
  // Loaded only when tracing is on: a process without it carries none of the SDK.
  const [{ NodeTracerProvider }, { BatchSpanProcessor }, { OTLPTraceExporter }, { Resource }] = await Promise.all([
    import('@opentelemetry/sdk-trace-node'),
    import('@opentelemetry/sdk-trace-base'),
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/resources'),
  ]);
  const resource = new Resource({ 'service.name': serviceName, 'service.namespace': 'switchyard' });
  const processor = new BatchSpanProcessor(new OTLPTraceExporter({ url }));
  const scoped: SpanProcessor = {
    // Every span started while a task or request scope is current carries its ids.
    onStart: (span) => {
      const scope = currentScope();
      if (scope) span.setAttributes(spanAttributes(scope));
    },
    onEnd: () => undefined,
    forceFlush: () => Promise.resolve(),
    shutdown: () => Promise.resolve(),
  };
  const provider = new NodeTracerProvider({ resource, spanProcessors: [scoped, processor] });
  provider.register(); // AsyncLocalStorage context manager and W3C trace-context propagation
  return { processor, resource, flush: () => provider.forceFlush() };
}

/** Runs `fn` in a span of its own (a child of the current one); an error ends the span as failed. */
export async function inSpan<T>(
  name: string,
  attributes: Attributes,
  fn: (span: Span) => Promise<T>,
  kind = SpanKind.INTERNAL,
): Promise<T> {
  return tracer.startActiveSpan(name, { kind, attributes }, async (span) => {
    try {
      return await fn(span);
    } catch (err) {
      // Messages are Switchyard's own, masked again here: nothing like a token reaches a collector.
      const e = err as Error;
      span.recordException({ name: e?.name ?? 'Error', message: redactText(String(e?.message ?? e)) });
      span.setStatus({ code: SpanStatusCode.ERROR, message: e?.name });
      throw err;
    } finally {
      span.end();
    }
  });
}

/** Binds work that runs later (a queued workflow start) to the trace and the scope (request, task) current now. */
export function captureContext(): <T>(fn: () => T) => T {
  const saved: Context = context.active();
  const scope = currentScope();
  return (fn) => context.with(saved, () => (scope ? runInScope(scope, fn) : fn()));
}
