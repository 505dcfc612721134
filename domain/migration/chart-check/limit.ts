/**
 * The per-environment bound on chart queries: at most VERIFY_CONCURRENCY chart queries (chart-data
 * and legacy explore calls) at once against one environment from this worker, however many
 * verifications run beside each other (a run's parts overlap the next batch's import and each
 * other: docs/migration-batching.md). Superset answers chart queries on a few threads of the
 * process that also imports, so the bound is the environment's, not a dashboard's or a task's.
 * The parallelism inside a verification (dashboards, charts, source and target side by side) only
 * keeps enough queries waiting; this is the one place that says how many go out.
 */
import type { MigrationUpstream } from '../upstream.ts';

/** One environment's gate: runs at most `limit` calls at once, the others wait in arrival order. */
class Gate {
  private running = 0;
  private readonly waiting: Array<() => void> = [];
  private readonly limit: number;

  constructor(limit: number) {
    this.limit = limit;
  }

  async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.running >= this.limit) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.running++;
    try {
      return await fn();
    } finally {
      // The slot passes straight to the next waiter (running stays counted), or is freed.
      const next = this.waiting.shift();
      if (next) next();
      else this.running--;
    }
  }
}

/** The gates of a worker, one per environment id, each of `limit` (config VERIFY_CONCURRENCY). */
export class ChartQueryGates {
  private readonly gates = new Map<string, Gate>();
  readonly limit: number;

  constructor(limit: number) {
    this.limit = limit;
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`the chart query limit must be a positive integer, not ${limit}`);
  }

  /** The upstream of environment `envId` with its chart queries held to the environment's bound (everything else as it was). */
  limited(up: MigrationUpstream, envId: string): MigrationUpstream {
    let gate = this.gates.get(envId);
    if (!gate) this.gates.set(envId, (gate = new Gate(this.limit)));
    const g = gate;
    return {
      ...up,
      runQueryContext: (queryContext) => g.run(() => up.runQueryContext(queryContext)),
      runLegacyChart: (chartId) => g.run(() => up.runLegacyChart(chartId)),
      // One call however many charts it carries: Superset runs its queries one after another.
      ...(up.runQueryContexts ? { runQueryContexts: (queryContexts) => g.run(() => up.runQueryContexts!(queryContexts)) } : {}),
    };
  }
}

const perProcess = new Map<number, ChartQueryGates>();

/**
 * The worker process's gates of this limit: every kind of task that checks charts (a migration's
 * verification, a validation) holds its queries to the same bound per environment, so two such
 * tasks side by side never send more than the one limit.
 */
export function sharedChartQueryGates(limit: number): ChartQueryGates {
  let gates = perProcess.get(limit);
  if (!gates) perProcess.set(limit, (gates = new ChartQueryGates(limit)));
  return gates;
}
