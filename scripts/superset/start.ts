// Start a local Apache Superset for humans and keep it running until Ctrl-C.
//
//   npm exec -- node scripts/superset/start.ts --version 6.1.0 --port 8088 --data .data/superset/dev
//
// Options:
//   --version V      apache-superset version (default 6.1.0); installed into .tools/superset/V
//   --port N         port on 127.0.0.1 (default: a free one)
//   --data DIR       data dir: metadata DB, config, logs (default .data/superset/dev-V)
//   --user NAME      admin username (default admin)
//   --password PW    admin password (default admin)
//   --fixtures       build the standard fixtures (database, datasets, charts, dashboards, users)
//                    unless this data dir already has them
//   --fresh          wipe the data dir first
import { parseArgs } from 'node:util';
import { detached } from '../../lib/detached.ts';
import { startSuperset } from '../../test/support/superset/instance.ts';
import { buildStandardFixtures, login, listDashboards } from '../../test/support/superset/fixtures.ts';

const { values } = parseArgs({
  options: {
    version: { type: 'string', default: '6.1.0' },
    port: { type: 'string' },
    data: { type: 'string' },
    user: { type: 'string', default: 'admin' },
    password: { type: 'string', default: 'admin' },
    fixtures: { type: 'boolean', default: false },
    fresh: { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  },
});

if (values.help) {
  console.log(
    'usage: node scripts/superset/start.ts [--version 6.1.0] [--port 8088] [--data DIR] [--user admin] [--password admin] [--fixtures] [--fresh]',
  );
  process.exit(0);
}

const version = values.version;
const instance = await startSuperset({
  version,
  port: values.port ? Number(values.port) : undefined,
  dataDir: values.data ?? `.data/superset/dev-${version}`,
  adminUsername: values.user,
  adminPassword: values.password,
  fresh: values.fresh,
});

let stopping = false;
const shutdown = async (signal: string): Promise<void> => {
  if (stopping) return;
  stopping = true;
  console.log(`\n${signal}: stopping Superset ${version} ...`);
  await instance.stop();
  process.exit(0);
};
// Detached: a signal or exit handler cannot be awaited; a failed stop is logged (the process then stays until killed).
process.on('SIGINT', () => detached('stopping', shutdown('SIGINT'), console));
process.on('SIGTERM', () => detached('stopping', shutdown('SIGTERM'), console));

try {
  if (values.fixtures) {
    const client = await login(instance.baseUrl, instance.username, instance.password);
    const existing = await listDashboards(client, { pageSize: 1 });
    if (existing.count === 0) {
      const fx = await buildStandardFixtures(client, { dataDir: instance.dataDir, adminUsername: instance.username });
      console.log(
        `fixtures: ${fx.dashboards.length} dashboards, ${fx.charts.length} charts, users ${fx.users.map((u) => u.username).join(', ')}`,
      );
    } else {
      console.log(`fixtures: data dir already has ${existing.count} dashboards, not adding more`);
    }
  }
} catch (err) {
  console.error(err);
  await instance.stop();
  process.exit(1);
}

console.log(`
Superset ${instance.version} is running.
  URL:      ${instance.baseUrl}/
  login:    ${instance.username} / ${instance.password}
  data dir: ${instance.dataDir}
  log:      ${instance.logFile}
  timings:  ${JSON.stringify(instance.timings)}
Press Ctrl-C to stop.`);

// Keep the event loop alive until a signal arrives.
setInterval(() => {}, 1 << 30);
