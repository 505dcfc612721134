import path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import { setTimeout as pause } from 'node:timers/promises';
import { detached } from '../lib/detached.ts';
import { SEARCH_ATTRIBUTES } from '../contracts/search-attributes.ts';

/** A numeric command-line option (`--name N`), or its default. */
export function numberArg(name: string, dflt: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
}

/** The median (of an even count, the mean of the middle two). */
export function median(xs: number[]): number {
  const s = [...xs].sort((x, y) => x - y);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

export function percentile(sorted: number[], p: number): number {
  if (!sorted.length) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

/** Resident memory of a process in MB, from /proc (Linux). */
export function rssMb(pid: number): number {
  let status: string;
  try {
    status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return NaN; // the process has ended: the bench's own error says why
  }
  const m = /VmRSS:\s+(\d+) kB/.exec(status);
  return m ? Number(m[1]) / 1024 : NaN;
}

export class RssSampler {
  peak = 0;
  private timer: NodeJS.Timeout;
  constructor(pid: number) {
    this.timer = setInterval(() => {
      const now = rssMb(pid);
      if (!Number.isNaN(now)) this.peak = Math.max(this.peak, now);
    }, 100);
    this.timer.unref();
  }
  stop(): number {
    clearInterval(this.timer);
    return this.peak;
  }
}

/** One window of a {@link MemorySampler}: the peaks (and the JS heap's floor) between two laps, in MB. */
export interface MemoryLap {
  rss_peak_mb: number;
  /** The worker thread's V8 heap in use at its highest and lowest (its floor: what survived the collections); null without metrics. */
  heap_used_peak_mb: number | null;
  heap_used_floor_mb: number | null;
}

/**
 * A process's memory over time, in windows (`lap()`): its resident size from /proc every 100 ms
 * and, given the process's metrics endpoint (WORKER_METRICS_PORT), the worker thread's V8 heap in
 * use every second. RSS alone cannot tell a heap that keeps what it was given from native memory
 * (Temporal's core runtime, the workflow threads, malloc's arenas) that grows; the heap's floor can.
 */
export class MemorySampler {
  private rss = 0;
  private heap: number[] = [];
  private readonly timer: NodeJS.Timeout;
  private readonly polling: Promise<void>;
  private readonly halt = new AbortController();

  constructor(pid: number, metricsUrl?: string) {
    this.timer = setInterval(() => {
      const now = rssMb(pid);
      if (!Number.isNaN(now)) this.rss = Math.max(this.rss, now);
    }, 100);
    this.timer.unref();
    this.polling = metricsUrl ? this.pollHeap(metricsUrl) : Promise.resolve();
  }

  private async pollHeap(url: string): Promise<void> {
    while (!this.halt.signal.aborted) {
      const text = await fetch(url, { signal: this.halt.signal }).then(
        (r) => r.text(),
        () => '', // stopped mid-call, or the process is between answers: this second has no figure
      );
      const m = /^switchyard_nodejs_heap_size_used_bytes (\S+)$/m.exec(text);
      if (m) this.heap.push(Number(m[1]) / 2 ** 20);
      await pause(1_000, undefined, { signal: this.halt.signal }).catch(() => undefined); // stop() ends the wait
    }
  }

  /** The window since the last lap (or the start), and a new one begun. */
  lap(): MemoryLap {
    const round = (x: number) => Math.round(x);
    const lap = {
      rss_peak_mb: round(this.rss),
      heap_used_peak_mb: this.heap.length ? round(Math.max(...this.heap)) : null,
      heap_used_floor_mb: this.heap.length ? round(Math.min(...this.heap)) : null,
    };
    this.rss = 0;
    this.heap = [];
    return lap;
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.halt.abort();
    await this.polling;
  }
}

const onInterrupt = new Set<() => Promise<void>>();
let listening = false;

/**
 * Makes `stop` run too when the bench is interrupted (Ctrl-C, SIGTERM) before it stops what it
 * started itself: the Temporal dev server and the Superset servers run in sessions or process
 * groups of their own and would outlive it. Returns `stop` to call as usual (it runs once); on an
 * interruption every registered stop runs, the latest first, and the bench exits with 130.
 */
export function stopOnInterrupt(stop: () => Promise<unknown>): () => Promise<void> {
  let stopping: Promise<void> | undefined;
  const once = () => {
    onInterrupt.delete(once);
    return (stopping ??= stop().then(() => undefined));
  };
  // Once per process: listeners added again after an earlier stack stopped would each run
  // `interrupted`, and the second, finding nothing left to await, would exit mid-stop.
  if (!listening) {
    listening = true;
    // Detached: a signal handler cannot be awaited; a failed stop is printed.
    process.once('SIGINT', () => detached('stopping the benchmark', interrupted(), console));
    process.once('SIGTERM', () => detached('stopping the benchmark', interrupted(), console));
  }
  onInterrupt.add(once);
  return once;
}

async function interrupted(): Promise<void> {
  for (const stop of [...onInterrupt].reverse()) await stop().catch((err: unknown) => console.error(err));
  process.exit(130);
}

/** A Switchyard process; its JSON log goes to `logFile` when given (read it when a bench run dies). */
export function spawnEntry(entry: string, flags: readonly string[], env: NodeJS.ProcessEnv, logFile?: string): ChildProcess {
  const out = logFile ? fs.openSync(logFile, 'w') : 'ignore';
  return spawn(process.execPath, [...flags, entry], { env, stdio: ['ignore', out, 'inherit'] });
}

export async function waitUntil(fn: () => Promise<boolean>, timeoutMs: number, what: string, pollMs = 200): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await fn().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, pollMs));
  }
}

