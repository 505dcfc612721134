import os from 'node:os';
import path from 'node:path';
import { PROJECT_ROOT } from '../lib/config.ts';
import { BENCH_ADMIN_PASSWORD, RssSampler, numberArg, percentile, rssMb, startBenchStack, waitUntil } from './support.ts';

/**
 * Task creation through the API against the embedded stack (real PostgreSQL, Temporal, worker):
 * creation latency p50/p99, tasks per second, API and worker resident memory under load.
 * Targets on 2 cores: p99 <= 50 ms, >= 100 tasks/s, API + worker <= 400 MB.
 * Usage: npm run bench:tasks [-- --rate 100 --warmup 3 --seconds 10 --tasks 1000 --concurrency 8 --split]
 * (`--split`: API and worker as two processes, as a scaled deployment runs them; default: one, as `npm start`.)
 */
const TOTAL = numberArg('tasks', 1000);
const CONCURRENCY = numberArg('concurrency', 8);
const RATE = numberArg('rate', 100);
const SECONDS = numberArg('seconds', 10);
const WARMUP = numberArg('warmup', 3);

type Created = { ms: number; app: number; id: string };
type Loop = { latencies: number[]; app: number[]; bySecond: number[][]; seconds: number };
type Memory = { peaks: Array<{ name: string; peak: number; end: number }>; peakTotal: number };
const f = (n: number) => n.toFixed(1);

/** Signs in and answers a timed task creation (selfcheck) through the API. */
async function taskCreator(base: string): Promise<{ create: () => Promise<Created>; headers: Record<string, string> }> {
  const login = await fetch(`${base}/api/auth/login`, {
    method: 'POST',
    body: new URLSearchParams({ username: 'admin', password: BENCH_ADMIN_PASSWORD }),
  });
  const { access_token } = (await login.json()) as { access_token: string };
  const headers = { authorization: `Bearer ${access_token}`, 'content-type': 'application/json' };
  const create = async () => {
    const t0 = performance.now();
    const r = await fetch(`${base}/api/tasks/selfcheck`, { method: 'POST', headers, body: '{}' });
    const body = (await r.json()) as { task_id: string };
    if (r.status !== 202) throw new Error(`create failed: ${r.status} ${JSON.stringify(body)}`);
    // The app's own time (Server-Timing) apart from the client's tells a slow handler from a queue.
    const app = Number(/app;dur=([\d.]+)/.exec(r.headers.get('server-timing') ?? '')?.[1] ?? NaN);
    return { ms: performance.now() - t0, app, id: body.task_id };
  };
  return { create, headers };
}

/**
 * Open loop: requests arrive at the target rate whatever the answers do, so the latency is
 * the one a client sees at that load (no coordinated omission).
 */
async function openLoop(create: () => Promise<Created>, ids: string[], secs: number): Promise<Loop> {
  const all: Array<Promise<number>> = [];
  const app: number[] = [];
  const bySecond: number[][] = Array.from({ length: secs }, () => []);
  const start = performance.now();
  for (let i = 0; i < RATE * secs; i++) {
    const wait = start + (i * 1000) / RATE - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    all.push(
      create().then((c) => {
        ids.push(c.id);
        app.push(c.app);
        bySecond[Math.floor(i / RATE)]?.push(c.ms);
        return c.ms;
      }),
    );
  }
  const latencies = (await Promise.all(all)).sort((a, b) => a - b);
  return { latencies, app: app.sort((a, b) => a - b), bySecond, seconds: (performance.now() - start) / 1000 };
}

/** Closed loop: as fast as CONCURRENCY clients can go. */
async function closedLoop(create: () => Promise<Created>, ids: string[]): Promise<{ latencies: number[]; seconds: number }> {
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < TOTAL) {
        next++;
        const { ms, id } = await create();
        latencies.push(ms);
        ids.push(id);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  return { latencies, seconds };
}

/** Waits for the worker to finish the burst, to see its memory with a full backlog. */
async function drain(base: string, headers: Record<string, string>, last: string): Promise<void> {
  await waitUntil(
    async () => ((await (await fetch(`${base}/api/tasks/${last}`, { headers })).json()) as { status: string }).status === 'SUCCEEDED',
    900_000,
    'the burst to finish',
  );
}

