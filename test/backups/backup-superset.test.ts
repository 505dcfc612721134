import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DirectoryBackupStore, S3BackupStore, type BackupStore } from '../../lib/backup-store/index.ts';
import { startLocalS3, type LocalS3 } from '../support/s3-server.ts';
import { createHarness, type Harness } from '../support/harness.ts';
import {
  buildStandardFixtures,
  bulkCreateDashboards,
  createDashboard,
  getDashboard,
  login,
  updateDashboard,
  type StandardFixtures,
  type SupersetClient,
} from '../support/superset/fixtures.ts';
import { startSuperset, type SupersetInstance } from '../support/superset/instance.ts';

// Backup and restore end to end: a real Superset 6.1.0, the real API and worker on PostgreSQL and
// Temporal, the directory store and a real S3-compatible server (s3rver on loopback).
//
// This file starts its own Superset rather than sharing global setup's: it deletes dashboards and
// charts, creates 40 more, and builds the standard fixtures, none of which may disturb the other
// files' instances. SWITCHYARD_TEST_SUPERSET=off (global setup then provides none) skips it.
const enabled = inject('supersets') !== null;

let superset: SupersetInstance;
let sc: SupersetClient;
let fx: StandardFixtures;
let s3: LocalS3;
let h: Harness;
let admin: Harness['request'];
let envId: string;

async function addEnvironment(harness: Harness, name: string): Promise<string> {
  const row = await harness.boot.context.stores.environments.create({
    name,
    base_url: superset.baseUrl,
    username: superset.username,
    password: superset.password,
  });
  return row.id;
}

beforeAll(async () => {
  if (!enabled) return;
  const dataDir = path.join(inject('runDir'), `superset-backups-${process.pid}`);
  [superset, s3] = await Promise.all([startSuperset({ version: '6.1.0', dataDir, fresh: true, log: () => {} }), startLocalS3()]);
  sc = await login(superset.baseUrl, superset.username, superset.password);
  fx = await buildStandardFixtures(sc, { dataDir: superset.dataDir, prefix: 'Bk ', adminUsername: superset.username });
  h = await createHarness({ worker: true, env: { BACKUP_RETENTION_COUNT: '2' } });
  admin = (m, p, o = {}) => h.request(m, p, { ...o, token: h.adminToken });
  envId = await addEnvironment(h, 'superset-6.1');
}, 300_000);

afterAll(async () => {
  await h?.close();
  await superset?.stop();
  await s3?.stop();
});

async function runBackup(harness: Harness, env: string, ids: number[]) {
  const r = await harness.request('POST', '/api/dashboards/backup', {
    json: { env_id: env, dashboard_ids: ids },
    token: harness.adminToken,
  });
  expect(r.status, r.text).toBe(202);
  return harness.waitForTask(r.body.task_id, undefined, 120_000);
}

async function runRestore(harness: Harness, backupId: string, body: Record<string, unknown> = {}) {
  const r = await harness.request('POST', `/api/dashboards/backups/${backupId}/restore`, { json: body, token: harness.adminToken });
  expect(r.status, r.text).toBe(202);
  return harness.waitForTask(r.body.task_id, undefined, 120_000);
}

async function blobs(store: BackupStore): Promise<string[]> {
  const out: string[] = [];
  for await (const x of store.list()) out.push(x);
  return out.sort();
}

