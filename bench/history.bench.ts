import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { PROJECT_ROOT } from '../lib/config.ts';
import { startFakeSuperset, type FakeSuperset } from '../test/support/fake-superset.ts';
import { workflowRuns, type WorkflowRun } from '../test/support/workflow-runs.ts';
import { BENCH_ADMIN_PASSWORD, numberArg, startBenchStack, waitUntil } from './support.ts';

/**
 * Many dashboards in one task: a backup, then a migration, of N dashboards (default 1,000) through the API of the
 * embedded stack (`npm start` as it runs: PostgreSQL, Temporal dev server, API and worker in one
 * process) against the in-process fake Superset holding them (one chart each, exported as real
 * bundles). Prints the task's time, how many workflow runs it took (continue-as-new), the history
 * of every run (events, and bytes: the encoded size of the run's History proto as Temporal sends
 * it), the largest run, and the task result's item count.
 * Usage: npm run bench:history [-- --dashboards 1000 --per-run 100]
 * (`--per-run`: TASK_ITEMS_PER_RUN for the stack; the default is the configuration's.)
 *
 * One function per task kind (`KINDS`), each starting its task over the same dashboards and
 * answering the task id; the migration goes into a second fake holding nothing. Figures are per
 * kind (`backup_runs`, `migration_max_history_bytes`, ...).
 */
const N = numberArg('dashboards', 1000);
const PER_RUN = numberArg('per-run', 0);

interface BenchContext {
  post(path: string, body: unknown): Promise<Record<string, any>>;
  /** Registers a fake Superset as an environment; answers its id. */
  environment(name: string, fake: FakeSuperset): Promise<string>;
  source: FakeSuperset;
  sourceEnv: string;
  dashboardIds: number[];
  /** Closed when the bench ends (fakes a kind started). */
  cleanup: Array<() => Promise<void>>;
}

/** Task kinds measured over the same dashboards: each starts its task and answers the task id. */
const KINDS: Record<string, (ctx: BenchContext) => Promise<string>> = {
  backup: async (ctx) => (await ctx.post('/api/dashboards/backup', { env_id: ctx.sourceEnv, dashboard_ids: ctx.dashboardIds })).task_id,
  // The same dashboards into a second, empty fake, their database mapped onto one of its own.
  migration: async (ctx) => {
    const target = await startFakeSuperset();
    ctx.cleanup.push(() => target.close());
    const targetDb = target.addDatabase({ name: 'History bench warehouse' });
    const sourceDb = ctx.source.databases.find((d) => d.database_name === 'History bench database')!;
    const targetEnv = await ctx.environment('history-target', target);
    return (
      await ctx.post('/api/dashboards/migrate', {
        source_env_id: ctx.sourceEnv,
        target_env_id: targetEnv,
        dashboard_ids: ctx.dashboardIds,
        db_mappings: [{ source_database_id: sourceDb.id, target_database_id: targetDb.id }],
      })
    ).task_id;
  },
};

async function main() {
  const dir = path.join(PROJECT_ROOT, '.data', 'bench-history');
  const source = await startFakeSuperset();
  const dashboardIds = source.seedDashboards(N, { prefix: 'History bench', charts: 1 }).map((d) => d.id);
  const stack = await startBenchStack(path.join(dir, 'switchyard'), { env: PER_RUN ? { TASK_ITEMS_PER_RUN: String(PER_RUN) } : {} });
  const { base } = stack;
  const connection = await Connection.connect({ address: stack.temporalAddress });
  const cleanup: Array<() => Promise<void>> = [];
  const temporal = new Client({ connection });
  try {
    await waitUntil(async () => (await fetch(`${base}/api/ready`)).ok, 120_000, 'API ready');
    const headers = await signIn(base);
    const post = async (p: string, body: unknown) => {
      const r = await fetch(base + p, { method: 'POST', headers, body: JSON.stringify(body) });
      const j = (await r.json()) as Record<string, any>;
      if (r.status >= 300) throw new Error(`${p}: ${r.status} ${JSON.stringify(j)}`);
      return j;
    };
    const environment = async (name: string, fake: FakeSuperset) =>
      (await post('/api/environments', { name, base_url: fake.baseUrl, username: fake.username, password: fake.password })).id as string;
    const ctx: BenchContext = { post, environment, source, sourceEnv: await environment('history-source', source), dashboardIds, cleanup };

    const figures: Record<string, unknown> = { dashboards: N };
    for (const [kind, start] of Object.entries(KINDS)) {
      const t0 = performance.now();
      const taskId = await start(ctx);
      const task = await followTask(base, headers, kind, taskId, t0);
      const seconds = (performance.now() - t0) / 1000;
      if (task.status !== 'SUCCEEDED') throw new Error(`${kind} ended ${task.status}: ${JSON.stringify(task.error)}`);
      // The row is finished just before the workflow closes: wait for the close (through every run).
      const own = await temporal.workflow
        .getHandle(taskId)
        .result()
        .catch(() => null);
      const runs = await workflowRuns(temporal, taskId);
      // Past 100 items the task answer leaves them out and counts them (contracts/task-answer.ts).
      const items = task.result.items_omitted ? Number(task.result.items_total) : (task.result.items as unknown[]).length;
      const ownBytes = Buffer.byteLength(JSON.stringify(own));
      report(kind, seconds, runs, items, ownBytes);
      Object.assign(figures, figuresOf(kind, seconds, runs, items, ownBytes));
    }
    console.log(JSON.stringify(figures));
  } finally {
    await connection.close();
    await stack.stop();
    for (const c of cleanup) await c();
    await source.close();
  }
}

