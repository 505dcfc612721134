// A schema rule that reached the store without the API's check (review F1), in a real migration
// a (6.1.0) → b (6.1.0) where the dialect is the point: a SQLite database, whose renderer in
// node-sql-parser writes a name between double quotes without escaping one inside it. The rule
// `main` → `x"; DELETE FROM t; -- ` would have turned the virtual dataset's SQL into two
// statements; the item fails at the plan with the rule, the offending character and a next
// action, and nothing reaches the target. PostgreSQL's ordinary rename end to end is
// env-rules-superset.test.ts.
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createHarness, type Harness } from '../support/harness.ts';
import {
  buildPositions,
  createBigNumberChart,
  createDataset,
  createSqliteDatabase,
  sqlMetric,
  updateDashboard,
  type SupersetClient,
} from '../support/superset/fixtures.ts';
import { client, registerEnvironment, waitTask } from '../dashboard-migration/support.ts';

const P = `erd${randomBytes(3).toString('hex')}`;
const HOSTILE = 'x"; DELETE FROM t; -- ';
const enabled = inject('supersets') !== null;

let h: Harness;
let b: SupersetClient;
let envA: string;
let envB: string;
let dashboardId: number;

const admin = (m: string, p: string, json?: unknown) => h.request(m, p, { token: h.adminToken, ...(json ? { json } : {}) });
const orders = {
  name: `${P}_orders`,
  columns: { id: 'INTEGER', amount: 'REAL' },
  rows: [
    [1, 10],
    [2, 32],
  ],
};

beforeAll(async () => {
  if (!enabled) return;
  h = await createHarness({ worker: true });
  const a = await client('a');
  b = await client('b');
  const dir = path.join(inject('runDir'), P);
  const devDb = await createSqliteDatabase(a, { name: `${P}_dev`, path: path.join(dir, 'dev.db'), tables: [orders] });
  const prodDb = await createSqliteDatabase(b, { name: `${P}_prod`, path: path.join(dir, 'prod.db'), tables: [orders] });
  const ds = await createDataset(a, {
    database: devDb.id,
    schema: 'main',
    tableName: `${P}_orders_v`,
    sql: `select id, amount from main.${P}_orders`,
  });
  const d = await a.request<{ id: number }>('POST', '/api/v1/dashboard/', { json: { dashboard_title: `${P} sales`, published: true } });
  dashboardId = d.id;
  const chart = await createBigNumberChart(a, {
    name: `${P} revenue`,
    datasetId: ds.id,
    metric: sqlMetric('SUM(amount)', 'revenue'),
    dashboards: [d.id],
  });
  await updateDashboard(a, d.id, {
    json_metadata: JSON.stringify({ positions: buildPositions(`${P} sales`, [{ id: chart.id, name: chart.name }]) }),
  });
  envA = await registerEnvironment(h, 'a', `${P}-a`);
  envB = await registerEnvironment(h, 'b', `${P}-b`);
  const m = await admin('PUT', `/api/environments/${envA}/db-mappings/${envB}`, {
    mappings: [{ source_database_id: devDb.id, target_database_id: prodDb.id }],
  });
  expect(m.status, m.text).toBe(200);
  // The API refuses it (env-rules-api.test.ts); the store takes what it is given.
  expect((await admin('POST', `/api/environments/${envA}/rules/${envB}`, { kind: 'schema', from: 'main', to: HOSTILE })).status).toBe(400);
  await h.boot.context.stores.environmentRules.add(envA, envB, { kind: 'schema', from: 'main', to: HOSTILE }, null);
}, 300_000);

afterAll(async () => h?.close());

describe.runIf(enabled)('a hostile schema rule in the store, SQLite', () => {
  it.each([true, false])(
    'dry_run %s: the item fails at the plan with the rule and a next action; nothing is written in the target',
    async (dryRun) => {
      const r = await admin('POST', '/api/dashboards/migrate', {
        source_env_id: envA,
        target_env_id: envB,
        dashboard_ids: [dashboardId],
        dry_run: dryRun,
      });
      expect(r.status, r.text).toBe(202);
      const task = await waitTask(h, r.body.task_id, 240_000);
      const item = task.result?.items?.[0];
      const seen = JSON.stringify({ status: task.status, error: task.error, item }).slice(0, 4000);
      expect(item?.status, seen).toBe('failed');
      expect(item.step, seen).toBe('plan');
      expect(item.error, seen).toContain('schema rule');
      expect(item.error, seen).toContain(`'"' (U+0022) at position 2`);
      expect(item.error, seen).toContain('nothing was written');
      expect(
        item.next_actions.map((a: { action: string }) => a.action),
        seen,
      ).toContain('fix_env_rule');
      for (const [kind, col, value] of [
        ['dataset', 'table_name', `${P}_orders_v`],
        ['chart', 'slice_name', `${P} revenue`],
        ['dashboard', 'dashboard_title', `${P} sales`],
      ]) {
        const there = await b.request<{ count: number }>('GET', `/api/v1/${kind}/`, { q: { filters: [{ col, opr: 'eq', value }] } });
        expect(there.count, kind).toBe(0);
      }
    },
  );
});
