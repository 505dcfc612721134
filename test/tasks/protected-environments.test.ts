import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createHarness, type Harness } from '../support/harness.ts';
import { createSqliteDatabase, listAll, type SupersetClient } from '../support/superset/fixtures.ts';
import { userWith } from '../git/support.ts';
import { buildSource, client, prefixedTables, registerEnvironment, waitTask, type SourceFixture } from '../dashboard-migration/support.ts';

/**
 * Protected environments against real Superset (a → b), PostgreSQL and Temporal: only an
 * administrator sets or clears the flag; every task that writes into a protected environment
 * waits for another person (a migration, a restore, accepted suggestions), the requester cannot
 * decide, a rejection writes nothing, and a dry run (which writes nothing) does not wait.
 */
const on = inject('supersets') !== null;
const P = `pe${Date.now().toString(36)}`;
let h: Harness;
let a: SupersetClient;
let b: SupersetClient;
let envA: string;
let envB: string;
let src: SourceFixture;
let targetDbId: number;
let operator: string;
/** Both may migrate and approve; each is a different person. */
let requester: string;
let approver: string;

// The harness's own request-as-this-person (h is made in beforeAll, so it is read at call time).
const as = (token: string) => h.as(token);

async function dashboardsIn(cl: SupersetClient, prefix: string) {
  const all = await listAll<{ id: number; dashboard_title: string }>(cl, 'dashboard', { columns: ['id', 'dashboard_title'] } as never);
  return all.filter((d) => d.dashboard_title.startsWith(prefix));
}

async function migrateAs(token: string, dashboardId: number, dryRun = false) {
  const r = await as(token)('POST', '/api/dashboards/migrate', {
    json: {
      source_env_id: envA,
      target_env_id: envB,
      dashboard_ids: [dashboardId],
      dry_run: dryRun,
      db_mappings: [{ source_database_id: src.database.id, target_database_id: targetDbId }],
    },
  });
  expect(r.status, r.text).toBe(202);
  return r.body.task_id as string;
}

const awaiting = (id: string) => h.waitForTask(id, (t) => t.status === 'AWAITING_APPROVAL', 60_000);

beforeAll(async () => {
  if (!on) return;
  h = await createHarness({ worker: true });
  [a, b] = await Promise.all([client('a'), client('b')]);
  const dir = path.join(inject('runDir'), P);
  src = await buildSource(a, P, dir, { dashboards: 2 });
  targetDbId = (await createSqliteDatabase(b, { name: `${P}_wh`, path: path.join(dir, `${P}-b.db`), tables: prefixedTables(P) })).id;
  envA = await registerEnvironment(h, 'a', `${P}-a`);
  envB = await registerEnvironment(h, 'b', `${P}-b`);
  operator = await userWith(h, `${P}-op`, ['Operator']);
  requester = await userWith(h, `${P}-req`, ['Operator', 'ReleaseManager']);
  approver = await userWith(h, `${P}-rm`, ['Operator', 'ReleaseManager']);
}, 300_000);
afterAll(async () => h?.close());

