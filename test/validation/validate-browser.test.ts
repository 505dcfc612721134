import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { client, prefixedTables, registerEnvironment, waitTask } from '../dashboard-migration/support.ts';
import { createHarness, type Harness } from '../support/harness.ts';
import {
  createDashboard,
  createDataset,
  createSqliteDatabase,
  createTableChart,
  type SupersetClient,
} from '../support/superset/fixtures.ts';

/**
 * A validation with the browser check (`browser: true`) against real Superset 6.1.0 (a) in
 * Debian's Chromium: the dashboard's queries are checked, then it is opened and each chart's
 * drawn state read; the item carries both, and nothing is left awaiting the browser.
 */
const enabled = inject('supersets') !== null;
const P = `vb${Date.now().toString(36)}`;
let h: Harness;
let a: SupersetClient;
let envId: string;
let dashboardId: number;

beforeAll(async () => {
  h = await createHarness({ worker: true, env: { BROWSER_CHECK_PAGES: '1', BROWSER_CHECK_BUDGET_SECONDS: '120' } });
  if (!enabled) return;
  a = await client('a');
  const db = await createSqliteDatabase(a, { name: `${P}_wh`, path: path.join(inject('runDir'), P, 'wh.db'), tables: prefixedTables(P) });
  const ds = await createDataset(a, { database: db.id, tableName: `${P}_sales` });
  const chart = await createTableChart(a, { name: `${P} regions`, datasetId: ds.id, columns: ['region'] });
  dashboardId = (await createDashboard(a, { title: `${P} drawn`, charts: [chart] })).id;
  envId = await registerEnvironment(h, 'a', `${P}-a`);
}, 180_000);
afterAll(async () => {
  a?.close();
  await h?.close();
});

describe.skipIf(!enabled)('validate with the browser check', () => {
  it('checks the queries, then draws the dashboard; the item carries both verdicts', { timeout: 300_000 }, async () => {
    const r = await h.request('POST', `/api/environments/${envId}/validate`, {
      token: h.adminToken,
      json: { dashboard_ids: [dashboardId], browser: true },
    });
    expect(r.status, r.text).toBe(202);
    const task = await waitTask(h, r.body.task_id, 280_000);
    expect(task.status, JSON.stringify(task.error)).toBe('SUCCEEDED');
    expect(task.params).toMatchObject({ browser: true, dashboard_ids: [dashboardId] });
    const [item] = (await h.request('GET', `/api/tasks/${task.id}/items`, { token: h.adminToken })).body.items.map((x: any) => x.item);
    expect(item).toMatchObject({ id: dashboardId, status: 'passed', totals: { passed: 1, broken: 0 } });
    expect(item.awaiting_browser).toBeUndefined();
    expect(item.browser.verdict).toBe('passes');
    expect(item.browser.charts.map((c: any) => c.name)).toEqual([`${P} regions`]);
    expect(typeof item.browser.target_screenshot_id).toBe('string');
  });
});
