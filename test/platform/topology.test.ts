import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import type { temporal } from '@temporalio/proto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { freePort } from '../../lib/embedded/free-port.ts';
import {
  ensureTemporalServer,
  startTemporalServer,
  type TemporalServer,
  type TemporalServerTools,
} from '../../lib/embedded/temporal-server.ts';
import { createEnvironment } from '../support/environments.ts';
import { startFakeSuperset, type FakeSuperset } from '../support/fake-superset.ts';
import { createHarness, waitFor, type Harness } from '../support/harness.ts';
import { spawnWorker, stopProcess } from '../support/worker-process.ts';
import { recordImports } from '../dashboard-migration/fake-pair.ts';
import { available } from '../support/ci.ts';

/**
 * The production topology, run: the real Temporal server (not the CLI's dev server) on the run's
 * PostgreSQL, its schema set up by its own SQL tool; workers as OS processes apart from the API.
 * TOPOLOGY_DASHBOARDS sets the shared migration's size (default 1,000).
 *
 * Why the fake Superset (no fault): scale. 1,000 dashboards a run would be created in and imported
 * into shared real instances (each with a SQLite metadata file) and outlast the CI budget; what this
 * file proves is the Temporal and process topology, not Superset's answers. The call counts and
 * ordering of a migration are proven on the real a → b (migration-calls, verify-beside-imports).
 */
const N = Number(process.env.TOPOLOGY_DASHBOARDS ?? 1000);

let tools: TemporalServerTools | undefined;
let unbuildable = '';
try {
  tools = ensureTemporalServer({ log: () => undefined });
} catch (err) {
  unbuildable = String(err);
}
// Locally a Temporal server that cannot be built skips this file (named in its title); under CI=true it fails the run.
available('the Temporal server v1.29.1 (npm run setup:temporal-server)', tools !== undefined, unbuildable || 'not built');

let server: TemporalServer;
let h: Harness;
let source: FakeSuperset;
let target: FakeSuperset;
let sourceEnv: string;
let targetEnv: string;
let imports: string[][];

beforeAll(async () => {
  if (!tools) return;
  server = await startTemporalServer({ tools, adminUrl: inject('pgAdminUrl'), dir: path.join(inject('runDir'), 'temporal-server') });
  [h, source, target] = await Promise.all([
    createHarness({ env: { TEMPORAL_ADDRESS: server.address } }),
    startFakeSuperset(),
    startFakeSuperset(),
  ]);
  [sourceEnv, targetEnv] = await Promise.all(
    [source, target].map((f) => createEnvironment(h, { baseUrl: f.baseUrl, username: f.username, password: f.password })),
  );
  imports = recordImports(target);
}, 600_000);

afterAll(async () => {
  await h?.close();
  await Promise.all([source?.close(), target?.close()]);
  await server?.stop();
});

/** `n` dashboards (one chart each) in the source, their database mapped onto one in the target. */
function seed(prefix: string, n: number) {
  const ids = source.seedDashboards(n, { prefix, charts: 1 }).map((d) => d.id);
  const sourceDb = source.databases.find((d) => d.database_name === `${prefix} database`)!;
  const targetDb = target.addDatabase({ name: `${prefix} warehouse` });
  return {
    source_env_id: sourceEnv,
    target_env_id: targetEnv,
    dashboard_ids: ids,
    db_mappings: [{ source_database_id: sourceDb.id, target_database_id: targetDb.id }],
  };
}

/** How many times the target was asked to import each of the prefix's dashboards. */
function importsOf(prefix: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const title of imports.flat()) if (title.startsWith(`${prefix} `)) counts.set(title, (counts.get(title) ?? 0) + 1);
  return counts;
}

/** The target's dashboards of the prefix, by title: one each, whatever a retried batch re-sent. */
function targetTitles(prefix: string): string[] {
  return target.dashboards.map((d) => d.dashboard_title).filter((t) => t.startsWith(`${prefix} `));
}

