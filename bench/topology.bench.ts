import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PROJECT_ROOT } from '../lib/config.ts';
import { createLogger } from '../lib/logger.ts';
import { startTopology } from '../scripts/topology.ts';
import { startFakeSuperset, type FakeSuperset } from '../test/support/fake-superset.ts';
import { BENCH_ADMIN_PASSWORD, benchEnv, startBenchStack, stopOnInterrupt, waitUntil } from './support.ts';

/**
 * The production topology's numbers beside the embedded default: end-to-end tasks/s (selfcheck
 * tasks created by 8 clients until all have finished) and the wall time of one N-dashboard
 * migration (default 1,000, one chart each, between two in-process fake Supersets), first on
 * `npm start`'s stack (dev server, API and worker in one process), then on the real Temporal
 * server on PostgreSQL with the API apart and 1, 2 and 4 worker processes (one stack, workers
 * added between rounds). Ends with one JSON line.
 * Usage: npm run bench:topology [-- --tasks 300 --dashboards 1000 --workers 1,2,4 --shapes embedded,real]
 */
const arg = (name: string, dflt: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : dflt;
};
const TASKS = Number(arg('tasks', '300'));
const DASHBOARDS = Number(arg('dashboards', '1000'));
const WORKERS = arg('workers', '1,2,4').split(',').map(Number);
/** `--shapes real` or `--shapes embedded` measures one side alone (to measure it again at another load). */
const SHAPES = arg('shapes', 'embedded,real').split(',');
const CONCURRENCY = 8;

interface Round {
  shape: string;
  tasks_per_s: number;
  migration_s: number;
  /** The 1-minute load average when the round ended: the machine is shared. */
  load_1m: number;
}

/** A signed-in API client. */
async function apiClient(base: string) {
  await waitUntil(async () => (await fetch(`${base}/api/ready`)).ok, 180_000, 'API ready');
  const login = await fetch(`${base}/api/auth/login`, {
    method: 'POST',
    body: new URLSearchParams({ username: 'admin', password: BENCH_ADMIN_PASSWORD }),
  });
  const headers = {
    authorization: `Bearer ${((await login.json()) as { access_token: string }).access_token}`,
    'content-type': 'application/json',
  };
  const call = async (method: string, p: string, body?: unknown) => {
    const r = await fetch(base + p, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const j = (await r.json()) as Record<string, any>;
    if (r.status >= 300) throw new Error(`${method} ${p}: ${r.status} ${JSON.stringify(j)}`);
    return j;
  };
  return call;
}
type Call = Awaited<ReturnType<typeof apiClient>>;

const FINAL = new Set(['SUCCEEDED', 'FAILED', 'CANCELLED']);

async function untilFinished(call: Call, ids: string[]): Promise<void> {
  const pending = new Set(ids);
  await waitUntil(
    async () => {
      for (const id of [...pending]) {
        const t = await call('GET', `/api/tasks/${id}`);
        if (!FINAL.has(t.status)) return false; // the rest can wait for the next look
        if (t.status !== 'SUCCEEDED') throw new Error(`task ${id} ended ${t.status}: ${JSON.stringify(t.error)}`);
        pending.delete(id);
      }
      return true;
    },
    3_600_000,
    'the tasks to finish',
    500,
  );
}

/** TASKS selfcheck tasks from CONCURRENCY clients; seconds from the first request until the last has finished. */
async function tasksPerSecond(call: Call): Promise<number> {
  const ids: string[] = [];
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (ids.length < TASKS) {
        ids.push('');
        const at = ids.length - 1;
        ids[at] = (await call('POST', '/api/tasks/selfcheck', {})).task_id;
      }
    }),
  );
  await untilFinished(call, ids);
  return TASKS / ((performance.now() - t0) / 1000);
}

