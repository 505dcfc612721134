import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TaskItemStore } from '../../db/tasks/items.ts';
import { createEnvironment } from '../support/environments.ts';
import { startFakeSuperset, type FakeSuperset } from '../support/fake-superset.ts';
import { createHarness, type Harness } from '../support/harness.ts';
import { workflowRuns } from '../support/workflow-runs.ts';

/**
 * A backup of more dashboards than one workflow run handles (TASK_ITEMS_PER_RUN=3 here) runs as a
 * chain of runs under one task id: every dashboard is in the result exactly once, the workflow
 * runs carry no items, and a cancel in a later run keeps what was done and leaves the rest alone.
 * Why the fake Superset: no fault but scale (a backup of 1,000 dashboards), and it slows exports
 * so the cancel lands in a later run, which the recording proxy in front of the real a
 * (test/support/gateway-proxy.ts) can do too: moving the other cases is left (issue 48 item 4).
 */
let h: Harness;
let fake: FakeSuperset;
let env: string;

const admin = (m: string, p: string, o: Record<string, unknown> = {}) => h.request(m, p, { ...o, token: h.adminToken });

async function startBackup(ids: number[]): Promise<string> {
  const r = await admin('POST', '/api/dashboards/backup', { json: { env_id: env, dashboard_ids: ids } });
  expect(r.status, r.text).toBe(202);
  return r.body.task_id as string;
}

/** Ids the fake was asked to export (one export request per dashboard). */
function exported(since: number): number[] {
  return fake.requests
    .slice(since)
    .filter((r) => r.path === '/api/v1/dashboard/export/')
    .flatMap((r) => r.q as number[]);
}

beforeAll(async () => {
  [h, fake] = await Promise.all([
    createHarness({ worker: true, env: { TASK_ITEMS_PER_RUN: '3', BACKUP_RETENTION_COUNT: '2' } }),
    startFakeSuperset(),
  ]);
  env = await createEnvironment(h, { baseUrl: fake.baseUrl, username: fake.username, password: fake.password });
}, 120_000);
afterAll(async () => {
  await h?.close();
  await fake?.close();
});

