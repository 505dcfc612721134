import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { serveMetrics, type MetricsServer } from '../../lib/telemetry/metrics-server.ts';
import { client, prefixedTables, registerEnvironment, waitTask } from '../dashboard-migration/support.ts';
import { createHarness, type Harness } from '../support/harness.ts';
import {
  createBigNumberChart,
  createDashboard,
  createDataset,
  createSqliteDatabase,
  createTableChart,
  createUser,
  sqlMetric,
  updateDashboard,
  type SupersetClient,
} from '../support/superset/fixtures.ts';

/**
 * The content validator against real Superset 6.1.0 (a), Temporal and PostgreSQL: three
 * dashboards of one environment pass; a table dropped in the environment's database makes
 * exactly the dashboard reading it fail, with the time it was first seen broken, and the next
 * validation still says that time and when it last passed; a selection by tag and by owner
 * checks only those dashboards; the worker's /metrics counts what was checked.
 */
const enabled = inject('supersets') !== null;
const P = `val${Date.now().toString(36)}`;

let h: Harness;
let a: SupersetClient;
let envId: string;
let dbPath: string;
let metricsServer: MetricsServer;
const ids = { sales: 0, customers: 0, tagged: 0 };

const admin = (m: string, p: string, o: Record<string, unknown> = {}) => h.request(m, p, { ...o, token: h.adminToken });

async function validate(body: Record<string, unknown>) {
  const r = await admin('POST', `/api/environments/${envId}/validate`, { json: body });
  expect(r.status, r.text).toBe(202);
  const task = await waitTask(h, r.body.task_id, 180_000);
  const items = await admin('GET', `/api/tasks/${r.body.task_id}/items?page_size=100`);
  expect(items.status, items.text).toBe(200);
  return { task, items: (items.body.items as any[]).map((r) => r.item) };
}

const byId = (items: any[]) => Object.fromEntries(items.map((i) => [i.id, i]));

beforeAll(async () => {
  h = await createHarness({ worker: true });
  if (!enabled) return;
  a = await client('a');
  const db = await createSqliteDatabase(a, { name: `${P}_wh`, path: path.join(inject('runDir'), P, 'wh.db'), tables: prefixedTables(P) });
  dbPath = db.path;
  const [sales, customers] = await Promise.all([
    createDataset(a, { database: db.id, tableName: `${P}_sales` }),
    createDataset(a, { database: db.id, tableName: `${P}_customers` }),
  ]);
  const regions = await createTableChart(a, { name: `${P} regions`, datasetId: sales.id, columns: ['region'] });
  const units = await createBigNumberChart(a, { name: `${P} units`, datasetId: sales.id, metric: sqlMetric('SUM(units)', 'units') });
  const people = await createTableChart(a, { name: `${P} people`, datasetId: customers.id, columns: ['name', 'region'] });
  const products = await createTableChart(a, { name: `${P} products`, datasetId: sales.id, columns: ['product'] });
  const owner = await createUser(a, { username: `${P}-owner`, password: 'owner-password-1', roles: ['Alpha'] });
  ids.sales = (await createDashboard(a, { title: `${P} sales`, charts: [regions, units] })).id;
  ids.customers = (await createDashboard(a, { title: `${P} customers`, charts: [people] })).id;
  ids.tagged = (await createDashboard(a, { title: `${P} products`, charts: [products], owners: [owner.id] })).id;
  await a.tags.tagObject('dashboard', ids.tagged, [`${P}-team`]);
  // A tag whose name holds the other one's: Superset's own name filter would match both.
  await a.tags.tagObject('dashboard', ids.sales, [`${P}-team-old`]);
  await updateDashboard(a, ids.sales, { owners: [] });
  envId = await registerEnvironment(h, 'a', `${P}-a`);
  metricsServer = await serveMetrics('127.0.0.1', 0);
}, 180_000);

afterAll(async () => {
  await metricsServer?.close();
  a?.close();
  await h?.close();
});