function report(
  mode: string,
  run: { warm: Loop | undefined; paced: Loop; flat: { latencies: number[]; seconds: number }; tasks: number; drained: number },
  memory: Memory,
): void {
  const { warm, paced, flat, tasks, drained } = run;
  const { latencies: pacedLatencies, app: pacedApp, bySecond, seconds: pacedSeconds } = paced;
  const { latencies, seconds } = flat;
  const { peaks, peakTotal } = memory;
  console.log(
    `\nselfcheck task creation through the API (embedded stack: PostgreSQL, Temporal dev server, 1 worker; ${process.platform}, ${os.cpus().length} cores)`,
  );
  if (warm) {
    console.log(
      `  warm-up at ${RATE} tasks/s for ${WARMUP} s from idle (not in the figures below): p50 ${f(percentile(warm.latencies, 50))} ms  p99 ${f(percentile(warm.latencies, 99))} ms  max ${f(warm.latencies.at(-1)!)} ms`,
    );
  }
  console.log(
    `  then at ${RATE} tasks/s for ${SECONDS} s (open loop, ${pacedLatencies.length} tasks, achieved ${f(pacedLatencies.length / pacedSeconds)}/s):`,
  );
  console.log(
    `    latency p50 ${f(percentile(pacedLatencies, 50))} ms  p99 ${f(percentile(pacedLatencies, 99))} ms  max ${f(pacedLatencies.at(-1)!)} ms   (target p99 <= 50 ms)`,
  );
  console.log(
    `    of which in the app (Server-Timing): p50 ${f(percentile(pacedApp, 50))} ms  p99 ${f(percentile(pacedApp, 99))} ms  max ${f(pacedApp.at(-1)!)} ms`,
  );
  // Whether slow answers come in one stall or spread over the run tells a pause from a steady queue.
  console.log(`    slowest answer in each second: ${bySecond.map((l) => f(Math.max(0, ...l))).join(' ')} ms`);
  console.log(`  flat out, ${CONCURRENCY} concurrent clients, ${TOTAL} tasks (closed loop):`);
  console.log(
    `    throughput ${f(TOTAL / seconds)} tasks/s created   (target >= 100); latency p50 ${f(percentile(latencies, 50))} ms  p99 ${f(percentile(latencies, 99))} ms`,
  );
  console.log(`  all ${tasks} tasks executed by the worker in ${f(drained)} s (${f(tasks / drained)} tasks/s end to end)`);
  console.log(
    `  peak RSS    ${peaks.map((p) => `${p.name} ${f(p.peak)} MB`).join(' + ')} = ${f(peakTotal)} MB   (target <= 400 MB; at the end ${f(peaks.reduce((a, p) => a + p.end, 0))} MB)`,
  );
  console.log(
    JSON.stringify({
      mode,
      rate: RATE,
      p50_ms: +f(percentile(pacedLatencies, 50)),
      p99_ms: +f(percentile(pacedLatencies, 99)),
      warmup_p99_ms: warm ? +f(percentile(warm.latencies, 99)) : null,
      app_p99_ms: +f(percentile(pacedApp, 99)),
      throughput_per_s: +f(TOTAL / seconds),
      end_to_end_per_s: +f(tasks / drained),
      peak_rss_mb: Object.fromEntries(peaks.map((p) => [p.name, +f(p.peak)])),
      peak_rss_total_mb: +f(peakTotal),
    }),
  );
}

async function main() {
  const mode = process.argv.includes('--split') ? 'split' : 'single';
  const stack = await startBenchStack(path.join(PROJECT_ROOT, '.data', 'bench'), { mode });
  const { base } = stack;
  try {
    await waitUntil(async () => (await fetch(`${base}/api/ready`)).ok, 120_000, 'API ready with a polling worker');
    const { create, headers } = await taskCreator(base);
    for (let i = 0; i < 20; i++) await create(); // warm-up (JIT, pools)

    const samplers = stack.processes.map((p) => ({ name: p.name, pid: p.child.pid!, rss: new RssSampler(p.child.pid!) }));
    const ids: string[] = [];
    // Phase 0: the same load for a few seconds first, measured apart, so that the measured phase
    // sees what the goal is about, a worker already busy with a backlog, rather than the step
    // from idle (pools growing, the worker's first workflows).
    const loadStart = performance.now();
    const warm = WARMUP > 0 ? await openLoop(create, ids, WARMUP) : undefined;
    // Phase 1: the measured open loop.
    const paced = await openLoop(create, ids, SECONDS);
    // Phase 2, closed loop: as fast as CONCURRENCY clients can go.
    const flat = await closedLoop(create, ids);
    await drain(base, headers, ids.at(-1)!);
    const drained = (performance.now() - loadStart) / 1000;
    const peaks = samplers.map((p) => ({ name: p.name, peak: p.rss.stop(), end: rssMb(p.pid) }));
    const peakTotal = peaks.reduce((a, p) => a + p.peak, 0);
    flat.latencies.sort((a, b) => a - b);
    report(mode, { warm, paced, flat, tasks: ids.length, drained }, { peaks, peakTotal });
  } finally {
    await stack.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