describe('a backup larger than one workflow run', () => {
  it('continues as new under the same task and ends SUCCEEDED with every dashboard once, in request order', async () => {
    const ids = fake
      .seedDashboards(8, { prefix: 'Chain', charts: 2 })
      .map((d) => d.id)
      .reverse();
    const mark = fake.requests.length;
    const id = await startBackup(ids);
    const task = await h.waitForTask(id, undefined, 120_000);
    expect(task.status, JSON.stringify(task.error)).toBe('SUCCEEDED');
    expect(task.progress).toMatchObject({ done: 8, total: 8 });
    expect(task.result.items.map((i: any) => i.id)).toEqual(ids);
    for (const item of task.result.items) {
      expect(item).toMatchObject({ kind: 'dashboard', status: 'succeeded', outcome: 'succeeded', deduplicated: false, charts: 2 });
      expect(item.backup_id).toMatch(/^[0-9a-f-]{36}$/);
    }
    expect(task.result).toMatchObject({
      env_id: env,
      cancelled: false,
      not_started: 0,
      totals: { requested: 8, succeeded: 8, failed: 0, deduplicated: 0, not_started: 0 },
      retention: { policy: { keep: 2 }, pruned: 0, blobs_deleted: 0 },
    });
    expect(task.result.store).toContain('backups');
    // Each dashboard exported and recorded once, however many runs the task took.
    expect(exported(mark).sort((a, b) => a - b)).toEqual([...ids].sort((a, b) => a - b));
    expect(await h.knex('backups').where({ task_id: id }).count({ n: '*' })).toEqual([{ n: '8' }]);

    // 3 + 3 + 2 dashboards: three runs, the first two continued as new; the workflow's own result
    // (what Temporal keeps) carries the totals but no items.
    const runs = await workflowRuns(h.boot.context.temporal, id);
    expect(runs.map((r) => r.closedBy)).toEqual([
      'WORKFLOW_EXECUTION_CONTINUED_AS_NEW',
      'WORKFLOW_EXECUTION_CONTINUED_AS_NEW',
      'WORKFLOW_EXECUTION_COMPLETED',
    ]);
    const own = await h.boot.context.temporal.workflow.getHandle(id).result();
    expect(own).toMatchObject({ totals: { requested: 8, succeeded: 8 } });
    expect(own).not.toHaveProperty('items');
    // A progress line per dashboard, across the runs (the CLI draws its progress bar from them).
    const logs = (await admin('GET', `/api/tasks/${id}/logs?limit=1000&source=activity`)).body.items.map((i: any) => i.message);
    expect(logs.filter((m: string) => /^progress \d+\/8/.test(m))).toEqual([
      'progress 0/8: backing up 8 dashboard(s)',
      ...ids.map((d, i) => `progress ${i + 1}/8: dashboard ${d}: succeeded`),
    ]);
    // The Temporal part of the log is the latest run's history, saying which run it continues.
    const temporalLines = (await admin('GET', `/api/tasks/${id}/logs?limit=1000&source=temporal`)).body.items.map((i: any) => i.message);
    expect(temporalLines[0]).toBe(
      `workflow backupWorkflow started on task queue ${h.config.TEMPORAL_TASK_QUEUE} as a new run continuing run ${runs[1]!.runId}`,
    );
    // The task row follows the latest run.
    expect((await h.knex('tasks').where({ id }).first('workflow_run_id')).workflow_run_id).toBe(runs.at(-1)!.runId);
  });

  it('a dashboard failing in a later run fails the task with every item listed', async () => {
    const ids = fake.seedDashboards(4, { prefix: 'Chainfail' }).map((d) => d.id);
    ids.splice(3, 0, 999_999); // the fourth: in the second run
    const task = await h.waitForTask(await startBackup(ids), undefined, 120_000);
    expect(task.status).toBe('FAILED');
    expect(task.error).toMatchObject({ type: 'BackupIncomplete' });
    expect(task.error.message).toMatch(/^1 of 5 dashboard backup\(s\) failed: 999999 \(/);
    expect(task.result.items.map((i: any) => [i.id, i.status])).toEqual(ids.map((i) => [i, i === 999_999 ? 'failed' : 'succeeded']));
    expect(task.result.items[3]).toMatchObject({ step: 'export', upstream_error: { status: 404 } });
    expect(task.result.totals).toMatchObject({ requested: 5, succeeded: 4, failed: 1, not_started: 0 });
  });

  it('answers a dashboard an earlier attempt recorded from its item, without backing it up again', async () => {
    const ids = fake.seedDashboards(6, { prefix: 'Chainretry' }).map((d) => d.id);
    fake.slow({ path: '/api/v1/dashboard/export/' }, 300);
    try {
      const mark = fake.requests.length;
      const id = await startBackup(ids);
      await h.waitForTask(id, (t) => (t.progress?.done ?? 0) >= 1, 30_000);
      // As if an attempt of the fifth dashboard (second run) had recorded it and then lost its worker.
      const earlier = {
        kind: 'dashboard' as const,
        id: ids[4]!,
        title: 'recorded by an earlier attempt',
        status: 'succeeded',
        outcome: 'succeeded' as const,
        next_actions: [],
        backup_id: null,
        content_hash: null,
        deduplicated: true,
      };
      const items = new TaskItemStore(h.knex);
      expect(await items.record(id, 4, ids[4]!, earlier)).toEqual(earlier);
      // The first record at a position wins: a second one answers it unchanged.
      expect(await items.record(id, 4, ids[4]!, { ...earlier, title: 'a second record' })).toEqual(earlier);
      // A batch's earlier records read in one query: by position, none for another task.
      expect(await items.getMany(id, [4])).toEqual(new Map([[4, earlier]]));
      expect(await items.getMany(`${id}-other`, [4])).toEqual(new Map());
      const task = await h.waitForTask(id, undefined, 60_000);
      expect(task.status).toBe('SUCCEEDED');
      expect(task.result.items.map((i: any) => i.id)).toEqual(ids);
      expect(task.result.items[4]).toEqual(earlier);
      expect(task.result.totals).toMatchObject({ requested: 6, succeeded: 6, deduplicated: 1 });
      expect(exported(mark)).toEqual(ids.filter((_, i) => i !== 4));
      expect(await h.knex('backups').where({ task_id: id }).count({ n: '*' })).toEqual([{ n: '5' }]);
    } finally {
      fake.clearFailures();
    }
  });

  it('starts a backup of 1,000 dashboards, whose id list is too long for a Temporal search attribute', async () => {
    const ids = Array.from({ length: 1000 }, (_, i) => 500_000 + i);
    const id = await startBackup(ids);
    await h.waitForTask(id, (t) => (t.progress?.done ?? 0) >= 1, 30_000);
    expect((await admin('POST', `/api/tasks/${id}/cancel`)).status).toBe(202);
    const task = await h.waitForTask(id, undefined, 60_000);
    expect(task.status).toBe('CANCELLED');
    expect(task.dashboard_ids).toHaveLength(1000);
    expect(task.result.totals.requested).toBe(1000);
  });

  it('a cancel in a later run ends CANCELLED with the done dashboards listed and the rest untouched', async () => {
    const ids = fake.seedDashboards(12, { prefix: 'Chaincancel' }).map((d) => d.id);
    fake.slow({ path: '/api/v1/dashboard/export/' }, 300);
    try {
      const mark = fake.requests.length;
      const id = await startBackup(ids);
      // Past the first run's three dashboards: the cancel lands in the second run or later.
      await h.waitForTask(id, (t) => (t.progress?.done ?? 0) >= 4, 60_000);
      expect((await admin('POST', `/api/tasks/${id}/cancel`)).status).toBe(202);
      const task = await h.waitForTask(id, undefined, 60_000);
      expect(task.status).toBe('CANCELLED');
      const done = task.result.items.length;
      expect(done).toBeGreaterThanOrEqual(4);
      expect(done).toBeLessThan(12);
      expect(task.result.items.map((i: any) => i.id)).toEqual(ids.slice(0, done));
      expect(task.result).toMatchObject({
        cancelled: true,
        not_started: 12 - done,
        totals: { requested: 12, succeeded: done, failed: 0, not_started: 12 - done },
      });
      expect(task.progress.done).toBe(done);
      // The rest untouched: never exported, no backup, no item.
      expect(exported(mark)).toEqual(ids.slice(0, done));
      expect(await h.knex('backups').where({ task_id: id }).count({ n: '*' })).toEqual([{ n: String(done) }]);
      const runs = await workflowRuns(h.boot.context.temporal, id);
      expect(runs.length).toBeGreaterThanOrEqual(2);
      expect(runs.at(-1)!.closedBy).toBe('WORKFLOW_EXECUTION_CANCELED');
      const report = (await admin('GET', `/api/reports/${id}`)).body.report;
      expect(report.summary.headline).toBe(`${done} of 12 dashboard(s) backed up, ${12 - done} not started, cancelled`);
    } finally {
      fake.clearFailures();
    }
  });
});
