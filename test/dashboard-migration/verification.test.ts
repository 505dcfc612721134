import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
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
 * Verification against real Superset 6.1.0 (a → b): the queries of a dashboard's charts on one
 * dataset go out in one chart-data call, yet each chart gets its own answer. The target's table
 * lacks a column one chart needs: that chart fails with Superset's message, its sibling on the same
 * dataset runs, and the dashboard is imported with errors.
 */
const enabled = inject('supersets') !== null;
const P = `v${Date.now().toString(36)}`;

let h: Harness;
let a: SupersetClient;
let b: SupersetClient;

beforeAll(async () => {
  if (!enabled) return;
  h = await createHarness({ worker: true });
  [a, b] = await Promise.all([client('a'), client('b')]);
}, 120_000);
afterAll(async () => {
  a?.close();
  b?.close();
  await h?.close();
});

describe.skipIf(!enabled)('verification of a migrated dashboard', () => {
  it(
    "gives each chart its own answer: one fails with Superset's message, its sibling on the same dataset runs",
    { timeout: 240_000 },
    async () => {
      const dir = path.join(inject('runDir'), P);
      const src = await createSqliteDatabase(a, { name: `${P}_src`, path: path.join(dir, 'src.db'), tables: prefixedTables(P) });
      // The target's table has every column but `units`.
      const tables = prefixedTables(P).map((t) => {
        if (!t.name.endsWith('_sales')) return t;
        const names = Object.keys(t.columns);
        const at = names.indexOf('units');
        return {
          ...t,
          columns: Object.fromEntries(Object.entries(t.columns).filter(([c]) => c !== 'units')),
          rows: t.rows.map((r) => r.filter((_, i) => i !== at)),
        };
      });
      const dst = await createSqliteDatabase(b, { name: `${P}_dst`, path: path.join(dir, 'dst.db'), tables });
      const ds = await createDataset(a, { database: src.id, tableName: `${P}_sales` });
      const regions = await createTableChart(a, { name: `${P} regions`, datasetId: ds.id, columns: ['region'] });
      const units = await createBigNumberChart(a, { name: `${P} units`, datasetId: ds.id, metric: sqlMetric('SUM(units)', 'units') });
      const dashboard = await createDashboard(a, { title: `${P} verified`, slug: `${P}-verified`, charts: [regions, units] });

      const envA = await registerEnvironment(h, 'a', `${P}-a`);
      const envB = await registerEnvironment(h, 'b', `${P}-b`);
      const r = await h.request('POST', '/api/dashboards/migrate', {
        token: h.adminToken,
        json: {
          source_env_id: envA,
          target_env_id: envB,
          dashboard_ids: [dashboard.id],
          db_mappings: [{ source_database_id: src.id, target_database_id: dst.id }],
        },
      });
      expect(r.status, r.text).toBe(202);
      const task = await waitTask(h, r.body.task_id, 180_000);
      expect(task.status).toBe('FAILED');
      const [item] = task.result.items;
      expect(item).toMatchObject({ status: 'imported_with_errors', outcome: 'failed' });
      expect(item.verification).toMatchObject({ ok: false, dashboard_present: true, charts_expected: 2, charts_linked: 2 });
      const byName = Object.fromEntries(item.verification.charts.map((c: any) => [c.name, c]));
      expect(byName[`${P} regions`]).toMatchObject({ ok: true });
      expect(byName[`${P} regions`].rows).toBeGreaterThan(0);
      expect(byName[`${P} units`]).toMatchObject({ ok: false });
      expect(byName[`${P} units`].error).toMatch(/units/);
      expect(task.result.timings.verification_ms).toBeGreaterThan(0);
    },
  );

  it(
    'catches a column renamed in the target only on the next rerun: the chart reading it fails, its sibling passes, nothing is imported',
    { timeout: 300_000 },
    async () => {
      const R = `${P}r`;
      const dir = path.join(inject('runDir'), R);
      const src = await createSqliteDatabase(a, { name: `${R}_src`, path: path.join(dir, 'src.db'), tables: prefixedTables(R) });
      const dst = await createSqliteDatabase(b, { name: `${R}_dst`, path: path.join(dir, 'dst.db'), tables: prefixedTables(R) });
      const ds = await createDataset(a, { database: src.id, tableName: `${R}_sales` });
      const regions = await createTableChart(a, { name: `${R} regions`, datasetId: ds.id, columns: ['region'] });
      const units = await createBigNumberChart(a, { name: `${R} units`, datasetId: ds.id, metric: sqlMetric('SUM(units)', 'units') });
      const dashboard = await createDashboard(a, { title: `${R} renamed`, slug: `${R}-renamed`, charts: [regions, units] });
      const envA = await registerEnvironment(h, 'a', `${R}-a`);
      const envB = await registerEnvironment(h, 'b', `${R}-b`);
      const migrate = async (status: string) => {
        const r = await h.request('POST', '/api/dashboards/migrate', {
          token: h.adminToken,
          json: {
            source_env_id: envA,
            target_env_id: envB,
            dashboard_ids: [dashboard.id],
            db_mappings: [{ source_database_id: src.id, target_database_id: dst.id }],
          },
        });
        expect(r.status, r.text).toBe(202);
        const task = await waitTask(h, r.body.task_id, 180_000);
        expect(task.status, JSON.stringify(task.result?.items?.[0]?.error)).toBe(status);
        return { task, item: task.result.items[0] };
      };
      expect((await migrate('SUCCEEDED')).item).toMatchObject({ status: 'imported', verification: { ok: true } });
      expect((await migrate('SUCCEEDED')).item).toMatchObject({
        status: 'unchanged',
        verification: { ok: true },
        verification_state: { state: 'verified' },
      });

      // `region` is renamed in the target's table only: the dataset there still names it.
      const sqlite = new DatabaseSync(dst.path);
      sqlite.exec(`ALTER TABLE "${R}_sales" RENAME COLUMN region TO territory`);
      sqlite.close();

      const { task, item } = await migrate('FAILED');
      expect(item).toMatchObject({
        status: 'unchanged_with_errors',
        outcome: 'failed',
        step: 'verify',
        verification_state: { state: 'verified', task_id: task.id },
      });
      const byName = Object.fromEntries(item.verification.charts.map((c: any) => [c.name, c]));
      expect(byName[`${R} regions`]).toMatchObject({ ok: false, classification: 'broken_by_migration' });
      expect(byName[`${R} regions`].error).toMatch(/region/);
      expect(byName[`${R} units`]).toMatchObject({ ok: true, classification: 'passes' });
      expect(task.result.totals).toMatchObject({ imported: 0, unchanged_with_errors: 1 });
    },
  );
});
