import path from 'node:path';
import { inject } from 'vitest';
import {
  createBigNumberChart,
  createDashboard,
  createDataset,
  defaultTables,
  createSqliteDatabase,
  createTableChart,
  login,
  sqlMetric,
  type SupersetClient,
} from '../support/superset/fixtures.ts';
import type { Harness } from '../support/harness.ts';
import type { TestSupersetName } from '../support/superset/test-instances.ts';

export interface SupersetInstanceInfo {
  baseUrl: string;
  username: string;
  password: string;
  version: string;
  metadata: 'sqlite' | 'postgresql';
  metadataUrl?: string;
}

/** The real Superset instances global setup started: a (6.1.0), b (6.1.0), c (6.0.0), d (6.1.0, PostgreSQL metadata). */
export function superset(name: TestSupersetName): SupersetInstanceInfo {
  const all = inject('supersets') as Record<string, SupersetInstanceInfo>;
  if (!all?.[name]) throw new Error(`global setup provides no Superset instance '${name}'`);
  return all[name];
}

export async function client(name: TestSupersetName): Promise<SupersetClient> {
  const s = superset(name);
  return login(s.baseUrl, s.username, s.password);
}

/** Registers a Superset instance as a Switchyard environment; returns its env_id. */
export async function registerEnvironment(h: Harness, name: TestSupersetName, label: string): Promise<string> {
  const s = superset(name);
  const r = await h.request('POST', '/api/environments', {
    token: h.adminToken,
    json: { name: label, base_url: s.baseUrl, username: s.username, password: s.password },
  });
  if (r.status !== 201) throw new Error(`registering ${label} failed: ${r.status} ${r.text}`);
  return r.body.id;
}

/** Target databases hold the same tables under the same prefixed names. */
export function prefixedTables(prefix: string) {
  return defaultTables().map((t) => ({ ...t, name: `${prefix}_${t.name}` }));
}

export interface SourceFixture {
  database: { id: number; uuid?: string };
  sales: { id: number };
  dashboards: Array<{ id: number; uuid?: string; title: string; slug?: string; chartIds: number[] }>;
}

/** A SQLite database with a dataset, charts that really query it, and dashboards. */
export async function buildSource(
  c: SupersetClient,
  prefix: string,
  dir: string,
  opts: { dashboards: number; dbName?: string; table?: 'sales' | 'customers' },
): Promise<SourceFixture> {
  // Superset refuses a second dataset on a same-named table even in another database, and the
  // instances are shared by test files: every fixture table gets the file's own prefix.
  const kind = opts.table ?? 'sales';
  const table = `${prefix}_${kind}`;
  const tables = prefixedTables(prefix);
  const database = await createSqliteDatabase(c, {
    name: opts.dbName ?? `${prefix}_src`,
    path: path.join(dir, `${prefix}-src.db`),
    tables,
  });
  const columns = kind === 'sales' ? ['ds', 'region', 'units'] : ['id', 'name', 'region'];
  const sales = await createDataset(c, { database: database.id, tableName: table });
  const dashboards: SourceFixture['dashboards'] = [];
  for (let i = 1; i <= opts.dashboards; i++) {
    const rows = await createTableChart(c, { name: `${prefix} rows ${i}`, datasetId: sales.id, columns });
    const big = await createBigNumberChart(c, {
      name: `${prefix} total ${i}`,
      datasetId: sales.id,
      metric: sqlMetric(kind === 'sales' ? 'SUM(units)' : 'COUNT(*)', 'total'),
    });
    const title = `${prefix} sales ${i}`;
    const slug = `${prefix}-sales-${i}`;
    const d = await createDashboard(c, { title, slug, charts: [rows, big] });
    dashboards.push({ id: d.id, uuid: d.uuid, title, slug, chartIds: [rows.id, big.id] });
  }
  return { database, sales, dashboards };
}

export async function waitTask(h: Harness, id: string, timeoutMs = 120_000) {
  return h.waitForTask(id, undefined, timeoutMs);
}
