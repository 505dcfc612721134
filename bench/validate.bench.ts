import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PROJECT_ROOT } from '../lib/config.ts';
import { SupersetClient } from '../lib/superset/client.ts';
import {
  createBigNumberChart,
  createDashboard,
  createDataset,
  createSqliteDatabase,
  createTableChart,
  login,
  sqlMetric,
} from '../test/support/superset/fixtures.ts';
import { startSuperset } from '../test/support/superset/instance.ts';
import { copyModelDashboard } from './validate-fixtures.ts';
import { freePort } from '../lib/embedded/free-port.ts';
import {
  BENCH_ADMIN_PASSWORD,
  MemorySampler,
  type MemoryLap,
  median,
  numberArg,
  rssMb,
  startBenchStack,
  stopOnInterrupt,
  waitUntil,
} from './support.ts';

/**
 * The content validator on N dashboards of C charts each (`validate` task: every chart's query
 * planned as its release's frontend sends it and run through chart-data, items recorded, verdict
 * history kept) against the sum of the bare chart-data calls for the same charts (each chart's
 * saved query context posted once, one after another), on one real Superset 6.1.0.
 * Usage: npm run bench:validate [-- --dashboards 10] [-- --charts 10] [-- --rounds 3]
 * Each chart asks a query of its own (its own row limit or metric), so nothing is shared between
 * charts. Each round validates the same dashboards and then makes the bare calls, back to back;
 * the figures are the rounds' medians. Memory: the Switchyard process's resident size before the
 * first round and its peak during the validations (flat means the peak does not grow with N), and
 * each round's peak with the worker thread's V8 heap (its peak and floor, from the process's
 * metrics): a peak that grows from round to round is memory kept, one that stays is a working set.
 * The last line is one JSON object with `validate_ratio` (issue 50's goal: ≤ 1.5).
 */
const N = numberArg('dashboards', 10);
const C = numberArg('charts', 10);
const R = Math.max(1, numberArg('rounds', 3));
const W = numberArg('warm-up', 1);

type Superset = Awaited<ReturnType<typeof startSuperset>>;

/**
 * N + W dashboards of C charts (table and big-number charts, each with a query of its own) on one
 * SQLite dataset: the first made through the API, the others imported as copies of it
 * (./validate-fixtures.ts), the warm-up's W first, then the N measured.
 */
async function makeFixtures(dir: string, sa: Superset) {
  const a = await login(sa.baseUrl, sa.username, sa.password);
  const db = await createSqliteDatabase(a, { name: 'bench_wh', path: path.join(dir, 'wh.db') });
  const ds = await createDataset(a, { database: db.id, tableName: 'sales' });
  const made = [];
  for (let c = 0; c < C; c++)
    made.push(
      c % 2
        ? await createBigNumberChart(a, {
            name: `bench total ${c}`,
            datasetId: ds.id,
            metric: sqlMetric(`SUM(units) + ${c}`, `units ${c}`),
          })
        : await createTableChart(a, { name: `bench rows ${c}`, datasetId: ds.id, columns: ['ds', 'region', 'units'], rowLimit: 100 + c }),
    );
  const model = await createDashboard(a, { title: 'bench 0', charts: made });
  const all = await copyModelDashboard(a, model.id, N + W, C);
  a.close();
  const measured = all.slice(W);
  return { measured: measured.map((d) => d.id), warmUp: all.slice(0, W).map((d) => d.id), charts: measured.flatMap((d) => d.charts) };
}

async function signIn(base: string, sa: Superset) {
  await waitUntil(async () => (await fetch(`${base}/api/ready`)).ok, 120_000, 'API ready');
  const login = await fetch(`${base}/api/auth/login`, {
    method: 'POST',
    body: new URLSearchParams({ username: 'admin', password: BENCH_ADMIN_PASSWORD }),
  });
  const headers = {
    authorization: `Bearer ${((await login.json()) as { access_token: string }).access_token}`,
    'content-type': 'application/json',
  };
  const env = await fetch(`${base}/api/environments`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ name: 'bench-a', base_url: sa.baseUrl, username: sa.username, password: sa.password }),
  });
  return { headers, envId: ((await env.json()) as { id: string }).id };
}