describe.skipIf(!on)('protected environments', () => {
  it('only an administrator sets or clears protection, or deletes a protected environment', async () => {
    const op = as(operator);
    const set = await op('PUT', `/api/environments/${envB}`, { json: { protected: true } });
    expect(set.status, set.text).toBe(403);
    expect(set.body.code).toBe('protection_admin_only');
    expect((await as(h.adminToken)('GET', `/api/environments/${envB}`)).body.protected).toBe(false);
    const created = await op('POST', '/api/environments', {
      json: { name: `${P}-x`, base_url: 'http://127.0.0.1:9', username: 'u', password: 'p', protected: true },
    });
    expect(created.status, created.text).toBe(403);

    const byAdmin = await as(h.adminToken)('PUT', `/api/environments/${envB}`, { json: { protected: true } });
    expect(byAdmin.status, byAdmin.text).toBe(200);
    expect(byAdmin.body.protected).toBe(true);
    // Other fields of a protected environment stay the operator's; the flag, sent unchanged, too.
    expect((await op('PUT', `/api/environments/${envB}`, { json: { description: 'prod', protected: true } })).status).toBe(200);
    const clear = await op('PUT', `/api/environments/${envB}`, { json: { protected: false } });
    expect(clear.status).toBe(403);
    expect((await op('DELETE', `/api/environments/${envB}`)).status).toBe(403);
    expect((await as(h.adminToken)('GET', `/api/environments/${envB}`)).body.protected).toBe(true);
  });

  it('a migration into it waits; the requester cannot approve; another person approves and it runs', async () => {
    const id = await migrateAs(requester, src.dashboards[0].id);
    const waiting = await awaiting(id);
    expect(waiting.approval).toMatchObject({ env_id: envB, decision: null });
    expect(await dashboardsIn(b, `${P} sales 1`)).toHaveLength(0);

    const self = await as(requester)('POST', `/api/tasks/${id}/approve`, { json: {} });
    expect(self.status, self.text).toBe(403);
    expect(self.body.code).toBe('self_approval');
    const ok = await as(approver)('POST', `/api/tasks/${id}/approve`, { json: { comment: 'go' } });
    expect(ok.status, ok.text).toBe(200);

    const done = await waitTask(h, id);
    expect(done.status, JSON.stringify(done.error)).toBe('SUCCEEDED');
    expect(done.approval).toMatchObject({ decision: 'approve', by: `${P}-rm`, comment: 'go' });
    expect(await dashboardsIn(b, `${P} sales 1`)).toHaveLength(1);
    const logs = await as(h.adminToken)('GET', `/api/tasks/${id}/logs?limit=1000`);
    const lines = (logs.body.items as Array<{ message: string }>).map((l) => l.message).join('\n');
    expect(lines).toContain('for another person to approve');
    expect(lines).toContain(`approved by ${P}-rm: go`);
    const report = await as(h.adminToken)('GET', `/api/reports/${id}`);
    expect(JSON.stringify(report.body)).toContain(`approved by ${P}-rm: go`);
  });

  it('a rejection ends the task CANCELLED and writes nothing', async () => {
    const id = await migrateAs(requester, src.dashboards[1].id);
    await awaiting(id);
    const no = await as(approver)('POST', `/api/tasks/${id}/reject`, { json: { comment: 'not today' } });
    expect(no.status, no.text).toBe(200);
    const done = await waitTask(h, id);
    expect(done.status).toBe('CANCELLED');
    expect(done.error.message).toContain(`rejected by ${P}-rm: not today`);
    expect(done.approval).toMatchObject({ decision: 'reject', by: `${P}-rm` });
    expect(await dashboardsIn(b, `${P} sales 2`)).toHaveLength(0);
  });

  it('a dry run writes nothing, so it does not wait', async () => {
    const id = await migrateAs(requester, src.dashboards[1].id, true);
    const done = await waitTask(h, id);
    expect(done.status, JSON.stringify(done.error)).toBe('SUCCEEDED');
    expect(done.approval).toBeNull();
    const never = await as(approver)('POST', `/api/tasks/${id}/approve`, { json: {} });
    expect(never.status).toBe(409);
  });

  it('a restore into it waits for approval too', async () => {
    await as(h.adminToken)('PUT', `/api/environments/${envA}`, { json: { protected: true } });
    try {
      const backup = await as(requester)('POST', '/api/dashboards/backup', {
        json: { env_id: envA, dashboard_ids: [src.dashboards[0].id] },
      });
      expect(backup.status, backup.text).toBe(202);
      const backed = await waitTask(h, backup.body.task_id);
      expect(backed.status, JSON.stringify(backed.error)).toBe('SUCCEEDED');
      expect(backed.approval).toBeNull(); // a backup reads only
      const backupId = backed.result.items[0].backup_id;
      const r = await as(requester)('POST', `/api/dashboards/backups/${backupId}/restore`, { json: {} });
      expect(r.status, r.text).toBe(202);
      await awaiting(r.body.task_id);
      await as(approver)('POST', `/api/tasks/${r.body.task_id}/approve`, { json: {} });
      const done = await waitTask(h, r.body.task_id);
      expect(done.status, JSON.stringify(done.error)).toBe('SUCCEEDED');
      expect(done.approval.decision).toBe('approve');
    } finally {
      await as(h.adminToken)('PUT', `/api/environments/${envA}`, { json: { protected: false } });
    }
  }, 180_000);

  it('accepting suggestions in it becomes a task that waits for approval', async () => {
    const r = await as(requester)('POST', `/api/datasets/${src.sales.id}/suggestions/accept`, { json: { env_id: envB } });
    // The dataset id is the source's: in b nothing by that id needs to exist for the gate to hold.
    expect(r.status, r.text).toBe(202);
    const waiting = await awaiting(r.body.task_id);
    expect(waiting.type).toBe('dataset_change');
    // The approver sees what uses the dataset (api/impact): read when it was requested, or why it could not be.
    expect(waiting.params.impact).toMatchObject({
      env_id: envB,
      dataset_id: src.sales.id,
      request: { method: 'GET', path: `/api/environments/${envB}/impact?dataset=${src.sales.id}` },
    });
    expect(Array.isArray(waiting.params.impact.charts)).toBe(true);
    expect((await as(requester)('POST', `/api/tasks/${r.body.task_id}/approve`, { json: {} })).body.code).toBe('self_approval');
    await as(approver)('POST', `/api/tasks/${r.body.task_id}/reject`, { json: {} });
    expect((await waitTask(h, r.body.task_id)).status).toBe('CANCELLED');
  });
});