describe.skipIf(!enabled)('validate an environment', () => {
  let firstAt: string;
  let brokenAt: string;

  it('passes a few working dashboards, each chart with its verdict and time', { timeout: 240_000 }, async () => {
    const { task, items } = await validate({ dashboard_ids: [ids.sales, ids.customers, ids.tagged] });
    expect(task.status, JSON.stringify(task.error)).toBe('SUCCEEDED');
    expect(task.type).toBe('validate');
    expect(task.result.totals).toMatchObject({ requested: 3, passed: 3, broken: 0, failed: 0, newly_broken: 0 });
    const got = byId(items);
    expect(got[ids.sales]).toMatchObject({
      status: 'passed',
      outcome: 'succeeded',
      title: `${P} sales`,
      totals: { passed: 2, broken: 0 },
      first_seen_broken_at: null,
    });
    for (const c of got[ids.sales].charts) expect(c).toMatchObject({ verdict: 'passed', checked_at: expect.any(String) });
    expect(got[ids.customers].last_passed_at).toBe(got[ids.customers].checked_at);
    firstAt = got[ids.customers].checked_at;
  });

  it(
    'a dropped table breaks exactly the dashboard reading it; the next validation keeps its first-seen time',
    { timeout: 300_000 },
    async () => {
      const db = new DatabaseSync(dbPath);
      db.exec(`DROP TABLE "${P}_customers"`);
      db.close();
      const second = await validate({ dashboard_ids: [ids.sales, ids.customers, ids.tagged] });
      expect(second.task.status).toBe('FAILED');
      expect(second.task.error.message).toMatch(/1 dashboard\(s\) broken \(1 newly\)/);
      expect(second.task.result.totals).toMatchObject({ passed: 2, broken: 1, newly_broken: 1 });
      const broken = byId(second.items)[ids.customers];
      expect(broken).toMatchObject({ status: 'broken', outcome: 'failed', step: 'check', newly_broken: true, last_passed_at: firstAt });
      expect(broken.first_seen_broken_at).toBe(broken.checked_at);
      expect(broken.charts[0]).toMatchObject({ verdict: 'broken', error: expect.stringMatching(/customers/i) });
      expect(broken.next_actions.map((x: any) => x.action)).toEqual(['fix_charts', 'validate_again']);
      expect(byId(second.items)[ids.sales]).toMatchObject({ status: 'passed' });
      brokenAt = broken.first_seen_broken_at;

      const third = await validate({ dashboard_ids: [ids.customers] });
      expect(third.task.status).toBe('FAILED');
      const again = third.items[0];
      expect(again).toMatchObject({ status: 'broken', newly_broken: false, first_seen_broken_at: brokenAt, last_passed_at: firstAt });
      expect(again.checked_at > brokenAt).toBe(true);
      expect(again.error).toContain(`broken since ${brokenAt}`);
    },
  );

  it('selects by exact tag and by owner', { timeout: 240_000 }, async () => {
    const tagged = await validate({ tag: `${P}-team` });
    expect(tagged.items.map((i) => i.id)).toEqual([ids.tagged]);
    expect(tagged.task.params).toMatchObject({ env_id: envId, tag: `${P}-team` });
    const owned = await validate({ owner: `${P}-owner` });
    expect(owned.items.map((i) => i.id)).toEqual([ids.tagged]);
    expect(owned.task.status).toBe('SUCCEEDED');
    const none = await validate({ tag: `${P}-no-such-tag` });
    expect(none.task.status).toBe('SUCCEEDED');
    expect(none.items).toEqual([]);
  });

  it('counts charts by verdict and failing dashboards on /metrics', async () => {
    const text = await (await fetch(`http://${metricsServer.address}/metrics`)).text();
    const sample = (name: string, labels: string) => Number(new RegExp(`^${name}\\{${labels}\\} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);
    expect(sample('switchyard_validation_charts_total', `environment_id="${envId}",verdict="broken"`)).toBe(2);
    expect(sample('switchyard_validation_charts_total', `environment_id="${envId}",verdict="passed"`)).toBeGreaterThanOrEqual(7);
    expect(sample('switchyard_validation_dashboards_failing', `environment_id="${envId}"`)).toBe(1);
    expect(text).toMatch(new RegExp(`switchyard_validation_dashboard_duration_seconds_count\\{environment_id="${envId}"\\} [1-9]`));
  });

  it('refuses a bad body and an unknown environment, creating no task', async () => {
    const bad = await admin('POST', `/api/environments/${envId}/validate`, { json: { dashboard_ids: [0] } });
    expect(bad.status).toBe(400);
    expect((await admin('POST', `/api/environments/${envId}/validate`, { json: { colour: 'red' } })).status).toBe(400);
    expect((await admin('POST', '/api/environments/00000000-0000-4000-8000-000000000000/validate', { json: {} })).status).toBe(404);
  });
});
