import os from 'node:os';
import path from 'node:path';
import fs from 'node:fs';
import { PROJECT_ROOT } from '../lib/config.ts';
import { SupersetClient } from '../lib/superset/client.ts';
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
import { median, numberArg, stopOnInterrupt } from './support.ts';

/**
 * What a rerun's reads cost Superset per call and per dashboard, measured one after another on a
 * real Superset 6.1.0 (one gunicorn worker, as the other benches run it): the reads a rerun's
 * batch makes of each side (contracts/migration-batching.ts RERUN_BATCH) for a narrow batch of 16
 * dashboards and a wide one of 64, through the client calls the engine makes (the export, the
 * companions' list reads `meta.listed` of dashboards, charts and datasets, each dashboard's
 * embedded configuration). Usage: npm run bench:superset-reads [-- --rounds 5]
 * Ends with one JSON line: per read, the median ms for 16 and for 64 dashboards (`reads`), and
 * what four narrow batches' reads cost against one wide batch's (`narrow_x4_ms`, `wide_ms`).
 */
const R = Math.max(1, numberArg('rounds', 5));
const WIDE = 64;
const NARROW = 16;

/** 2 × WIDE dashboards of two charts each on one SQLite dataset (each round reads another half). */
async function makeFixtures(dir: string, sa: Awaited<ReturnType<typeof startSuperset>>) {
  const a = await login(sa.baseUrl, sa.username, sa.password);
  const db = await createSqliteDatabase(a, { name: 'bench_reads', path: path.join(dir, 'reads.db') });
  const ds = await createDataset(a, { database: db.id, tableName: 'sales' });
  const dashboards: Array<{ id: number; charts: number[] }> = [];
  for (let i = 0; i < 2 * WIDE; i++) {
    const t = await createTableChart(a, { name: `rows ${i}`, datasetId: ds.id, columns: ['ds', 'region', 'units'] });
    const g = await createBigNumberChart(a, { name: `total ${i}`, datasetId: ds.id, metric: sqlMetric('SUM(units)', 'units') });
    dashboards.push({ id: (await createDashboard(a, { title: `reads ${i}`, charts: [t, g] })).id, charts: [t.id, g.id] });
  }
  a.close();
  return { dashboards, datasetId: ds.id };
}

type Reads = Record<string, (ids: number[], charts: number[]) => Promise<unknown>>;

function readsOf(c: SupersetClient, datasetId: number): Reads {
  return {
    export: (ids) => c.exportDashboards(ids),
    'dashboard list': (ids) => c.meta.listed('dashboard', ids),
    'chart list': (_, charts) => c.meta.listed('chart', charts),
    'dataset list': () => c.meta.listed('dataset', [datasetId]),
    // 8 at a time, as gunicorn's threads take them
    'embedded, one a dashboard': async (ids) => {
      for (let i = 0; i < ids.length; i += 8) await Promise.all(ids.slice(i, i + 8).map((id) => c.embedded.get(id)));
    },
  };
}

async function main() {
  const load = os.loadavg()[0]!;
  const dir = path.join(PROJECT_ROOT, '.data', 'bench-superset-reads');
  fs.rmSync(dir, { recursive: true, force: true });
  const sa = await startSuperset({ version: '6.1.0', dataDir: path.join(dir, 'superset'), fresh: true, log: () => {} });
  const stop = stopOnInterrupt(() => sa.stop());
  try {
    const fx = await makeFixtures(dir, sa);
    const c = new SupersetClient({ baseUrl: sa.baseUrl, username: sa.username, password: sa.password });
    const reads = readsOf(c, fx.datasetId);
    const times: Record<string, { [n: number]: number[] }> = {};
    for (let r = -1; r < R; r++) {
      // Round -1 warms the process up (first calls of a kind cost more); not counted.
      const half = fx.dashboards.slice((Math.max(r, 0) % 2) * WIDE, (Math.max(r, 0) % 2) * WIDE + WIDE);
      for (const n of [NARROW, WIDE]) {
        const part = half.slice(0, n);
        for (const [name, read] of Object.entries(reads)) {
          const t0 = performance.now();
          await read(
            part.map((d) => d.id),
            part.flatMap((d) => d.charts),
          );
          if (r >= 0) ((times[name] ??= {})[n] ??= []).push(performance.now() - t0);
        }
      }
    }
    c.close();
    const out: Record<string, Record<string, number>> = Object.fromEntries(
      Object.entries(times).map(([name, t]) => [
        name,
        { [`ms_${NARROW}`]: Math.round(median(t[NARROW]!)), [`ms_${WIDE}`]: Math.round(median(t[WIDE]!)) },
      ]),
    );
    for (const [name, t] of Object.entries(out))
      console.log(
        `  ${name.padEnd(28)} ${String(t[`ms_${NARROW}`]).padStart(6)} ms for ${NARROW}  ${String(t[`ms_${WIDE}`]).padStart(6)} ms for ${WIDE}`,
      );
    const sum = (n: number) => Object.values(out).reduce((s, t) => s + t[`ms_${n}`]!, 0);
    const figures = {
      bench: 'superset-reads',
      rounds: R,
      reads: out,
      narrow_x4_ms: (WIDE / NARROW) * sum(NARROW),
      wide_ms: sum(WIDE),
      load: [load, os.loadavg()[0]!],
    };
    console.log(`  ${WIDE} dashboards' reads: ${figures.narrow_x4_ms} ms in batches of ${NARROW}, ${figures.wide_ms} ms in one batch`);
    console.log(JSON.stringify(figures));
  } finally {
    await stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
