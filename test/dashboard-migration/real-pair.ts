import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { inject } from 'vitest';
import { createEnvironment, uniquePrefix } from '../support/environments.ts';
import { startRecordingProxy, type GatewayProxy } from '../support/gateway-proxy.ts';
import { createHarness, type Harness } from '../support/harness.ts';
import {
  createBigNumberChart,
  createDashboard,
  createDataset,
  createSqliteDatabase,
  createTableChart,
  createUser,
  sqlMetric,
  type SupersetClient,
} from '../support/superset/fixtures.ts';
import { migrateOnPair } from './pair-tasks.ts';
import { client, prefixedTables, superset } from './support.ts';

/**
 * A harness with a worker and the real Superset 6.1.0 instances a (source) and b (target)
 * registered as environments behind a recording proxy each (test/support/gateway-proxy.ts), so a
 * test counts, orders and holds what a migration asks of a real Superset. Only this file's own
 * traffic goes through its proxies: the counts are not disturbed by other files sharing a and b.
 * `a` and `b` are direct clients (not through the proxies) for seeding and for edits made "by a person".
 */
export interface RealPair {
  h: Harness;
  source: GatewayProxy;
  target: GatewayProxy;
  a: SupersetClient;
  b: SupersetClient;
  sourceEnv: string;
  targetEnv: string;
  /** The environments' passwords, as registered (a test checks they leak nowhere). */
  passwords: string[];
  admin: Harness['request'];
  close(): Promise<void>;
}

/** Whether global setup started the real a and b (false only with the local skip switch, refused under CI). */
export const realPairAvailable = (): boolean => {
  const all = inject('supersets') as Record<string, unknown> | null;
  return Boolean(all?.a && all?.b);
};

export interface RealPairOptions {
  /**
   * Register the environments with an Admin account of the pair's own on a and b, whose password is
   * random (the instances' admin password is 'admin', a word too common to prove it leaks nowhere).
   */
  ownAccounts?: boolean;
}

export async function startRealPair(env: Record<string, string> = {}, opts: RealPairOptions = {}): Promise<RealPair> {
  const [sa, sb] = [superset('a'), superset('b')];
  const [h, source, target, a, b] = await Promise.all([
    createHarness({ worker: true, env }),
    startRecordingProxy(sa.baseUrl),
    startRecordingProxy(sb.baseUrl),
    client('a'),
    client('b'),
  ]);
  const accounts = opts.ownAccounts
    ? await Promise.all([a, b].map((c) => createUser(c, { username: uniquePrefix('svc'), password: randomBytes(12).toString('hex') })))
    : [sa, sb];
  const [sourceEnv, targetEnv] = await Promise.all(
    [source, target].map((proxy, k) =>
      createEnvironment(h, {
        baseUrl: proxy.baseUrl,
        username: accounts[k]!.username,
        password: accounts[k]!.password,
        timeoutSeconds: 60,
      }),
    ),
  );
  return {
    h,
    source,
    target,
    a,
    b,
    sourceEnv,
    targetEnv,
    passwords: accounts.map((x) => x.password),
    admin: ((method: string, p: string, opts: Record<string, unknown> = {}) =>
      h.request(method, p, { ...opts, token: h.adminToken })) as Harness['request'],
    async close() {
      await h.close();
      await Promise.all([source.close(), target.close()]);
    },
  };
}

export interface SeedOptions {
  /** The two charts of dashboard `i` as table charts whose saved query contexts ask these row limits (default: a table chart and a big number). */
  rowLimits?: (i: number) => [number, number] | undefined;
}

/**
 * Seeds `n` dashboards of two charts each, on one dataset of a SQLite database of their own, in
 * the real source `a` (names under a unique prefix: the instances are shared), and a database with
 * the same tables in `b`; answers their ids, titles and the database mapping a migration needs.
 */
export async function seedForMigration(pair: Pick<RealPair, 'a' | 'b'>, label: string, n: number, opts: SeedOptions = {}) {
  const p = uniquePrefix('rp');
  const dir = path.join(inject('runDir'), p);
  const tables = prefixedTables(p);
  const [sourceDb, targetDb] = await Promise.all([
    createSqliteDatabase(pair.a, { name: `${p} database`, path: path.join(dir, 'source.db'), tables }),
    createSqliteDatabase(pair.b, { name: `${p} warehouse`, path: path.join(dir, 'target.db'), tables }),
  ]);
  const dataset = await createDataset(pair.a, { database: sourceDb.id, tableName: `${p}_sales` });
  const ids: number[] = [];
  const titles: string[] = [];
  for (let i = 0; i < n; i++) {
    const charts = await seedCharts(pair.a, dataset.id, `${p} ${label} ${i}`, i, opts.rowLimits?.(i));
    const title = `${p} ${label} ${i}`;
    const d = await createDashboard(pair.a, { title, slug: `${p}-${i}`, charts });
    ids.push(d.id);
    titles.push(title);
  }
  return { ids, titles, mapping: [{ source_database_id: sourceDb.id, target_database_id: targetDb.id }] };
}

/**
 * Dashboard `i`'s two charts, one after the other (a's metadata is SQLite, where concurrent writes
 * wait on its lock). Each dashboard's queries differ from every other's (row limit, metric label):
 * the checks send a query asked twice only once (a twin), and counts here are of distinct queries.
 */
async function seedCharts(a: SupersetClient, datasetId: number, name: string, i: number, rowLimits?: [number, number]) {
  const columns = ['ds', 'region', 'units'];
  if (rowLimits) {
    const first = await createTableChart(a, { name: `${name} rows 0`, datasetId, columns, rowLimit: rowLimits[0] });
    return [first, await createTableChart(a, { name: `${name} rows 1`, datasetId, columns, rowLimit: rowLimits[1] })];
  }
  const rows = await createTableChart(a, { name: `${name} rows`, datasetId, columns, rowLimit: 100 + i });
  return [rows, await createBigNumberChart(a, { name: `${name} total`, datasetId, metric: sqlMetric('SUM(units)', `total ${i}`) })];
}

/** Seeds `n` dashboards (seedForMigration), lets `before` see their ids, and migrates them (migrateOnPair). */
export async function migrateSeeded(pair: RealPair, label: string, n: number, before?: (ids: number[]) => void, opts: SeedOptions = {}) {
  const { ids, mapping } = await seedForMigration(pair, label, n, opts);
  before?.(ids);
  return migrateOnPair(pair, ids, mapping);
}
