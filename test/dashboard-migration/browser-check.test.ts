import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createHarness, type Harness } from '../support/harness.ts';
import {
  createBigNumberChart,
  createDashboard,
  createDataset,
  createSqliteDatabase,
  createTableChart,
  sqlMetric,
  type SupersetClient,
} from '../support/superset/fixtures.ts';
import { client, prefixedTables, registerEnvironment, waitTask } from './support.ts';

/**
 * The browser check (`verification: "browser"`) against real Superset, 6.1.0 (a) → 6.0.0 (c):
 * each imported dashboard opened in Debian's Chromium in the target and in the source, each
 * chart's rendered state read from Superset's own page, both screenshots stored and served.
 *
 * Two dashboards: `good` (a table chart that draws on both sides) and `mixed`, whose target table
 * lacks the `units` column (its big number shows an error in the target only: the browser check
 * fails it) and which has a chart whose metric names a column neither side has (an error on both
 * sides: reported, not what fails it).
 */
const enabled = inject('supersets') !== null;
const P = `bc${Date.now().toString(36)}`;

let h: Harness;
let a: SupersetClient;
let c: SupersetClient;

beforeAll(async () => {
  if (!enabled) return;
  h = await createHarness({ worker: true, env: { BROWSER_CHECK_PAGES: '2', BROWSER_CHECK_BUDGET_SECONDS: '120' } });
  [a, c] = await Promise.all([client('a'), client('c')]);
}, 120_000);
afterAll(async () => {
  a?.close();
  c?.close();
  await h?.close();
});

/** A screenshot's bytes as the API serves them. */
async function screenshot(taskId: string, id: string, token = h.adminToken) {
  const res = await fetch(`${h.baseUrl}/api/tasks/${taskId}/screenshots/${id}`, { headers: { authorization: `Bearer ${token}` } });
  return { status: res.status, type: res.headers.get('content-type'), bytes: Buffer.from(await res.arrayBuffer()) };
}

const PNG_MAGIC = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

describe.skipIf(!enabled)('the browser check of migrated dashboards', () => {
  it(
    'records each chart as drawn in both environments, fails a chart broken in the target only, and serves both screenshots',
    { timeout: 480_000 },
    async () => {
      const dir = path.join(inject('runDir'), P);
      const src = await createSqliteDatabase(a, { name: `${P}_src`, path: path.join(dir, 'src.db'), tables: prefixedTables(P) });
      // The target's sales table has every column but `units`.
      const tables = prefixedTables(P).map((t) => {
        if (!t.name.endsWith('_sales')) return t;
        const at = Object.keys(t.columns).indexOf('units');
        return {
          ...t,
          columns: Object.fromEntries(Object.entries(t.columns).filter(([col]) => col !== 'units')),
          rows: t.rows.map((r) => r.filter((_, i) => i !== at)),
        };
      });
      const dst = await createSqliteDatabase(c, { name: `${P}_dst`, path: path.join(dir, 'dst.db'), tables });
      const ds = await createDataset(a, { database: src.id, tableName: `${P}_sales` });
      const regions = await createTableChart(a, { name: `${P} regions`, datasetId: ds.id, columns: ['region'] });
      const regions2 = await createTableChart(a, { name: `${P} regions again`, datasetId: ds.id, columns: ['region'] });
      const units = await createBigNumberChart(a, { name: `${P} units`, datasetId: ds.id, metric: sqlMetric('SUM(units)', 'units') });
      const nowhere = await createBigNumberChart(a, {
        name: `${P} nowhere`,
        datasetId: ds.id,
        metric: sqlMetric('SUM(no_such_column)', 'nowhere'),
      });
      const good = await createDashboard(a, { title: `${P} good`, slug: `${P}-good`, charts: [regions] });
      const mixed = await createDashboard(a, { title: `${P} mixed`, slug: `${P}-mixed`, charts: [regions2, units, nowhere] });

      const envA = await registerEnvironment(h, 'a', `${P}-a`);
      const envC = await registerEnvironment(h, 'c', `${P}-c`);
      const r = await h.request('POST', '/api/dashboards/migrate', {
        token: h.adminToken,
        json: {
          source_env_id: envA,
          target_env_id: envC,
          dashboard_ids: [good.id, mixed.id],
          db_mappings: [{ source_database_id: src.id, target_database_id: dst.id }],
          verification: 'browser',
        },
      });
      expect(r.status, r.text).toBe(202);
      const task = await waitTask(h, r.body.task_id, 420_000);
      const byId = Object.fromEntries(task.result.items.map((i: any) => [i.id, i]));

      // good: drawn on both sides, both screenshots taken.
      const g = byId[good.id];
      expect(g.status, JSON.stringify(g.verification)).toBe('imported');
      expect(g.verification.browser, JSON.stringify(g.verification.browser)).toMatchObject({
        verdict: 'passes',
        charts: [{ name: `${P} regions`, state: 'ok', source_state: 'ok' }],
      });
      expect(g.verification.browser.duration_ms).toBeGreaterThan(0);
      for (const id of [g.verification.browser.target_screenshot_id, g.verification.browser.source_screenshot_id]) {
        const shot = await screenshot(task.id, id);
        expect(shot.status).toBe(200);
        expect(shot.type).toBe('image/png');
        expect(shot.bytes.subarray(0, 8).equals(PNG_MAGIC)).toBe(true);
        expect(shot.bytes.length).toBeGreaterThan(5_000);
      }
      expect(g.verification.browser.target_screenshot_id).not.toBe(g.verification.browser.source_screenshot_id);

      // mixed: the chart broken in the target only fails the browser check; the one broken on both sides is reported.
      const m = byId[mixed.id];
      expect(m.status).toBe('imported_with_errors');
      const b = m.verification.browser;
      expect(b.verdict, JSON.stringify(b)).toBe('failed');
      const charts = Object.fromEntries(b.charts.map((x: any) => [x.name, x]));
      expect(charts[`${P} regions again`], JSON.stringify(b)).toMatchObject({ state: 'ok', source_state: 'ok' });
      expect(charts[`${P} units`]).toMatchObject({ state: 'error', source_state: 'ok' });
      expect(charts[`${P} units`].message).toMatch(/units/);
      expect(charts[`${P} nowhere`]).toMatchObject({ state: 'error', source_state: 'error' });
      expect(charts[`${P} nowhere`].message).toMatch(/no_such_column/);
      expect(b.reason).toContain(`'${P} units'`);
      expect(b.reason).not.toContain(`'${P} nowhere'`);
      expect((await screenshot(task.id, b.target_screenshot_id)).status).toBe(200);

      // Screenshots belong to their task: another id, or another task's path, is 404.
      expect((await screenshot(task.id, '00000000-0000-4000-8000-000000000000')).status).toBe(404);
      expect((await screenshot(task.id, 'not-a-uuid')).status).toBe(400);
    },
  );
});
