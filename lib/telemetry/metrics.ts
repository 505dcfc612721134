/**
 * The process's Prometheus metrics (prom-client). Each process (the API, each worker; the API's
 * thread of the all-in-one process has its own module state) keeps its own registry and serves
 * it on a port of its own (./metrics-server.ts); Prometheus adds `instance` and `job`.
 *
 * Labels are bounded on purpose (docs/observability.md lists them): route templates, never raw
 * paths; environment ids (one per configured Superset), never URLs; a fixed set of endpoint
 * classes, operations and outcomes, never messages.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

export const registry = new Registry();

const SECONDS_FAST = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const SECONDS_UPSTREAM = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];
const SECONDS_TASK = [0.1, 0.5, 1, 5, 10, 30, 60, 300, 900, 3600, 4 * 3600, 24 * 3600];

const counter = (name: string, help: string, labelNames: string[]) => new Counter({ name, help, labelNames, registers: [registry] });
const histogram = (name: string, help: string, labelNames: string[], buckets: number[]) =>
  new Histogram({ name, help, labelNames, buckets, registers: [registry] });

export const metrics = {
  httpRequests: counter('switchyard_http_requests_total', 'HTTP requests answered by the API, by route template and status', [
    'method',
    'route',
    'status',
  ]),
  httpDuration: histogram(
    'switchyard_http_request_duration_seconds',
    'Time the API spent on a request',
    ['method', 'route', 'status'],
    SECONDS_FAST,
  ),
  tasksCreated: counter('switchyard_tasks_created_total', 'Tasks created (a repeated idempotency key creates none)', ['kind']),
  tasksFinished: counter('switchyard_tasks_finished_total', 'Tasks that reached a final status, by kind and outcome', ['kind', 'outcome']),
  taskDuration: histogram(
    'switchyard_task_duration_seconds',
    "From a task's creation to its final status",
    ['kind', 'outcome'],
    SECONDS_TASK,
  ),
  taskItems: histogram(
    'switchyard_task_items',
    "Items (dashboards, datasets...) in a finished task's result",
    ['kind', 'outcome'],
    [1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 10000],
  ),
  supersetRequests: counter(
    'switchyard_superset_requests_total',
    'HTTP exchanges with Superset, by environment, endpoint class and outcome',
    ['environment_id', 'endpoint', 'outcome'],
  ),
  supersetCircuitState: new Gauge({
    name: 'switchyard_superset_circuit_state',
    help: "An environment's Superset circuit in the API: 0 closed, 1 half-open (one probe let through), 2 open (exchanges refused)",
    labelNames: ['environment_id'],
    registers: [registry],
  }),
  supersetCircuitRejections: counter(
    'switchyard_superset_circuit_rejections_total',
    "Exchanges with Superset the API did not send because the environment's circuit was open",
    ['environment_id'],
  ),
  supersetDuration: histogram(
    'switchyard_superset_request_duration_seconds',
    'Latency of one HTTP exchange with Superset',
    ['environment_id', 'endpoint', 'outcome'],
    SECONDS_UPSTREAM,
  ),
  gitRequests: counter('switchyard_git_requests_total', 'HTTP exchanges with git remotes, by operation and outcome', [
    'operation',
    'outcome',
  ]),
  gitDuration: histogram(
    'switchyard_git_request_duration_seconds',
    'Latency of one HTTP exchange with a git remote',
    ['operation', 'outcome'],
    SECONDS_UPSTREAM,
  ),
  llmRequests: counter('switchyard_llm_requests_total', 'HTTP requests to LLM providers, by operation and outcome', [
    'operation',
    'outcome',
  ]),
  llmDuration: histogram(
    'switchyard_llm_request_duration_seconds',
    'Latency of one request to an LLM provider',
    ['operation', 'outcome'],
    SECONDS_UPSTREAM,
  ),
  validationCharts: counter('switchyard_validation_charts_total', 'Charts the content validator checked, by environment and verdict', [
    'environment_id',
    'verdict',
  ]),
  validationDashboards: counter(
    'switchyard_validation_dashboards_total',
    'Dashboards the content validator checked, by environment and status',
    ['environment_id', 'status'],
  ),
  validationFailing: new Gauge({
    name: 'switchyard_validation_dashboards_failing',
    help: 'Dashboards of an environment whose latest proven validation verdict is broken (set as each validation ends)',
    labelNames: ['environment_id'],
    registers: [registry],
  }),
  validationDuration: histogram(
    'switchyard_validation_dashboard_duration_seconds',
    "Time one dashboard's validation took (its charts' queries included)",
    ['environment_id'],
    SECONDS_UPSTREAM,
  ),
};

let defaultsOn = false;
/** Node's own metrics (CPU, memory, event-loop lag, GC), prefixed; started with the metrics server only. */
export function collectProcessMetrics(): void {
  if (defaultsOn) return;
  defaultsOn = true;
  collectDefaultMetrics({ register: registry, prefix: 'switchyard_' });
}

/**
 * The outcome label of one upstream call: the answer's status class, or what kept it from
 * answering (a bounded set: Superset's and git's failure reasons are short identifiers).
 */
export function callOutcome(result: { status: number } | { error: unknown }): string {
  if ('status' in result) {
    const s = result.status;
    return s < 400 ? 'success' : s < 500 ? 'client_error' : 'server_error';
  }
  const reason = (result.error as { reason?: unknown; code?: unknown } | undefined)?.reason;
  if (typeof reason === 'string' && /^[a-z_]{1,32}$/.test(reason)) return reason;
  const name = (result.error as Error | undefined)?.name;
  if (name === 'HostNotAllowedError') return 'refused'; // the egress policy: nothing was sent
  if (name === 'TimeoutError' || name === 'AbortError') return 'timeout';
  return 'error';
}

/** Times `run` and records it under `labels` plus its outcome in a counter and a histogram. */
export async function timedCall<T extends { status: number } | { statusCode: number }>(
  counterMetric: Counter,
  durationMetric: Histogram,
  labels: Record<string, string>,
  run: () => Promise<T>,
): Promise<T> {
  const started = performance.now();
  const done = (outcome: string) => {
    const all = { ...labels, outcome };
    counterMetric.inc(all);
    durationMetric.observe(all, (performance.now() - started) / 1000);
  };
  try {
    const res = await run();
    done(callOutcome({ status: 'status' in res ? res.status : res.statusCode }));
    return res;
  } catch (error) {
    done(callOutcome({ error }));
    throw error;
  }
}

/** A task reached its final status: counted by kind and outcome, with its run time and, for item-by-item tasks, its item count. */
export function recordTaskFinished(kind: string, status: string, seconds: number, items?: number): void {
  const labels = { kind, outcome: status.toLowerCase() };
  metrics.tasksFinished.inc(labels);
  metrics.taskDuration.observe(labels, Math.max(0, seconds));
  if (items !== undefined) metrics.taskItems.observe(labels, items);
}
