// A dataset's catalog follows its database's mapping, Superset 6.1.0 (a) → 6.0.0 (c): dev's and
// prod's Superset databases are two PostgreSQL databases of one server (the run's), each holding
// sales.orders with its own rows. The export names dev's database as the dataset's catalog, and
// Superset connects to the catalog a dataset names, so without the remap prod's chart would read
// dev's rows. No per-environment rule is set: the mapping alone must be enough, and a rerun changes nothing.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { withDatabase } from '../../lib/embedded/postgres.ts';
import { createHarness, type Harness } from '../support/harness.ts';
import {
  buildPositions,
  chartData,
  createBigNumberChart,
  createDatabase,
  createDataset,
  sqlMetric,
  updateDashboard,
  type SupersetClient,
} from '../support/superset/fixtures.ts';
import { client, registerEnvironment, waitTask } from './support.ts';

const P = `cr${randomBytes(3).toString('hex')}`;
// Superset's SQLite metadata refuses a second dataset on a same-named table even in another
// database, and instance a is shared by every test file (release.test.ts has an `orders` too).
const TABLE = `${P}_orders`;
const enabled = inject('supersets') !== null;
const REVENUE = sqlMetric('SUM(amount)', 'revenue');

let h: Harness;
let a: SupersetClient;
let c: SupersetClient;
let envA: string;
let envC: string;
let dashboardId: number;
let datasetUuid: string;
const databases: string[] = [];

const admin = (m: string, p: string, json?: unknown) => h.request(m, p, { token: h.adminToken, ...(json ? { json } : {}) });

/** A PostgreSQL database of the run, `name`, holding sales.<TABLE> with these amounts, registered in a Superset. */
async function warehouse(cl: SupersetClient, name: string, amounts: number[]) {
  const adminUrl = inject('pgAdminUrl');
  const root = new pg.Client({ connectionString: adminUrl });
  await root.connect();
  await root.query(`create database ${name}`);
  await root.end();
  databases.push(name);
  const url = withDatabase(adminUrl, name);
  const data = new pg.Client({ connectionString: url });
  await data.connect();
  await data.query(`create schema sales; create table sales.${TABLE} (id serial, amount numeric)`);
  for (const amount of amounts) await data.query(`insert into sales.${TABLE} (amount) values ($1)`, [amount]);
  await data.end();
  return createDatabase(cl, { name: `${name} warehouse`, sqlalchemyUri: url.replace(/^postgres(ql)?:/, 'postgresql:') });
}

beforeAll(async () => {
  if (!enabled) return;
  h = await createHarness({ worker: true });
  [a, c] = await Promise.all([client('a'), client('c')]);
  const devDb = await warehouse(a, `${P}_dev`, [4, 6]);
  const prodDb = await warehouse(c, `${P}_prod`, [400, 600]);
  const ds = await createDataset(a, { database: devDb.id, schema: 'sales', tableName: TABLE });
  datasetUuid = ds.uuid!;
  const chart = await createBigNumberChart(a, { name: `${P} revenue`, datasetId: ds.id, metric: REVENUE });
  const d = await a.request<{ id: number }>('POST', '/api/v1/dashboard/', { json: { dashboard_title: `${P} sales`, published: true } });
  dashboardId = d.id;
  await updateDashboard(a, d.id, {
    json_metadata: JSON.stringify({ positions: buildPositions(`${P} sales`, [{ id: chart.id, name: chart.name }]) }),
  });

  envA = await registerEnvironment(h, 'a', `${P}-a`);
  envC = await registerEnvironment(h, 'c', `${P}-c`);
  const m = await admin('PUT', `/api/environments/${envA}/db-mappings/${envC}`, {
    mappings: [{ source_database_id: devDb.id, target_database_id: prodDb.id }],
  });
  expect(m.status, m.text).toBe(200);
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
    overwrite: true,
  });
  expect(r.status, r.text).toBe(202);
  const task = await waitTask(h, r.body.task_id, 240_000);
  return { task, item: task.result.items[0] };
}

/** The dataset (by its uuid, the same in both) in a Superset: its id and catalog. */
async function datasetIn(cl: SupersetClient) {
  const found = await cl.request<{ result: Array<{ id: number; uuid: string }> }>('GET', '/api/v1/dataset/', {
    q: { filters: [{ col: 'table_name', opr: 'eq', value: TABLE }], columns: ['id', 'uuid'] },
  });
  const mine = found.result.find((d) => d.uuid === datasetUuid);
  if (!mine) return null;
  const detail = await cl.request<{ result: { catalog?: string | null } }>('GET', `/api/v1/dataset/${mine.id}`);
  return { id: mine.id, catalog: detail.result.catalog ?? null };
}

describe.runIf(enabled)('a dataset catalog follows the database mapping, a (6.1.0) → c (6.0.0)', () => {
  it('the export names dev database as the catalog, and the dry run says it becomes prod one', async () => {
    expect((await datasetIn(a))?.catalog).toBe(`${P}_dev`);
    const { task, item } = await migrate(true);
    expect(task.status, JSON.stringify(task.result)).toBe('SUCCEEDED');
    expect(item.status).toBe('planned');
    const db = item.objects.find((o: any) => o.kind === 'database');
    expect(db.note).toContain(`catalog '${P}_dev' becomes '${P}_prod'`);
    expect(item.collisions).toEqual([]);
    expect(item.env_rules ?? []).toEqual([]);
  });

  it('migrates without any rule: the dataset names prod catalog and the chart reads prod rows', async () => {
    const { task, item } = await migrate(false);
    expect(task.status, JSON.stringify(item)).toBe('SUCCEEDED');
    expect(item.status).toBe('imported');
    const ds = await datasetIn(c);
    expect(ds?.catalog).toBe(`${P}_prod`);
    const answer = await chartData(c, {
      datasource: { id: ds!.id, type: 'table' },
      queries: [{ columns: [], metrics: [REVENUE] }],
      result_format: 'json',
      result_type: 'full',
    });
    expect(Number(answer.result[0]!.data[0]!.revenue)).toBe(1000);
  });

  it('a rerun changes nothing', async () => {
    const { task, item } = await migrate(false);
    expect(task.status, JSON.stringify(item)).toBe('SUCCEEDED');
    expect(item.status).toBe('unchanged');
    expect((await datasetIn(c))?.catalog).toBe(`${P}_prod`);
  });
});
