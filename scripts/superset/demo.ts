// `npm run superset:demo`: two real Apache Superset 6.1.0 instances for a person to try Switchyard
// on (docs/walk-through.md), installed and started the way the tests start theirs
// (test/support/superset/): "dev" holding the sample dashboards of the test fixtures (Sales
// overview, Customers, Empty on a SQLite database `analytics`), "prod" holding only a database
// `analytics` with the same tables, so a migration has somewhere to go. Prints their URLs,
// logins and database ids, and keeps both running until Ctrl-C.
//
//   npm run superset:demo [-- --fresh] [-- --dev-port 8088 --prod-port 8089 --data .data/superset-demo]
//
// SUPERSET_DEMO_DEV_PORT, SUPERSET_DEMO_PROD_PORT and SUPERSET_DEMO_DATA set the same defaults
// (the walk-through's test runs the documented command on free ports and a data dir of its own).
// A second start reuses the data dirs: nothing is added twice.
import path from 'node:path';
import { parseArgs } from 'node:util';
import { PROJECT_ROOT } from '../../lib/config.ts';
import { detached } from '../../lib/detached.ts';
import { startSuperset, type SupersetInstance } from '../../test/support/superset/instance.ts';
import { COMPANION_FLAGS } from '../../test/support/superset/test-instances.ts';
import {
  buildStandardFixtures,
  createSqliteDatabase,
  listAll,
  listDashboards,
  login,
  type SupersetClient,
} from '../../test/support/superset/fixtures.ts';

const VERSION = '6.1.0';
const DATABASE = 'analytics';

const { values } = parseArgs({
  options: {
    'dev-port': { type: 'string', default: process.env.SUPERSET_DEMO_DEV_PORT || '8088' },
    'prod-port': { type: 'string', default: process.env.SUPERSET_DEMO_PROD_PORT || '8089' },
    data: { type: 'string', default: process.env.SUPERSET_DEMO_DATA || path.join(PROJECT_ROOT, '.data/superset-demo') },
    fresh: { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  },
});

if (values.help) {
  console.log('usage: npm run superset:demo [-- --dev-port 8088] [--prod-port 8089] [--data .data/superset-demo] [--fresh]');
  process.exit(0);
}

interface Side {
  name: 'dev' | 'prod';
  instance: SupersetInstance;
  dashboards: string[];
  databaseId: number;
}

/** One instance on its fixed port, two single-threaded workers as the tests run them (see test-instances.ts). */
function start(name: string, port: string): Promise<SupersetInstance> {
  return startSuperset({
    version: VERSION,
    port: Number(port),
    dataDir: path.join(values.data, name),
    fresh: values.fresh,
    featureFlags: COMPANION_FLAGS,
    workers: 2,
    threads: 1,
    log: (m) => console.error(`${name}: ${m}`),
  });
}

/** The id of the database named `analytics`, if this instance has one. */
async function databaseId(client: SupersetClient): Promise<number | undefined> {
  const dbs = await listAll<{ id: number; database_name: string }>(client, 'database');
  return dbs.find((d) => d.database_name === DATABASE)?.id;
}

/** dev: the test fixtures' dashboards, built once per data dir. */
async function seedDev(instance: SupersetInstance): Promise<Side> {
  const client = await login(instance.baseUrl, instance.username, instance.password);
  if ((await listDashboards(client, { pageSize: 1 })).count === 0) {
    await buildStandardFixtures(client, { dataDir: instance.dataDir, adminUsername: instance.username });
  }
  const dashboards = await listAll<{ id: number; dashboard_title: string }>(client, 'dashboard');
  dashboards.sort((a, b) => a.id - b.id);
  const id = await databaseId(client);
  if (id === undefined) throw new Error(`dev has dashboards but no database '${DATABASE}': start again with --fresh`);
  return { name: 'dev', instance, dashboards: dashboards.map((d) => d.dashboard_title), databaseId: id };
}

/** prod: the same tables in a file of its own, registered as `analytics`; no dashboards. */
async function seedProd(instance: SupersetInstance): Promise<Side> {
  const client = await login(instance.baseUrl, instance.username, instance.password);
  const id =
    (await databaseId(client)) ??
    (await createSqliteDatabase(client, { name: DATABASE, path: path.join(instance.dataDir, 'fixture-data', 'analytics.sqlite') })).id;
  const dashboards = await listAll<{ id: number; dashboard_title: string }>(client, 'dashboard');
  dashboards.sort((a, b) => a.id - b.id);
  return { name: 'prod', instance, dashboards: dashboards.map((d) => d.dashboard_title), databaseId: id };
}

function describe(side: Side): string {
  const { instance: i } = side;
  const held = side.dashboards.length ? `${side.dashboards.length} dashboards (${side.dashboards.join(', ')})` : 'no dashboards';
  return `  ${side.name.padEnd(5)} ${i.baseUrl}/  login ${i.username} / ${i.password}  ${held}, database '${DATABASE}' id ${side.databaseId}`;
}

async function main(): Promise<void> {
  const started = await Promise.allSettled([start('dev', values['dev-port']), start('prod', values['prod-port'])]);
  const running = started.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  const stopAll = () => Promise.all(running.map((i) => i.stop()));
  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`${signal}: stopping both Supersets`);
    detached(
      'stopping both Supersets',
      stopAll().then(() => process.exit(0)),
      console,
    );
  };
  // Detached: a signal or exit handler cannot be awaited; a failed stop is logged (the process then stays until killed).
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  try {
    const failed = started.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
    const [dev, prod] = await Promise.all([seedDev(running[0]!), seedProd(running[1]!)]);
    console.log(
      [
        `Two Supersets ${VERSION} are running (Ctrl-C stops both):`,
        describe(dev),
        describe(prod),
        `  data and logs under ${values.data}`,
        `Map dev's database to prod's in a migration with --map ${dev.databaseId}:${prod.databaseId}`,
      ].join('\n'),
    );
  } catch (err) {
    console.error(err);
    await stopAll();
    process.exit(1);
  }
  // Keep the event loop alive until a signal arrives.
  setInterval(() => {}, 1 << 30);
}

await main();
