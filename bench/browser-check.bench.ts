import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { judgeRendered } from '../contracts/browser-check.ts';
import { chromiumPool } from '../lib/browser-check/chromium.ts';
import { renderDashboard } from '../lib/browser-check/render.ts';
import { PROJECT_ROOT } from '../lib/config.ts';
import {
  createBigNumberChart,
  createDashboard,
  createDataset,
  createSqliteDatabase,
  createTableChart,
  login,
  sqlMetric,
} from '../test/support/superset/fixtures.ts';
import { startSuperset } from '../test/support/superset/instance.ts';
import { numberArg, stopOnInterrupt } from './support.ts';

/**
 * The browser check's cost per dashboard (`verification: "browser"`): N dashboards of three charts
 * each, opened in headless Chromium (Debian's, BROWSER_CHECK_CHROMIUM) in a real 6.0.0 target and
 * beside it in a real 6.1.0 source, each side signed in through Superset's login page, every chart
 * waited for, a full-page screenshot taken: what the check's activity does per dashboard, without
 * the task around it. Pages open at once: --pages (1 or 2, BROWSER_CHECK_PAGES).
 * Usage: npm run bench:browser-check [-- --dashboards 5] [-- --pages 2]
 * Ends with one JSON line.
 */
const N = numberArg('dashboards', 5);
const PAGES = numberArg('pages', 1);
const BUDGET_MS = 90_000;

type Superset = Awaited<ReturnType<typeof startSuperset>>;

/** N dashboards of a table, a big number and a chart whose metric names no column (an error on both sides). */
async function makeDashboards(s: Superset, dir: string, name: string): Promise<number[]> {
  const c = await login(s.baseUrl, s.username, s.password);
  const db = await createSqliteDatabase(c, { name: `bench_${name}`, path: path.join(dir, `${name}.db`) });
  const ds = await createDataset(c, { database: db.id, tableName: 'sales' });
  const ids: number[] = [];
  for (let i = 0; i < N; i++) {
    const rows = await createTableChart(c, { name: `bench rows ${i}`, datasetId: ds.id, columns: ['ds', 'region', 'units'] });
    const total = await createBigNumberChart(c, { name: `bench total ${i}`, datasetId: ds.id, metric: sqlMetric('SUM(units)', 'units') });
    const broken = await createBigNumberChart(c, {
      name: `bench broken ${i}`,
      datasetId: ds.id,
      metric: sqlMetric('SUM(no_such_column)', 'x'),
    });
    ids.push((await createDashboard(c, { title: `bench ${i}`, slug: `bench-${i}`, charts: [rows, total, broken] })).id);
  }
  c.close();
  return ids;
}

async function main() {
  const dir = path.join(PROJECT_ROOT, '.data', 'bench-browser-check');
  fs.rmSync(dir, { recursive: true, force: true });
  const quiet = () => {};
  const [source, target] = await Promise.all([
    startSuperset({ version: '6.1.0', dataDir: path.join(dir, 'superset-source'), fresh: true, log: quiet }),
    startSuperset({ version: '6.0.0', dataDir: path.join(dir, 'superset-target'), fresh: true, log: quiet }),
  ]);
  const stop = stopOnInterrupt(() => Promise.all([source.stop(), target.stop()]));
  const pool = chromiumPool({ executablePath: process.env.BROWSER_CHECK_CHROMIUM ?? '/usr/bin/chromium', pages: PAGES });
  try {
    const [sourceIds, targetIds] = await Promise.all([makeDashboards(source, dir, 'source'), makeDashboards(target, dir, 'target')]);
    const side = (s: Superset, dashboardId: number) => renderDashboard(pool, { ...s, dashboardId }, BUDGET_MS);
    const started = Date.now();
    let passed = 0;
    await Promise.all(
      // All queued at once, as the activity does: the pool opens PAGES pages at a time.
      targetIds.map(async (id, i) => {
        const [t, s] = await Promise.all([side(target, id), side(source, sourceIds[i]!)]);
        const verdict = judgeRendered(t.charts, s.charts).verdict;
        if (verdict === 'passes') passed++;
        console.log(
          `dashboard ${i + 1}/${N}: ${verdict}, ${t.charts.length} charts, done ${((Date.now() - started) / 1000).toFixed(1)} s into the run`,
        );
      }),
    );
    const wall = (Date.now() - started) / 1000;
    const perDashboard = wall / N;
    console.log(
      `browser check: ${N} dashboards in ${wall.toFixed(1)} s, ${perDashboard.toFixed(2)} s per dashboard (wall, ${PAGES} page(s)); ${passed}/${N} pass`,
    );
    const load = os.loadavg()[0];
    console.log(`load average ${load.toFixed(1)} on ${os.cpus().length} cores (others' work counts too)`);
    console.log(
      JSON.stringify({
        bench: 'browser-check',
        dashboards: N,
        pages: PAGES,
        seconds: Number(wall.toFixed(2)),
        seconds_per_dashboard: Number(perDashboard.toFixed(2)),
        passed,
        load: Number(load.toFixed(1)),
      }),
    );
  } finally {
    await pool.close();
    await stop();
  }
}

await main();