/** The admin's bearer token, as request headers for JSON bodies. */
async function signIn(base: string) {
  const login = await fetch(`${base}/api/auth/login`, {
    method: 'POST',
    body: new URLSearchParams({ username: 'admin', password: BENCH_ADMIN_PASSWORD }),
  });
  return {
    authorization: `Bearer ${((await login.json()) as { access_token: string }).access_token}`,
    'content-type': 'application/json',
  };
}

/** The task once it has ended, its progress shown every 100 items on the way. */
async function followTask(base: string, headers: Record<string, string>, kind: string, taskId: string, t0: number) {
  let task: Record<string, any> = {};
  let lastShown = 0;
  await waitUntil(
    async () => {
      task = (await (await fetch(`${base}/api/tasks/${taskId}`, { headers })).json()) as Record<string, any>;
      const done = Number(task.progress?.done ?? 0);
      if (done - lastShown >= 100) {
        process.stderr.write(`  ${kind}: ${done}/${N} after ${((performance.now() - t0) / 1000).toFixed(0)} s\n`);
        lastShown = done;
      }
      return ['SUCCEEDED', 'FAILED', 'CANCELLED'].includes(task.status);
    },
    3_600_000,
    `the ${kind} task`,
  );
  return task;
}

/** One kind's figures for the closing JSON line. */
function figuresOf(kind: string, seconds: number, runs: WorkflowRun[], items: number, ownBytes: number): Record<string, number> {
  const largest = runs.reduce((a, r) => (r.bytes > a.bytes ? r : a));
  return {
    [`${kind}_s`]: round(seconds),
    [`${kind}_runs`]: runs.length,
    [`${kind}_max_history_events`]: Math.max(...runs.map((r) => r.events)),
    [`${kind}_max_history_bytes`]: largest.bytes,
    [`${kind}_total_history_events`]: runs.reduce((a, r) => a + r.events, 0),
    [`${kind}_total_history_bytes`]: runs.reduce((a, r) => a + r.bytes, 0),
    [`${kind}_items`]: items,
    [`${kind}_workflow_result_bytes`]: ownBytes,
  };
}

function report(kind: string, seconds: number, runs: WorkflowRun[], items: number, ownBytes: number) {
  const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`;
  const largest = runs.reduce((a, r) => (r.bytes > a.bytes ? r : a));
  console.log(`\n${kind} of ${N} dashboards in one task (embedded stack, fake Superset; ${process.platform}, ${os.cpus().length} cores)`);
  console.log(`  total time          ${seconds.toFixed(2)} s  (${((seconds / N) * 1000).toFixed(1)} ms per dashboard)`);
  console.log(`  workflow runs       ${runs.length}  (${runs.length - 1} continue-as-new)`);
  console.log('  history per run     events / bytes (encoded History proto)');
  runs.forEach((r, i) =>
    console.log(
      `    run ${String(i + 1).padStart(3)}         ${String(r.events).padStart(6)} / ${kb(r.bytes).padStart(10)}  ${r.closedBy.toLowerCase()}`,
    ),
  );
  console.log(`  largest run         run ${runs.indexOf(largest) + 1}: ${largest.events} events, ${kb(largest.bytes)}`);
  console.log(`  task result items   ${items}  (the task row's result; the workflow's own result: ${ownBytes} bytes of JSON, totals only)`);
}

const round = (n: number) => Math.round(n * 1000) / 1000;

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