describe.skipIf(!enabled)('backup of real dashboards (directory store)', () => {
  let store: DirectoryBackupStore;
  let overview: StandardFixtures['dashboards'][number];
  // Each backup of the story is made once, by whichever test needs it first: a test run alone
  // (`-t`) makes the ones before it itself instead of reading what an earlier test left.
  let firstRun: Promise<any> | undefined;
  let secondRun: Promise<any> | undefined;
  const firstBackup = () => (firstRun ??= runBackup(h, envId, [...fx.dashboards.map((d) => d.id), 999_999]));
  const secondBackup = () =>
    (secondRun ??= firstBackup().then(() =>
      runBackup(
        h,
        envId,
        fx.dashboards.map((d) => d.id),
      ),
    ));
  /** Each dashboard's content hash in the first backup. */
  const firstHashesOf = async (): Promise<Record<number, string>> =>
    Object.fromEntries(
      (await firstBackup()).result.items.filter((d: any) => d.status === 'succeeded').map((d: any) => [d.id, d.content_hash]),
    );
  beforeAll(() => {
    store = new DirectoryBackupStore(h.config.BACKUP_DIR!);
    overview = fx.dashboards[0]!;
  });

  it("backs up each dashboard on its own: three stored, an unknown id fails with Superset's answer", async () => {
    const ids = [...fx.dashboards.map((d) => d.id), 999_999];
    const task = await firstBackup();
    expect(task.status).toBe('FAILED'); // one of four failed: never reported as a success
    expect(task.error.type).toBe('BackupIncomplete');
    expect(task.progress).toMatchObject({ done: 4, total: 4 });
    expect(task.env_ids).toEqual([envId]);
    expect(task.dashboard_ids).toEqual(ids.map(String));
    const byId = Object.fromEntries(task.result.items.map((d: any) => [d.id, d]));
    for (const d of fx.dashboards) {
      expect(byId[d.id]).toMatchObject({ title: d.title, status: 'succeeded', deduplicated: false });
      expect(byId[d.id].backup_id).toMatch(/^[0-9a-f-]{36}$/);
      expect(byId[d.id].content_hash).toMatch(/^[0-9a-f]{64}$/);
    }
    expect(byId[overview.id].charts).toBe(3);
    expect(byId[999_999]).toMatchObject({ status: 'failed', backup_id: null, deduplicated: false });
    expect(byId[999_999].error).toMatch(/does not exist/);
    expect(byId[999_999].upstream_error).toMatchObject({ status: 404 });
    expect(task.result.totals).toMatchObject({ requested: 4, succeeded: 3, failed: 1, deduplicated: 0 });
    expect(await blobs(store)).toHaveLength(3);
    expect(await h.knex('backups').count({ n: '*' })).toEqual([{ n: '3' }]);
    const firstHashes = await firstHashesOf();
    // The stored blob is Superset's export, readable as a bundle with the dashboard's charts.
    const zip = await store.get(firstHashes[overview.id]!);
    expect(zip.byteLength).toBeGreaterThan(1000);

    // Logs a user can read, and a report with one retry call for the failed dashboard.
    const logs = (await admin('GET', `/api/tasks/${task.id}/logs?limit=1000`)).body.items.map((i: any) => i.message);
    expect(
      logs.some((m: string) => new RegExp(`dashboard ${overview.id} \\('Bk Sales overview'\\): stored .* with 3 chart\\(s\\)`).test(m)),
    ).toBe(true);
    expect(logs.some((m: string) => /dashboard 999999 does not exist/.test(m))).toBe(true);
    expect(logs.some((m: string) => /retention \(keep 2 per dashboard\): removed 0 backup/.test(m))).toBe(true);
    const report = (await admin('GET', `/api/reports/${task.id}`)).body.report;
    expect(report.summary.headline).toBe('3 of 4 dashboard(s) backed up, 1 failed');
    expect(report.next_actions[0].request).toEqual({
      method: 'POST',
      path: '/api/dashboards/backup',
      body: { env_id: envId, dashboard_ids: [999_999] },
    });
    expect(report.diagnostics[0]).toMatchObject({ where: { item_id: 999_999 }, upstream_error: { status: 404 } });
  });

  it('a second backup of unchanged dashboards stores no new blob (deduplicated), and the task succeeds', async () => {
    const task = await secondBackup();
    const firstHashes = await firstHashesOf();
    expect(task.status).toBe('SUCCEEDED');
    for (const d of task.result.items) {
      expect(d).toMatchObject({ status: 'succeeded', deduplicated: true, content_hash: firstHashes[d.id] });
    }
    expect(task.result.totals).toMatchObject({ succeeded: 3, deduplicated: 3 });
    expect(await blobs(store)).toHaveLength(3);
    expect(await h.knex('backups').count({ n: '*' })).toEqual([{ n: '6' }]);
    const list = await admin('GET', `/api/dashboards/${overview.id}/backups?env_id=${envId}`);
    expect(list.body.total).toBe(2);
    expect(list.body.items.map((b: any) => b.deduplicated)).toEqual([true, false]);
    // The dashboard's task history holds both backup tasks.
    const history = await admin('GET', `/api/dashboards/${overview.id}/tasks?env_id=${envId}`);
    expect(history.body.items.map((t: any) => t.type)).toEqual(['backup', 'backup']);
  });

  it('applies retention: the oldest backup goes, and its blob once nothing uses it', async () => {
    await secondBackup();
    const firstHashes = await firstHashesOf();
    await updateDashboard(sc, overview.id, { css: '/* changed after two backups */' });
    const changed = await runBackup(h, envId, [overview.id]);
    expect(changed.status).toBe('SUCCEEDED');
    const item = changed.result.items[0];
    expect(item.deduplicated).toBe(false);
    expect(item.content_hash).not.toBe(firstHashes[overview.id]);
    // keep 2: the first backup is pruned, its content is still used by the second one.
    expect(changed.result.retention).toMatchObject({ policy: { keep: 2 }, pruned: 1, blobs_deleted: 0 });
    expect(await blobs(store)).toHaveLength(4);

    const again = await runBackup(h, envId, [overview.id]);
    expect(again.result.items[0]).toMatchObject({ deduplicated: true, content_hash: item.content_hash });
    // The second backup goes now, and with it the last reference to the original content.
    expect(again.result.retention).toMatchObject({ pruned: 1, blobs_deleted: 1 });
    const left = await blobs(store);
    expect(left).toHaveLength(3);
    expect(left).not.toContain(firstHashes[overview.id]);
    const list = await admin('GET', `/api/dashboards/${overview.id}/backups?env_id=${envId}`);
    expect(list.body.items.map((b: any) => b.content_hash)).toEqual([item.content_hash, item.content_hash]);
  });
});