/** One migration of every seeded dashboard into a new empty target; its wall time in seconds. */
async function migrationSeconds(call: Call, source: FakeSuperset, sourceEnv: string, label: string): Promise<number> {
  const target = await startFakeSuperset();
  try {
    const targetDb = target.addDatabase({ name: 'Topology bench warehouse' });
    const sourceDb = source.databases.find((d) => d.database_name === 'Topology bench database')!;
    const targetEnv = (
      await call('POST', '/api/environments', {
        name: `target-${label}`,
        base_url: target.baseUrl,
        username: target.username,
        password: target.password,
      })
    ).id;
    const t0 = performance.now();
    const { task_id } = await call('POST', '/api/dashboards/migrate', {
      source_env_id: sourceEnv,
      target_env_id: targetEnv,
      dashboard_ids: source.dashboards.map((d) => d.id),
      db_mappings: [{ source_database_id: sourceDb.id, target_database_id: targetDb.id }],
    });
    await untilFinished(call, [task_id]);
    return (performance.now() - t0) / 1000;
  } finally {
    await target.close();
  }
}

async function measure(shape: string, base: string, source: FakeSuperset, rounds: Round[]): Promise<void> {
  const call = await apiClient(base);
  const sourceEnv = (
    await call('POST', '/api/environments', {
      name: `source-${shape}`,
      base_url: source.baseUrl,
      username: source.username,
      password: source.password,
    })
  ).id;
  const tasks = await tasksPerSecond(call);
  process.stderr.write(`  ${shape}: ${tasks.toFixed(1)} tasks/s end to end; migrating ${DASHBOARDS} dashboards...\n`);
  const migration = await migrationSeconds(call, source, sourceEnv, shape);
  process.stderr.write(`  ${shape}: migration ${migration.toFixed(1)} s\n`);
  rounds.push({
    shape,
    tasks_per_s: Math.round(tasks * 10) / 10,
    migration_s: Math.round(migration * 10) / 10,
    load_1m: +os.loadavg()[0].toFixed(1),
  });
}

async function main() {
  const loadAtStart = os.loadavg();
  const load = loadAtStart.map((l) => l.toFixed(1)).join(' ');
  const source = await startFakeSuperset();
  source.seedDashboards(DASHBOARDS, { prefix: 'Topology bench', charts: 1 });
  const rounds: Round[] = [];
  const dir = path.join(PROJECT_ROOT, '.data', 'bench-topology');
  try {
    if (SHAPES.includes('embedded')) {
      const embedded = await startBenchStack(path.join(dir, 'embedded'));
      try {
        await measure('embedded (dev server, API+worker in one process)', embedded.base, source, rounds);
      } finally {
        await embedded.stop();
      }
    }
    if (!SHAPES.includes('real')) return report(rounds, load, loadAtStart);
    // A fresh stack every run, as startBenchStack's: Temporal's history of earlier runs stays out.
    fs.rmSync(path.join(dir, 'real'), { recursive: true, force: true });
    const env = await benchEnv(path.join(dir, 'real'));
    const logDir = path.join(dir, 'logs');
    fs.mkdirSync(logDir, { recursive: true });
    const topo = await startTopology({ env, workers: 0, logger: createLogger('warn', 'bench'), logDir });
    const stop = stopOnInterrupt(() => topo.stop());
    try {
      for (const n of WORKERS) {
        while (topo.workers.length < n) topo.addWorker();
        await measure(`real server, API apart, ${n} worker${n > 1 ? 's' : ''}`, topo.base, source, rounds);
      }
    } finally {
      await stop();
    }
  } finally {
    await source.close();
  }
  report(rounds, load, loadAtStart);
}

function report(rounds: Round[], load: string, loadAtStart: number[]): void {
  console.log(
    `\nProduction topology vs embedded default (${TASKS} selfcheck tasks; ${DASHBOARDS}-dashboard migration; ${os.cpus().length} cores, load average at start ${load})`,
  );
  console.log(`  ${'shape'.padEnd(52)} ${'tasks/s'.padStart(8)} ${'migration s'.padStart(12)} ${'load'.padStart(6)}`);
  for (const r of rounds)
    console.log(
      `  ${r.shape.padEnd(52)} ${String(r.tasks_per_s).padStart(8)} ${String(r.migration_s).padStart(12)} ${String(r.load_1m).padStart(6)}`,
    );
  console.log(
    JSON.stringify({
      tasks: TASKS,
      dashboards: DASHBOARDS,
      cores: os.cpus().length,
      load_average_at_start: loadAtStart.map((l) => +l.toFixed(1)),
      load_average_at_end: os.loadavg().map((l) => +l.toFixed(1)),
      rounds,
    }),
  );
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