/** One validation task, from its creation to its end as the service recorded them. */
async function validate(base: string, s: { headers: Record<string, string>; envId: string }, ids: number[]) {
  const r = await fetch(`${base}/api/environments/${s.envId}/validate`, {
    method: 'POST',
    headers: s.headers,
    body: JSON.stringify({ dashboard_ids: ids }),
  });
  const { task_id } = (await r.json()) as { task_id: string };
  let task: Record<string, any> = {};
  await waitUntil(
    async () => {
      task = (await (await fetch(`${base}/api/tasks/${task_id}`, { headers: s.headers })).json()) as Record<string, any>;
      return ['SUCCEEDED', 'FAILED', 'CANCELLED'].includes(task.status);
    },
    3_600_000,
    'the validation',
    250,
  );
  if (task.status !== 'SUCCEEDED') throw new Error(`validation ended ${task.status}: ${JSON.stringify(task.error)}`);
  return { seconds: (Date.parse(task.finished_at) - Date.parse(task.created_at)) / 1000, totals: task.result.totals };
}

/** The bare calls: each chart's saved query context posted to chart-data once; the sum of their times (the contexts read beforehand, not timed). */
async function bareCalls(client: SupersetClient, charts: number[]): Promise<number> {
  const contexts = [];
  for (const id of charts) contexts.push(JSON.parse(String((await client.charts.get(id)).query_context)) as Record<string, unknown>);
  let sum = 0;
  for (const qc of contexts) {
    const t0 = performance.now();
    await client.charts.data({ ...qc, result_format: 'json', result_type: 'full' } as never);
    sum += (performance.now() - t0) / 1000;
  }
  return sum;
}

async function main() {
  const load = os.loadavg()[0]!;
  const dir = path.join(PROJECT_ROOT, '.data', 'bench-validate');
  fs.rmSync(dir, { recursive: true, force: true });
  const sa = await startSuperset({ version: '6.1.0', dataDir: path.join(dir, 'superset-a'), fresh: true, log: () => {} });
  const stopSuperset = stopOnInterrupt(() => sa.stop());
  const metricsPort = await freePort();
  const stack = await startBenchStack(path.join(dir, 'switchyard'), { env: { WORKER_METRICS_PORT: String(metricsPort) } });
  try {
    const fx = await makeFixtures(dir, sa);
    const s = await signIn(stack.base, sa);
    const client = new SupersetClient({ baseUrl: sa.baseUrl, username: sa.username, password: sa.password });
    const pid = stack.processes[0]!.child.pid!;
    if (fx.warmUp.length) await validate(stack.base, s, fx.warmUp);
    const rssStart = rssMb(pid);
    const sampler = new MemorySampler(pid, `http://127.0.0.1:${metricsPort}/metrics`);
    const rounds: Array<{ validate_s: number; bare_s: number; ratio: number; memory: MemoryLap }> = [];
    let totals: unknown = null;
    for (let r = 0; r < R; r++) {
      const v = await validate(stack.base, s, fx.measured);
      totals = v.totals;
      const memory = sampler.lap(); // the validation's window; the bare calls below do not touch Switchyard
      const bare = await bareCalls(client, fx.charts);
      rounds.push({ validate_s: v.seconds, bare_s: bare, ratio: v.seconds / bare, memory });
      console.log(
        `round ${r + 1}: validate ${v.seconds.toFixed(2)} s, bare chart-data calls ${bare.toFixed(2)} s, ratio ${(v.seconds / bare).toFixed(2)}; Switchyard RSS peak ${memory.rss_peak_mb} MB, worker heap ${memory.heap_used_floor_mb ?? '?'}-${memory.heap_used_peak_mb ?? '?'} MB`,
      );
      sampler.lap(); // the bare calls' window, not a figure
    }
    await sampler.stop();
    const rssPeak = Math.max(...rounds.map((x) => x.memory.rss_peak_mb));
    client.close();
    const figures = {
      bench: 'validate',
      dashboards: N,
      charts_per_dashboard: C,
      charts: fx.charts.length,
      rounds,
      validate_s: median(rounds.map((x) => x.validate_s)),
      bare_chart_data_s: median(rounds.map((x) => x.bare_s)),
      validate_ratio: Number(median(rounds.map((x) => x.ratio)).toFixed(3)),
      goal: { validate_ratio: 1.5, met: median(rounds.map((x) => x.ratio)) <= 1.5 },
      totals,
      rss_start_mb: Math.round(rssStart),
      rss_peak_mb: Math.round(rssPeak),
      load: [load, os.loadavg()[0]!],
    };
    console.log(
      `validated ${N} dashboards (${fx.charts.length} charts): ${figures.validate_s.toFixed(2)} s vs ${figures.bare_chart_data_s.toFixed(2)} s of bare chart-data calls (median of ${R}); Switchyard ${figures.rss_start_mb} MB → peak ${figures.rss_peak_mb} MB`,
    );
    console.log(JSON.stringify(figures));
  } finally {
    await stack.stop();
    await stopSuperset();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
