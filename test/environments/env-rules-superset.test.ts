// Per-environment rules in a real migration, Superset 6.1.0 (a) → 6.0.0 (c): a virtual dataset
// reading `analytics_dev.orders` in dev arrives reading `analytics.orders` (the target's database
// has no analytics_dev schema, so its charts only run if the SQL was rewritten), a markdown link
// and a chart's subheader pointing at dev's host arrive pointing at prod's, the dry run lists each
// rule's differences and says which rule matched nothing, and a rerun changes nothing; the drift
// report compares under the rules, and a git deploy of the same dashboard into d (6.1.0 on
// PostgreSQL metadata) applies that pair's rules.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { withDatabase } from '../../lib/embedded/postgres.ts';
import { createHarness, waitFor, type Harness } from '../support/harness.ts';
import {
  buildPositions,
  createBigNumberChart,
  createDatabase,
  createDataset,
  getDashboard,
  sqlMetric,
  updateDashboard,
  type SupersetClient,
} from '../support/superset/fixtures.ts';
import { client, registerEnvironment, waitTask } from '../dashboard-migration/support.ts';
import { setIdentity } from '../git/support.ts';

const P = `er${randomBytes(3).toString('hex')}`;
const DEV = 'https://superset-dev.example.com';
const PROD = 'https://superset.example.com';
const enabled = inject('supersets') !== null;

let h: Harness;
let a: SupersetClient;
let c: SupersetClient;
let envA: string;
let envC: string;
let dashboardId: number;
let datasetUuid: string;
const rule: Record<string, string> = {};
const databases: string[] = [];
/** SQLAlchemy URI of each warehouse by schema, and dev's Superset database id. */
const uris: Record<string, string> = {};
let devDbId: number;

const admin = (m: string, p: string, json?: unknown) => h.request(m, p, { token: h.adminToken, ...(json ? { json } : {}) });

/** A PostgreSQL database of the run holding `<schema>.orders`, registered in a Superset. */
async function warehouse(cl: SupersetClient, schema: string, name: string) {
  const adminUrl = inject('pgAdminUrl');
  const dbName = `${P}_${schema}`;
  const root = new pg.Client({ connectionString: adminUrl });
  await root.connect();
  await root.query(`create database ${dbName}`);
  await root.end();
  databases.push(dbName);
  const url = withDatabase(adminUrl, dbName);
  const data = new pg.Client({ connectionString: url });
  await data.connect();
  await data.query(
    `create schema ${schema}; create table ${schema}.orders (id integer, amount numeric); insert into ${schema}.orders values (1, 10), (2, 32)`,
  );
  await data.end();
  uris[schema] = url.replace(/^postgres(ql)?:/, 'postgresql:');
  return createDatabase(cl, { name, sqlalchemyUri: uris[schema]! });
}

beforeAll(async () => {
  if (!enabled) return;
  h = await createHarness({ worker: true });
  [a, c] = await Promise.all([client('a'), client('c')]);
  const devDb = await warehouse(a, 'analytics_dev', `${P}_dev`);
  const prodDb = await warehouse(c, 'analytics', `${P}_prod`);
  devDbId = devDb.id;
  const ds = await createDataset(a, {
    database: devDb.id,
    schema: 'analytics_dev',
    tableName: `${P}_orders_v`,
    sql: 'select id, amount from analytics_dev.orders',
  });
  datasetUuid = ds.uuid!;
  const chart = await createBigNumberChart(a, {
    name: `${P} revenue`,
    datasetId: ds.id,
    metric: sqlMetric('SUM(amount)', 'revenue'),
    subheader: `details: ${DEV}/superset/dashboard/9/`,
  });
  // The layout: the chart and a markdown element linking to dev's Superset.
  const d = await a.request<{ id: number }>('POST', '/api/v1/dashboard/', { json: { dashboard_title: `${P} sales`, published: true } });
  dashboardId = d.id;
  const positions = buildPositions(`${P} sales`, [{ id: chart.id, name: chart.name }]) as Record<string, any>;
  positions['MARKDOWN-notes'] = {
    type: 'MARKDOWN',
    id: 'MARKDOWN-notes',
    children: [],
    parents: ['ROOT_ID', 'GRID_ID', 'ROW-1'],
    meta: {
      width: 4,
      height: 50,
      code: `See [the orders board](${DEV}/superset/dashboard/orders/?standalone=1) or https://superset-dev.example.com.evil.io/x`,
    },
  };
  positions['ROW-1'].children.push('MARKDOWN-notes');
  await updateDashboard(a, d.id, { json_metadata: JSON.stringify({ positions }) });

  envA = await registerEnvironment(h, 'a', `${P}-a`);
  envC = await registerEnvironment(h, 'c', `${P}-c`);
  const m = await admin('PUT', `/api/environments/${envA}/db-mappings/${envC}`, {
    mappings: [{ source_database_id: devDb.id, target_database_id: prodDb.id }],
  });
  expect(m.status, m.text).toBe(200);
  for (const [key, body] of Object.entries({
    schema: { kind: 'schema', from: 'analytics_dev', to: 'analytics' },
    url: { kind: 'text', from: DEV, to: PROD },
    // PostgreSQL's catalog is the database: the dataset names dev's, and Superset connects to the catalog a dataset names.
    catalog: { kind: 'catalog', from: `${P}_analytics_dev`, to: `${P}_analytics` },
    unmatched: { kind: 'catalog', from: 'dev_catalog', to: 'prod_catalog' },
  })) {
    const r = await admin('POST', `/api/environments/${envA}/rules/${envC}`, body);
    expect(r.status, r.text).toBe(201);
    rule[key] = r.body.id;
  }
}, 300_000);

