/**
 * Observers of the calls Switchyard makes to other hosts (Superset, git remotes, LLM providers):
 * each exchange counted and timed (./metrics.ts) under a bounded label set, and a client span of
 * its own in the current trace (./tracing.ts) carrying the task and environment ids.
 */
import { SpanKind, SpanStatusCode, type Span } from '@opentelemetry/api';
import type { CircuitListener, CircuitState } from '../superset/transport/circuit.ts';
import type { ExchangeObserver } from '../superset/transport/options.ts';
import { metrics, timedCall } from './metrics.ts';
import { supersetEndpointClass } from './superset-endpoint.ts';
import { inSpan } from './tracing.ts';

/** The answer's status on the span; a server error fails it. */
function answered<T extends { status: number } | { statusCode: number }>(span: Span, res: T): T {
  const status = 'status' in res ? res.status : res.statusCode;
  span.setAttribute('http.response.status_code', status);
  if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
  return res;
}

/** The observer of one environment's Superset exchanges (SupersetClientPool's observerFor). */
export function supersetObserver(environmentId: string): ExchangeObserver {
  return (call, run) => {
    const endpoint = supersetEndpointClass(call.method, call.path);
    const attributes = {
      'http.request.method': call.method,
      'url.path': call.path,
      'switchyard.environment_id': environmentId,
      'switchyard.superset.endpoint': endpoint,
    };
    return inSpan(
      `superset ${call.method} ${endpoint}`,
      attributes,
      async (span) =>
        answered(
          span,
          await timedCall(metrics.supersetRequests, metrics.supersetDuration, { environment_id: environmentId, endpoint }, run),
        ),
      SpanKind.CLIENT,
    );
  };
}

const CIRCUIT_GAUGE: Record<CircuitState, number> = { closed: 0, half_open: 1, open: 2 };

/** The listener of one environment's circuit (SupersetClientPool's circuit.listenerFor): its state as a gauge, its refusals counted. */
export function supersetCircuitListener(environmentId: string): CircuitListener {
  const labels = { environment_id: environmentId };
  return {
    state: (state) => metrics.supersetCircuitState.set(labels, CIRCUIT_GAUGE[state]),
    rejected: () => metrics.supersetCircuitRejections.inc(labels),
  };
}

/** git's smart-HTTP exchanges by what they do: ref discovery, fetch (upload-pack), push (receive-pack). */
export function gitOperation(url: string): 'discover' | 'fetch' | 'push' | 'other' {
  const u = new URL(url);
  if (u.pathname.endsWith('/info/refs')) return 'discover';
  if (u.pathname.endsWith('/git-upload-pack')) return 'fetch';
  if (u.pathname.endsWith('/git-receive-pack')) return 'push';
  return 'other';
}

export function observeGit<T extends { statusCode: number }>(url: string, run: () => Promise<T>): Promise<T> {
  const operation = gitOperation(url);
  return inSpan(
    `git ${operation}`,
    { 'server.address': new URL(url).host, 'switchyard.git.operation': operation },
    async (span) => answered(span, await timedCall(metrics.gitRequests, metrics.gitDuration, { operation }, run)),
    SpanKind.CLIENT,
  );
}

/** An OpenAI-compatible API's requests by endpoint (the path's last segments, from a fixed set). */
export function llmOperation(url: string): 'chat_completions' | 'models' | 'embeddings' | 'other' {
  const p = new URL(url).pathname;
  if (p.endsWith('/chat/completions')) return 'chat_completions';
  if (p.endsWith('/embeddings')) return 'embeddings';
  if (/\/models(\/[^/]+)?$/.test(p)) return 'models';
  return 'other';
}

/** A `fetch` for the LLM client that counts, times and traces every request it sends through `inner`. */
export function observedLlmFetch(inner: typeof fetch = globalThis.fetch): typeof fetch {
  return (input, init) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    const operation = llmOperation(url);
    return inSpan(
      `llm ${operation}`,
      { 'server.address': new URL(url).host, 'switchyard.llm.operation': operation },
      async (span) => answered(span, await timedCall(metrics.llmRequests, metrics.llmDuration, { operation }, () => inner(input, init))),
      SpanKind.CLIENT,
    );
  };
}