export async function stopChild(c: ChildProcess): Promise<void> {
  if (c.exitCode !== null) return;
  await new Promise<void>((resolve) => {
    c.once('exit', () => resolve());
    c.kill('SIGTERM');
    setTimeout(() => c.kill('SIGKILL'), 10_000).unref();
  });
}

export const BENCH_ADMIN_PASSWORD = 'bench-admin-password-1';

/** Environment for a benchmark's own embedded stack: its data folder, free ports, fixed credentials. */
export async function benchEnv(dataDir: string): Promise<NodeJS.ProcessEnv> {
  const { freePort } = await import('../lib/embedded/free-port.ts');
  return {
    ...process.env,
    SWITCHYARD_DATA_DIR: dataDir,
    EMBEDDED_POSTGRES_PORT: String(await freePort()),
    TEMPORAL_PORT: String(await freePort()),
    TEMPORAL_UI_PORT: String(await freePort()),
    PORT: String(await freePort()),
    SWITCHYARD_ADMIN_PASSWORD: BENCH_ADMIN_PASSWORD,
    SWITCHYARD_SECRET_KEY: 'bench-secret-key-0123456789-0123456789-abcdef',
    // BENCH_LOG_LEVEL=debug keeps every Superset call with its time in the processes' logs.
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'warn',
  };
}

/**
 * PostgreSQL, Temporal and Switchyard as `npm start` runs it: by default the API and one worker in
 * one process (`single`), or an API process and a worker process at lower priority (`split`).
 */
export async function startBenchStack(dataDir: string, opts: { mode?: 'single' | 'split'; env?: Record<string, string> } = {}) {
  const [{ loadConfig }, { startInfra }, { createLogger }, { lowerPriority, NODE_FLAGS }, { buildWorkflowBundle }] = await Promise.all([
    import('../lib/config.ts'),
    import('../lib/embedded/stack.ts'),
    import('../lib/logger.ts'),
    import('../lib/process-flags.ts'),
    import('../worker/build-bundle.ts'),
  ]);
  // A fresh stack every run: Temporal's SQLite file grows with every task and slows later runs.
  fs.rmSync(dataDir, { recursive: true, force: true });
  const env = { ...(await benchEnv(dataDir)), ...opts.env };
  const config = loadConfig(env);
  const infra = await startInfra(config, createLogger('warn', 'bench'), { searchAttributes: SEARCH_ATTRIBUTES });
  const bundle = await buildWorkflowBundle(path.join(dataDir, 'workflow-bundle.js'));
  const childEnv = { ...env, DATABASE_URL: infra.databaseUrl, TEMPORAL_ADDRESS: infra.temporalAddress, SWITCHYARD_WORKFLOW_BUNDLE: bundle };
  const processes: Array<{ name: string; child: ChildProcess }> = [];
  if ((opts.mode ?? 'single') === 'single') {
    processes.push({
      name: 'api+worker',
      child: spawnEntry('scripts/all-in-one.ts', NODE_FLAGS.allInOne, childEnv, path.join(dataDir, 'switchyard.log')),
    });
  } else {
    processes.push({ name: 'api', child: spawnEntry('api/main.ts', NODE_FLAGS.api, childEnv, path.join(dataDir, 'api.log')) });
    const worker = spawnEntry('worker/main.ts', NODE_FLAGS.worker, childEnv, path.join(dataDir, 'worker.log'));
    lowerPriority(worker.pid!);
    processes.push({ name: 'worker', child: worker });
  }
  const base = `http://127.0.0.1:${config.PORT}`;
  const stop = stopOnInterrupt(async () => {
    for (const p of processes) await stopChild(p.child);
    await infra.stop();
  });
  return {
    base,
    databaseUrl: infra.databaseUrl,
    temporalAddress: infra.temporalAddress,
    processes,
    stop,
  };
}