describe.skipIf(!enabled)('cancellation', () => {
  it('stops between dashboards and keeps what was backed up in the result', async () => {
    const many = await bulkCreateDashboards(sc, { count: 40, prefix: 'Bk cancel', slugPrefix: 'bk-cancel' });
    const r = await admin('POST', '/api/dashboards/backup', { json: { env_id: envId, dashboard_ids: many.map((d) => d.id) } });
    expect(r.status).toBe(202);
    await h.waitForTask(r.body.task_id, (t) => (t.progress?.done ?? 0) >= 2, 60_000);
    expect((await admin('POST', `/api/tasks/${r.body.task_id}/cancel`)).status).toBe(202);
    const task = await h.waitForTask(r.body.task_id, undefined, 60_000);
    expect(task.status).toBe('CANCELLED');
    const done = task.result.items.length;
    expect(done).toBeGreaterThanOrEqual(2);
    expect(done).toBeLessThan(40);
    expect(task.result).toMatchObject({ cancelled: true, totals: { requested: 40, succeeded: done, not_started: 40 - done } });
    expect(await h.knex('backups').where({ task_id: task.id }).count({ n: '*' })).toEqual([{ n: String(done) }]);
    const report = (await admin('GET', `/api/reports/${task.id}`)).body.report;
    expect(report.summary.headline).toBe(`${done} of 40 dashboard(s) backed up, ${40 - done} not started, cancelled`);
  });
});

