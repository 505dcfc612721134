// Smoke test of the Superset e2e harness: install (cached), start 6.1.0 and 6.0.0 side by side,
// build fixtures in both, check the dashboard list and chart data (through the client and with
// curl), then stop both.
//
//   npm exec -- node test/support/superset/smoke.ts [--versions 6.1.0,6.0.0] [--bulk 60] [--keep-data]
//
// With --uuid-seed S (default "smoke"; "" for random uuids) both instances get identical uuids.
// Data goes to .data/superset/smoke-<version> (wiped first unless --keep-data).
// Ends with a plain "N passed, N failed" line; exit code 1 on any failure.
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { encodeRison } from '../../../lib/superset/rison.ts';
import { REPO_ROOT, ensureSuperset, startSuperset } from './instance.ts';
import type { SupersetInstance } from './instance.ts';
import {
  buildStandardFixtures,
  chartData,
  listAll,
  listDashboards,
  login,
  bareAccessToken,
  queryContextFromParams,
  savedChartData,
  stableUuid,
} from './fixtures.ts';
import type { DashboardListItem, StandardFixtures, SupersetClient } from './fixtures.ts';

const { values } = parseArgs({
  options: {
    versions: { type: 'string', default: '6.1.0,6.0.0' },
    bulk: { type: 'string', default: '60' },
    'keep-data': { type: 'boolean', default: false },
    'uuid-seed': { type: 'string', default: 'smoke' },
  },
});
const versions = values.versions
  .split(',')
  .map((v) => v.trim())
  .filter(Boolean);
const bulk = Number(values.bulk);