afterAll(async () => {
  await h?.close();
  if (!databases.length) return;
  const root = new pg.Client({ connectionString: inject('pgAdminUrl') });
  await root.connect();
  for (const db of databases) await root.query(`drop database if exists ${db} with (force)`).catch(() => undefined);
  await root.end();
});

async function migrate(dryRun: boolean) {
  const r = await admin('POST', '/api/dashboards/migrate', {
    source_env_id: envA,
    target_env_id: envC,
    dashboard_ids: [dashboardId],
    dry_run: dryRun,
  });
  expect(r.status, r.text).toBe(202);
  const task = await waitTask(h, r.body.task_id, 240_000);
  return { task, item: task.result.items[0] };
}

describe.runIf(enabled)('per-environment rules, a (6.1.0) → c (6.0.0)', () => {
  it('a dry run lists each rule as differences, says which matched nothing, and writes nothing', async () => {
    const { task, item } = await migrate(true);
    expect(task.status, JSON.stringify(task.result)).toBe('SUCCEEDED');
    expect(item.status).toBe('planned');
    const [schema, url, catalog, unmatched] = item.env_rules;
    expect(schema).toMatchObject({ id: rule.schema, kind: 'schema', from: 'analytics_dev', to: 'analytics', matched: 2, unreadable: [] });
    expect(schema.objects).toEqual([
      expect.objectContaining({ object: `dataset "${P}_orders_v"`, field: 'schema', before: 'analytics_dev', after: 'analytics' }),
      expect.objectContaining({
        field: 'sql',
        before: 'select id, amount from analytics_dev.orders',
        after: expect.stringMatching(/FROM analytics\.orders/),
      }),
    ]);
    expect(url).toMatchObject({ id: rule.url, kind: 'text', matched: 2 });
    expect(url.objects.map((o: any) => o.field)).toEqual(['position.MARKDOWN-notes.meta.code', 'params.subheader']);
    expect(url.objects[0].after).toBe(
      `See [the orders board](${PROD}/superset/dashboard/orders/?standalone=1) or https://superset-dev.example.com.evil.io/x`,
    );
    // The database mapping already moved the dataset's catalog to prod's database (lib/bundles/catalogs.ts): the rule, applied after it, finds nothing left.
    expect(catalog).toMatchObject({ id: rule.catalog, matched: 0, objects: [] });
    expect(unmatched).toMatchObject({
      id: rule.unmatched,
      kind: 'catalog',
      matched: 0,
      objects: [],
      note: expect.stringMatching(/matched nothing/),
    });
    const there = await c.request<{ count: number }>('GET', '/api/v1/dataset/', {
      q: { filters: [{ col: 'table_name', opr: 'eq', value: `${P}_orders_v` }] },
    });
    expect(there.count).toBe(0);
  });

  it('migrates with the rules applied: the SQL reads the prod schema, links point at prod, the charts run there', async () => {
    const { task, item } = await migrate(false);
    expect(task.status, JSON.stringify(item)).toBe('SUCCEEDED');
    expect(item.status).toBe('imported');
    expect(item.verification).toMatchObject({ ok: true, charts_expected: 1 });
    const found = await c.request<{ result: Array<{ id: number; uuid: string }> }>('GET', '/api/v1/dataset/', {
      q: { filters: [{ col: 'table_name', opr: 'eq', value: `${P}_orders_v` }], columns: ['id', 'uuid'] },
    });
    expect(found.result.map((d) => d.uuid)).toEqual([datasetUuid]);
    const ds = (
      await c.request<{ result: { sql: string; schema: string; catalog?: string } }>('GET', `/api/v1/dataset/${found.result[0]!.id}`)
    ).result;
    expect(ds.schema).toBe('analytics');
    expect(ds.catalog).toBe(`${P}_analytics`);
    expect(ds.sql).toMatch(/FROM analytics\.orders/);
    expect(ds.sql).not.toContain('analytics_dev');
    const dash = (await getDashboard(c, item.target_dashboard_id)).result;
    const code = JSON.parse(String(dash.position_json))['MARKDOWN-notes'].meta.code as string;
    expect(code).toContain(`(${PROD}/superset/dashboard/orders/?standalone=1)`);
    expect(code).toContain('https://superset-dev.example.com.evil.io/x'); // another host that merely starts the same
    const charts = await c.request<{ result: Array<{ form_data: { subheader?: string } }> }>(
      'GET',
      `/api/v1/dashboard/${item.target_dashboard_id}/charts`,
    );
    expect(charts.result[0]!.form_data.subheader).toBe(`details: ${PROD}/superset/dashboard/9/`);
  });

  it('a rerun with the same rules changes nothing', async () => {
    const { task, item } = await migrate(false);
    expect(task.status, JSON.stringify(item)).toBe('SUCCEEDED');
    expect(item.status, JSON.stringify(item.objects)).toBe('unchanged');
    expect(item.env_rules.map((e: any) => e.matched)).toEqual([2, 2, 0, 0]);
  });

  it('the drift report compares under the rules: in sync with them, drifted once the URL rule is gone', async () => {
    const drift = async () => {
      const made = await admin('POST', '/api/schedules', {
        name: `${P} drift ${Date.now()}`,
        kind: 'drift_report',
        params: { source_env_id: envA, target_env_id: envC },
        cron: '0 3 * * *',
        paused: true,
      });
      expect(made.status, made.text).toBe(201);
      expect((await admin('POST', `/api/schedules/${made.body.id}/trigger`)).status).toBe(202);
      const task = await waitFor(
        async () => {
          const r = await admin('GET', '/api/tasks?task_type=drift_report&page_size=100');
          return (r.body.items as any[]).find((t) => t.params?.schedule_id === made.body.id);
        },
        60_000,
        'the drift report task',
      );
      const done = await waitTask(h, task.id, 240_000);
      return (done.result.items as any[]).find((i) => i.id === dashboardId);
    };
    expect(await drift()).toMatchObject({ status: 'in_sync', differences: [] });
    expect((await admin('DELETE', `/api/environments/${envA}/rules/${envC}/${rule.url}`)).status).toBe(204);
    const without = await drift();
    expect(without.status, JSON.stringify(without)).toBe('drifted');
    expect(JSON.stringify(without.differences)).toContain('superset-dev.example.com');
  }, 600_000);

  it("a git deploy applies the pair's rules: the repository's dev dataset arrives in d (6.1.0, PostgreSQL metadata) reading the prod schema", async () => {
    const d = await client('d');
    const envD = await registerEnvironment(h, 'd', `${P}-d`);
    const prodInD = await createDatabase(d, { name: `${P}_prod`, sqlalchemyUri: uris.analytics! });
    expect(
      (
        await admin('PUT', `/api/environments/${envA}/db-mappings/${envD}`, {
          mappings: [{ source_database_id: devDbId, target_database_id: prodInD.id }],
        })
      ).status,
    ).toBe(200);
    for (const body of [
      { kind: 'schema', from: 'analytics_dev', to: 'analytics' },
      { kind: 'catalog', from: `${P}_analytics_dev`, to: `${P}_analytics` },
    ])
      expect((await admin('POST', `/api/environments/${envA}/rules/${envD}`, body)).status).toBe(201);
    await setIdentity(h, h.adminToken, 'Ada Admin', 'ada@example.com');
    const G = (op: string) => `/api/git/dashboards/${dashboardId}/${op}`;
    expect((await admin('POST', G('init'), { env_id: envA })).status).toBe(200);
    expect((await admin('POST', G('sync'), { env_id: envA })).status).toBe(200);
    const commit = (await admin('POST', G('commit'), { env_id: envA, message: 'dev as it is' })).body.commit as string;
    const r = await admin('POST', G('deploy'), { env_id: envA, target_env_id: envD, commit });
    expect(r.status, r.text).toBe(202);
    const task = await waitTask(h, r.body.task_id, 240_000);
    const item = task.result.items[0];
    expect(task.status, JSON.stringify(item)).toBe('SUCCEEDED');
    expect(item).toMatchObject({ status: 'deployed', verification: { ok: true } });
    expect(item.env_rules.map((e: any) => [e.kind, e.matched])).toEqual([
      ['schema', 2],
      ['catalog', 0],
    ]);
    const found = await d.request<{ result: Array<{ id: number }> }>('GET', '/api/v1/dataset/', {
      q: { filters: [{ col: 'table_name', opr: 'eq', value: `${P}_orders_v` }] },
    });
    const ds = (await d.request<{ result: { sql: string; schema: string } }>('GET', `/api/v1/dataset/${found.result[0]!.id}`)).result;
    expect(ds.schema).toBe('analytics');
    expect(ds.sql).toMatch(/FROM analytics\.orders/);
  }, 600_000);
});