describe.skipIf(!enabled)('restore', () => {
  const latestBackup = async (dashboardId: number) =>
    (await admin('GET', `/api/dashboards/${dashboardId}/backups?env_id=${envId}&page_size=1`)).body.items[0];

  it('brings a deleted dashboard back with its charts', async () => {
    const customers = fx.dashboards[1]!;
    const backup = await latestBackup(customers.id);
    const chartId = customers.chartIds[0]!;
    await sc.request('DELETE', `/api/v1/dashboard/${customers.id}`);
    await sc.request('DELETE', `/api/v1/chart/${chartId}`);
    await expect(getDashboard(sc, customers.uuid!)).rejects.toMatchObject({ upstreamStatus: 404 });

    const task = await runRestore(h, backup.id);
    expect(task.status, JSON.stringify(task.error)).toBe('SUCCEEDED');
    expect(task.type).toBe('restore');
    expect(task.dashboard_ids).toEqual([String(customers.id)]);
    const item = task.result.items[0];
    expect(item).toMatchObject({ status: 'restored', recreated: true, dashboard_uuid: customers.uuid, charts: 1 });
    expect(task.result.restored_dashboard_id).toBe(item.restored_dashboard_id);
    expect(item.restored_dashboard_id).not.toBe(customers.id);
    const back = (await getDashboard(sc, item.restored_dashboard_id)).result;
    expect(back).toMatchObject({ dashboard_title: customers.title, slug: customers.slug });
    const charts = await sc.getDashboardCharts(item.restored_dashboard_id);
    expect(charts.map((c) => c.slice_name)).toEqual(['Bk Customers']);
  });

  it('overwrites a changed dashboard in place with the backed-up version', async () => {
    const overview = fx.dashboards[0]!;
    const backup = await latestBackup(overview.id);
    await updateDashboard(sc, overview.id, { dashboard_title: 'Renamed by mistake' });
    const task = await runRestore(h, backup.id, { target_env_id: envId });
    expect(task.status).toBe('SUCCEEDED');
    expect(task.result.items[0]).toMatchObject({ restored_dashboard_id: overview.id, recreated: false, charts: 3 });
    expect((await getDashboard(sc, overview.id)).result.dashboard_title).toBe(overview.title);
  });

  it('refuses to take over a dashboard that now holds the slug, with a next action', async () => {
    const customers = fx.dashboards[1]!;
    const backup = await latestBackup(customers.id);
    const restoredId = (await getDashboard(sc, customers.uuid!)).result.id as number;
    await sc.request('DELETE', `/api/v1/dashboard/${restoredId}`);
    const squatter = await createDashboard(sc, { title: 'Someone else', slug: customers.slug });
    const task = await runRestore(h, backup.id);
    expect(task.status).toBe('FAILED');
    expect(task.result.items[0].error).toMatch(new RegExp(`slug '${customers.slug}' now belongs to another dashboard \\(${squatter.id}`));
    expect((await getDashboard(sc, squatter.id)).result.dashboard_title).toBe('Someone else');
    const report = (await admin('GET', `/api/reports/${task.id}`)).body.report;
    expect(report.next_actions.map((a: any) => a.action)).toEqual(expect.arrayContaining(['retry_failed', 'rename_slug']));
    expect(report.next_actions.find((a: any) => a.action === 'retry_failed').request.path).toBe(
      `/api/dashboards/backups/${backup.id}/restore`,
    );
    // Once the slug is free again the same restore succeeds.
    await updateDashboard(sc, squatter.id, { slug: 'someone-else' });
    const retried = await runRestore(h, backup.id);
    expect(retried.status).toBe('SUCCEEDED');
    expect((await getDashboard(sc, customers.slug!)).result.uuid).toBe(customers.uuid);
  });
});

describe.skipIf(!enabled)('S3 bucket store (real local S3 server)', () => {
  let hs: Harness;
  let s3EnvId: string;
  beforeAll(async () => {
    hs = await createHarness({ worker: true, env: s3.env });
    s3EnvId = await addEnvironment(hs, 'superset-6.1-s3');
  }, 120_000);
  afterAll(async () => hs?.close());

  it('backs up into the bucket, deduplicates, and restores from it', async () => {
    const bucket = new S3BackupStore({
      endpoint: s3.endpoint,
      bucket: s3.bucket,
      region: 'us-east-1',
      accessKeyId: s3.accessKeyId,
      secretAccessKey: s3.secretAccessKey,
      forcePathStyle: true,
    });
    const dash = fx.dashboards[0]!;
    const first = await runBackup(hs, s3EnvId, [dash.id, fx.dashboards[2]!.id]);
    expect(first.status, JSON.stringify(first.error)).toBe('SUCCEEDED');
    expect(first.result.store).toContain(`s3://${s3.bucket}/`);
    const stored = await blobs(bucket);
    expect(stored).toEqual(first.result.items.map((d: any) => d.content_hash).sort());
    expect((await hs.knex('backups').select('store_kind')).every((r) => r.store_kind === 's3')).toBe(true);
    expect(fs.existsSync(path.join(hs.config.BACKUP_DIR!, 'sha256'))).toBe(false); // nothing went to the directory

    const second = await runBackup(hs, s3EnvId, [dash.id]);
    expect(second.result.items[0]).toMatchObject({ deduplicated: true });
    expect(await blobs(bucket)).toEqual(stored);

    await updateDashboard(sc, dash.id, { dashboard_title: 'Changed before an S3 restore' });
    const restored = await runRestore(hs, second.result.items[0].backup_id);
    expect(restored.status, JSON.stringify(restored.result)).toBe('SUCCEEDED');
    expect((await getDashboard(sc, dash.id)).result.dashboard_title).toBe(dash.title);
  });
});