/** Resolves once `count` worker processes poll the harness's activity queue on the real server. */
async function pollers(count: number): Promise<string[]> {
  return waitFor(
    async () => {
      const r = await h.boot.context.temporal.workflowService.describeTaskQueue({
        namespace: h.config.TEMPORAL_NAMESPACE,
        taskQueue: { name: h.config.TEMPORAL_TASK_QUEUE },
        taskQueueType: 2, // activity
      });
      const ids = (r.pollers ?? []).map((p) => p.identity ?? '');
      return ids.length >= count && ids;
    },
    180_000,
    `${count} workers polling`,
  );
}

/** The worker identities (`pid@host`) that started the task's activities, over every run of its workflow. */
async function activityWorkers(id: string): Promise<Set<string>> {
  const seen = new Set<string>();
  let runId: string | undefined = (await h.boot.context.temporal.workflow.getHandle(id).describe()).runId;
  while (runId) {
    const events: temporal.api.history.v1.IHistoryEvent[] =
      (await h.boot.context.temporal.workflow.getHandle(id, runId).fetchHistory()).events ?? [];
    for (const e of events) if (e.activityTaskStartedEventAttributes?.identity) seen.add(e.activityTaskStartedEventAttributes.identity);
    runId = events[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId || undefined;
  }
  return seen;
}

const ranOn = (identities: Set<string>, w: ChildProcess) => [...identities].some((i) => i.startsWith(`${w.pid}@`));

describe.skipIf(!tools)(`the production topology on the real Temporal server${unbuildable ? ` (skipped: ${unbuildable})` : ''}`, () => {
  it(`shares a ${N}-dashboard migration between two worker processes and imports each dashboard once`, { timeout: 1_800_000 }, async () => {
    const workers = [spawnWorker(h), spawnWorker(h)];
    try {
      await pollers(2);
      const r = await h.request('POST', '/api/dashboards/migrate', { token: h.adminToken, json: seed('Shared', N) });
      expect(r.status, r.text).toBe(202);
      const task = await h.waitForTask(r.body.task_id, undefined, 1_700_000);
      expect(task.status, JSON.stringify(task.error)).toBe('SUCCEEDED');
      expect(task.result.totals).toMatchObject({ requested: N, imported: N, failed: 0 });
      const counts = importsOf('Shared');
      expect(counts.size).toBe(N);
      expect([...counts.values()].filter((c) => c !== 1)).toEqual([]);
      // Both processes ran part of it.
      const ran = await activityWorkers(r.body.task_id);
      for (const w of workers) expect(ranOn(ran, w), `worker ${w.pid} ran nothing of ${[...ran].join(', ')}`).toBe(true);
    } finally {
      await Promise.all(workers.map((w) => stopProcess(w)));
    }
  });

  it('finishes on the other worker when one is killed mid-task (SIGKILL)', { timeout: 900_000 }, async () => {
    const n = Math.min(N, 200);
    const [a, b] = [spawnWorker(h), spawnWorker(h)];
    try {
      await pollers(2);
      const r = await h.request('POST', '/api/dashboards/migrate', { token: h.adminToken, json: seed('Killed', n) });
      expect(r.status, r.text).toBe(202);
      const id = r.body.task_id;
      // Killed while a batch runs on worker A, after the first dashboard is in.
      // An activity's started event reaches the history only when it ends: the one in flight is in describe().
      await waitFor(
        async () => {
          const d = await h.boot.context.temporal.workflow
            .getHandle(id)
            .describe()
            .catch(() => null);
          return importsOf('Killed').size > 0 && d?.raw.pendingActivities?.some((p) => p.lastWorkerIdentity?.startsWith(`${a.pid}@`));
        },
        600_000,
        'a batch in flight on worker A',
      );
      await stopProcess(a, 'SIGKILL');
      expect(importsOf('Killed').size).toBeLessThan(n);
      const task = await h.waitForTask(id, undefined, 800_000);
      expect(task.status, JSON.stringify(task.error)).toBe('SUCCEEDED');
      expect(task.result.totals).toMatchObject({ requested: n, imported: n, failed: 0 });
      const titles = targetTitles('Killed');
      expect(titles).toHaveLength(n);
      expect(new Set(titles).size).toBe(n);
      const items = await h.knex('migration_items').where({ task_id: id });
      expect(items.filter((i) => i.status === 'imported')).toHaveLength(n);
      expect(ranOn(await activityWorkers(id), b)).toBe(true);
    } finally {
      await Promise.all([stopProcess(a, 'SIGKILL'), stopProcess(b)]);
    }
  });

  it('changes nothing when the API process is restarted mid-task', { timeout: 900_000 }, async () => {
    const n = Math.min(N, 200);
    const worker = spawnWorker(h);
    let api = await startApi();
    try {
      await pollers(1);
      const r = await fetch(`${api.base}/api/dashboards/migrate`, {
        method: 'POST',
        headers: { authorization: `Bearer ${h.adminToken}`, 'content-type': 'application/json' },
        body: JSON.stringify(seed('Restarted', n)),
      });
      expect(r.status).toBe(202);
      const id = ((await r.json()) as { task_id: string }).task_id;
      await waitFor(async () => importsOf('Restarted').size > 0, 600_000, 'a first import');
      await stopProcess(api.child, 'SIGKILL');
      expect(importsOf('Restarted').size).toBeLessThan(n);
      api = await startApi(api.port);
      const task = await h.waitForTask(id, undefined, 800_000);
      expect(task.status, JSON.stringify(task.error)).toBe('SUCCEEDED');
      expect(task.result.totals).toMatchObject({ requested: n, imported: n, failed: 0 });
      const counts = importsOf('Restarted');
      expect(counts.size).toBe(n);
      expect([...counts.values()].filter((c) => c !== 1)).toEqual([]);
      // One workflow for the task, and the restarted API answers it as finished.
      const runs = await h.boot.context.temporal.workflowService.countWorkflowExecutions({
        namespace: h.config.TEMPORAL_NAMESPACE,
        query: `WorkflowId = '${id}'`,
      });
      expect(Number(runs.count)).toBeGreaterThanOrEqual(1);
      const seen = await fetch(`${api.base}/api/tasks/${id}`, { headers: { authorization: `Bearer ${h.adminToken}` } });
      expect(((await seen.json()) as { status: string }).status).toBe('SUCCEEDED');
      expect(await h.knex('tasks').where({ id }).count({ n: '*' })).toEqual([{ n: '1' }]);
    } finally {
      await stopProcess(api.child);
      await stopProcess(worker);
    }
  });
});

/** The API as its own process (`npm run api`'s entry) on the harness's database and the real server. */
async function startApi(port?: number): Promise<{ child: ChildProcess; base: string; port: number }> {
  const p = port ?? (await freePort());
  const child = spawn(process.execPath, ['api/main.ts'], {
    env: {
      ...process.env,
      DATABASE_URL: h.databaseUrl,
      TEMPORAL_ADDRESS: server.address,
      TEMPORAL_TASK_QUEUE: h.config.TEMPORAL_TASK_QUEUE,
      SWITCHYARD_SECRET_KEY: h.config.SWITCHYARD_SECRET_KEY,
      SWITCHYARD_DATA_DIR: h.config.SWITCHYARD_DATA_DIR,
      SWITCHYARD_ADMIN_PASSWORD: 'unused-the-admin-exists-0123',
      PORT: String(p),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const base = `http://127.0.0.1:${p}`;
  await waitFor(async () => (await fetch(`${base}/api/ready`).catch(() => null))?.ok, 180_000, 'the API process');
  return { child, base, port: p };
}
