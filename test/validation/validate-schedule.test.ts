import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { client, prefixedTables, registerEnvironment, waitTask } from '../dashboard-migration/support.ts';
import { createHarness, waitFor, type Harness } from '../support/harness.ts';
import {
  createDashboard,
  createDataset,
  createSqliteDatabase,
  createTableChart,
  type SupersetClient,
} from '../support/superset/fixtures.ts';

/**
 * A `validate` schedule on the real Temporal server: created beside backups and drift reports,
 * kept as a Temporal Schedule, and a trigger runs it as an ordinary validate task of its
 * creator's against real Superset 6.1.0 (a), whose result lists the selected dashboard.
 */
const enabled = inject('supersets') !== null;
const P = `vs${Date.now().toString(36)}`;
let h: Harness;
let a: SupersetClient;
let envId: string;
let dashboardId: number;

const admin = (m: string, p: string, o: Record<string, unknown> = {}) => h.request(m, p, { ...o, token: h.adminToken });

beforeAll(async () => {
  h = await createHarness({ worker: true });
  if (!enabled) return;
  a = await client('a');
  const db = await createSqliteDatabase(a, { name: `${P}_wh`, path: path.join(inject('runDir'), P, 'wh.db'), tables: prefixedTables(P) });
  const ds = await createDataset(a, { database: db.id, tableName: `${P}_sales` });
  const chart = await createTableChart(a, { name: `${P} regions`, datasetId: ds.id, columns: ['region'] });
  dashboardId = (await createDashboard(a, { title: `${P} scheduled`, charts: [chart] })).id;
  envId = await registerEnvironment(h, 'a', `${P}-a`);
}, 180_000);

afterAll(async () => {
  a?.close();
  await h?.close();
});

describe.skipIf(!enabled)('validate schedules', () => {
  it('a validate schedule is a Temporal Schedule; a trigger runs a validation task of the selection', { timeout: 240_000 }, async () => {
    const created = await admin('POST', '/api/schedules', {
      json: { name: `${P} nightly`, kind: 'validate', params: { env_id: envId, dashboard_ids: [dashboardId] }, cron: '0 3 * * *' },
    });
    expect(created.status, created.text).toBe(201);
    expect(created.body).toMatchObject({ kind: 'validate', params: { env_id: envId, dashboard_ids: [dashboardId] } });
    const described = await h.boot.context.temporal.schedule.getHandle(created.body.temporal_schedule_id).describe();
    expect(described.action).toMatchObject({ workflowType: 'scheduledRunWorkflow' });

    expect((await admin('POST', `/api/schedules/${created.body.id}/trigger`)).status).toBe(202);
    const task = await waitFor(
      async () => {
        const r = await admin('GET', '/api/tasks?task_type=validate&page_size=100');
        return (r.body.items as any[]).find((t) => t.params?.schedule_id === created.body.id);
      },
      60_000,
      'the triggered validation',
    );
    const done = await waitTask(h, task.id, 180_000);
    expect(done.status, JSON.stringify(done.error)).toBe('SUCCEEDED');
    expect(done.params).toMatchObject({ env_id: envId, dashboard_ids: [dashboardId], schedule_name: `${P} nightly` });
    const items = await admin('GET', `/api/tasks/${task.id}/items`);
    expect(items.body.items.map((r: any) => [r.item.id, r.item.status])).toEqual([[dashboardId, 'passed']]);
  });

  it('refuses validate params that do not fit, creating nothing', async () => {
    const bad = await admin('POST', '/api/schedules', {
      json: { name: `${P} bad`, kind: 'validate', params: { env_id: envId, colour: 'red' }, interval_seconds: 60 },
    });
    expect(bad.status).toBe(400);
    const unknown = await admin('POST', '/api/schedules', {
      json: { name: `${P} unknown`, kind: 'validate', params: { env_id: '00000000-0000-4000-8000-000000000000' }, interval_seconds: 60 },
    });
    expect(unknown.status).toBe(404);
    const list = await admin('GET', '/api/schedules');
    expect((list.body.items as any[]).filter((s) => s.name.startsWith(`${P} `)).map((s) => s.name)).toEqual([`${P} nightly`]);
  });
});