let passed = 0;
let failed = 0;
function check(name: string, ok: boolean, detail = ''): void {
  if (ok) passed++;
  else failed++;
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${name}${detail ? ` — ${detail}` : ''}`);
}

function curlJson(url: string, args: string[] = []): unknown {
  const out = execFileSync('curl', ['-sS', '--fail-with-body', '-H', 'Accept: application/json', ...args, url], { encoding: 'utf8' });
  return JSON.parse(out);
}

async function verify(instance: SupersetInstance, client: SupersetClient, fx: StandardFixtures): Promise<void> {
  const v = instance.version;
  const expected = fx.dashboards.length + fx.bulkDashboards.length;

  // Listing through the client, every page.
  const all = await listAll<DashboardListItem>(client, 'dashboard', { orderColumn: 'dashboard_title', orderDirection: 'asc' });
  check(`${v}: dashboard list count`, all.length === expected, `${all.length} listed, ${expected} created`);
  const first = await listDashboards(client, { pageSize: 25 });
  check(`${v}: page size 25 honoured`, first.result.length === Math.min(25, expected) && first.count === expected);
  const overview = all.find((d) => d.id === fx.dashboards[0]!.id);
  check(
    `${v}: overview owners + changed_by`,
    !!overview && overview.owners?.length === 2 && overview.changed_by?.id === fx.users[0]!.id,
    `owners=${overview?.owners?.map((o) => o.id).join(',')} changed_by=${overview?.changed_by?.id}`,
  );
  if (values['uuid-seed']) {
    check(
      `${v}: deterministic uuids`,
      overview?.uuid === stableUuid(values['uuid-seed'], 'dashboard:sales-overview') && overview?.uuid === fx.dashboards[0]!.uuid,
      String(overview?.uuid),
    );
  }

  // Listing with curl + bearer token (GET needs no CSRF).
  const token = await bareAccessToken(instance.baseUrl, instance.username, instance.password);
  const q = encodeURIComponent(encodeRison({ page_size: 100, columns: ['id', 'dashboard_title', 'slug'] }));
  const curlList = curlJson(`${instance.baseUrl}/api/v1/dashboard/?q=${q}`, ['-H', `Authorization: Bearer ${token}`]) as {
    count: number;
    result: { slug: string | null }[];
  };
  check(
    `${v}: curl GET /api/v1/dashboard/`,
    curlList.count === expected && curlList.result.some((d) => d.slug === fx.dashboards[0]!.slug),
    `count=${curlList.count}`,
  );

  // Dashboard detail: position_json links the charts.
  const detail = await client.getDashboard(fx.dashboards[0]!.id);
  const positions = JSON.parse(detail.position_json ?? '{}') as Record<
    string,
    { type?: string; meta?: { chartId?: number; uuid?: string } }
  >;
  const placed = Object.values(positions).filter((n) => n?.type === 'CHART');
  check(
    `${v}: position_json has the charts with uuids`,
    placed.length === fx.dashboards[0]!.chartIds.length && placed.every((n) => typeof n.meta?.uuid === 'string'),
    `${placed.length} CHART nodes`,
  );
  const charts = await client.getDashboardCharts(fx.dashboards[0]!.id);
  check(`${v}: /dashboard/{id}/charts`, charts.length === fx.dashboards[0]!.chartIds.length);

  // Chart data: POST /api/v1/chart/data for every chart (client), saved query context (GET), curl.
  for (const chart of fx.charts) {
    const res = await chartData(client, queryContextFromParams(chart.datasetId, chart.params, 10));
    const r = res.result[0]!;
    check(
      `${v}: POST /api/v1/chart/data "${chart.name}"`,
      r.rowcount > 0 && r.data.length > 0,
      `${r.rowcount} rows, cols ${r.colnames.join(',')}`,
    );
    const saved = await savedChartData(client, chart.id);
    check(`${v}: GET /api/v1/chart/${chart.id}/data/`, saved.result[0]!.rowcount > 0, `${saved.result[0]!.rowcount} rows`);
  }
  const table = fx.charts[0]!;
  const curlData = curlJson(`${instance.baseUrl}/api/v1/chart/data`, [
    '-X',
    'POST',
    '-H',
    `Authorization: Bearer ${token}`,
    '-H',
    'Content-Type: application/json',
    '--data',
    JSON.stringify(queryContextFromParams(table.datasetId, table.params, 5)),
  ]) as { result: { rowcount: number; data: unknown[] }[] };
  check(`${v}: curl POST /api/v1/chart/data`, curlData.result[0]!.data.length === 5, `${curlData.result[0]!.rowcount} rows`);

  // Export works (zip magic).
  const zip = await client.exportDashboards([fx.dashboards[0]!.id]);
  check(`${v}: dashboard export`, zip[0] === 0x50 && zip[1] === 0x4b, `${zip.length} bytes`);
}

const started = Date.now();
const tSetup = Date.now();
await ensureSuperset(versions);
console.log(`setup (cached check or install) of ${versions.join(', ')}: ${Date.now() - tSetup} ms`);

const instances: SupersetInstance[] = [];
try {
  const starts = await Promise.all(
    versions.map((version) =>
      startSuperset({ version, dataDir: join(REPO_ROOT, '.data/superset', `smoke-${version}`), fresh: !values['keep-data'] }),
    ),
  );
  instances.push(...starts);
  for (const s of instances) {
    console.log(`${s.version}: ${s.baseUrl} pid ${s.pid} initialized=${s.initialized} timings=${JSON.stringify(s.timings)}`);
  }
  check('distinct ports', new Set(instances.map((s) => s.port)).size === instances.length);

  await Promise.all(
    instances.map(async (s) => {
      const client = await login(s.baseUrl, s.username, s.password);
      const existing = await listDashboards(client, { pageSize: 1 });
      if (existing.count > 0) {
        console.log(`${s.version}: data dir already has fixtures (--keep-data); skipping build and checks of counts`);
        return;
      }
      const t = Date.now();
      const fx = await buildStandardFixtures(client, {
        dataDir: s.dataDir,
        adminUsername: s.username,
        bulkDashboards: bulk,
        uuidSeed: values['uuid-seed'] || undefined,
      });
      console.log(
        `${s.version}: fixtures built in ${Date.now() - t} ms (${fx.dashboards.length}+${fx.bulkDashboards.length} dashboards, ${fx.charts.length} charts)`,
      );
      await verify(s, client, fx);
      console.log(`${s.version}: RSS of the server process group: ${s.memoryMb()} MiB`);
    }),
  );
} catch (err) {
  failed++;
  console.error('FAIL', err);
} finally {
  const t = Date.now();
  await Promise.all(instances.map((s) => s.stop()));
  console.log(`stopped ${instances.length} instance(s) in ${Date.now() - t} ms; total ${Math.round((Date.now() - started) / 1000)} s`);
}

console.log(`${passed} passed, ${failed} failed`);
process.exitCode = failed ? 1 : 0;
