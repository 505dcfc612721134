/**
 * Superset's own example dashboards (`superset load-examples --only-metadata`: nine dashboards,
 * 103 charts, 21 datasets, no data) loaded into a running test instance through its venv's CLI
 * and its own config (SUPERSET_CONFIG_PATH in its data dir), so the metadata is that instance's.
 * The examples' database is the instance's `examples.db` (SQLALCHEMY_EXAMPLES_URI, see
 * instance.ts); `exampleTables` gives each dataset's table, empty, from the dataset's columns, so
 * every chart's query can run.
 */
import { spawn } from 'node:child_process';
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { venvBin } from './instance.ts';
import type { SqliteTable, SupersetClient } from './fixtures.ts';

export interface ExamplesInstance {
  version: string;
  dataDir: string;
}

/** Runs `superset load-examples --only-metadata` against the instance's metadata (about a minute). */
export async function loadExamples(instance: ExamplesInstance): Promise<void> {
  const bin = venvBin(instance.version);
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const k of ['PYTHONPATH', 'PYTHONHOME', 'SUPERSET_SECRET_KEY', 'FLASK_DEBUG', 'SUPERSET_ENV']) delete env[k];
  Object.assign(env, {
    PATH: `${bin}:${process.env.PATH ?? '/usr/bin:/bin'}`,
    VIRTUAL_ENV: join(bin, '..'),
    SUPERSET_CONFIG_PATH: join(instance.dataDir, 'superset_config.py'),
    SUPERSET_HOME: instance.dataDir,
    FLASK_APP: 'superset',
    PYTHONUNBUFFERED: '1',
  });
  const child = spawn(join(bin, 'python'), [join(bin, 'superset'), 'load-examples', '--only-metadata'], {
    cwd: instance.dataDir,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const chunks: Buffer[] = [];
  child.stdout.on('data', (b: Buffer) => chunks.push(b));
  child.stderr.on('data', (b: Buffer) => chunks.push(b));
  const code = await new Promise<number>((res, rej) => {
    child.once('error', rej);
    child.once('close', (c) => res(c ?? 1));
  });
  const out = Buffer.concat(chunks).toString();
  appendFileSync(join(instance.dataDir, 'init.log'), `\n===== superset load-examples --only-metadata (exit ${code}) =====\n${out}`);
  if (code !== 0) throw new Error(`superset load-examples --only-metadata failed with exit ${code}:\n${out.slice(-3000)}`);
}

export interface ExampleDataset {
  id: number;
  table_name: string;
  database: { id: number };
  columns: Array<{ column_name: string; type: string | null; expression: string | null }>;
}

/** The datasets of the examples' database, with their columns. */
export async function exampleDatasets(client: SupersetClient, databaseId: number): Promise<ExampleDataset[]> {
  const listed = await client.lists.all<{ id: number }>('dataset', {
    columns: ['id'],
    filters: [{ col: 'database', opr: 'rel_o_m', value: databaseId }],
  });
  const out: ExampleDataset[] = [];
  for (const d of listed) out.push((await client.request<{ result: ExampleDataset }>('GET', `/api/v1/dataset/${d.id}`)).result);
  return out;
}

/** Each dataset's table, empty, with its physical columns (calculated ones are Superset's, not the table's). */
export function exampleTables(datasets: ExampleDataset[]): SqliteTable[] {
  return datasets.map((d) => ({
    name: d.table_name,
    columns: Object.fromEntries(d.columns.filter((c) => !c.expression).map((c) => [c.column_name, c.type || 'TEXT'])),
    rows: [],
  }));
}

/** The examples as loaded into an instance: their database, the dashboards reading only it, and each dataset's table (empty). */
export interface ExamplesCorpus {
  database: { id: number };
  dashboards: Array<{ id: number; dashboard_title: string }>;
  tables: SqliteTable[];
}

/** The examples loaded into this instance (by loadExamples); `except` are dashboards that were there before (another file's). */
export async function examplesOf(client: SupersetClient, except: ReadonlySet<number> = new Set()): Promise<ExamplesCorpus> {
  const database = (await client.databases.list()).find((x) => x.database_name === 'examples');
  if (!database) throw new Error('no database named examples: were the examples loaded?');
  const dashboards: ExamplesCorpus['dashboards'] = [];
  for (const x of await client.lists.all<{ id: number; dashboard_title: string }>('dashboard', { columns: ['id', 'dashboard_title'] })) {
    if (except.has(x.id)) continue;
    const read = await client.dashboards.datasets(x.id);
    if (read.length && read.every((ds) => ds.database?.id === database.id)) dashboards.push(x);
  }
  return { database: { id: database.id }, dashboards, tables: exampleTables(await exampleDatasets(client, database.id)) };
}

/** A table without one of its columns (a chart reading it fails). */
export const withoutColumn = (t: SqliteTable, column: string): SqliteTable => ({
  ...t,
  columns: Object.fromEntries(Object.entries(t.columns).filter(([k]) => k !== column)),
});

/** A table with one column renamed. */
export const renamedColumn = (t: SqliteTable, column: string, to: string): SqliteTable => ({
  ...t,
  columns: Object.fromEntries(Object.entries(t.columns).map(([k, v]) => [k === column ? to : k, v])),
});

/**
 * The tables with `n` rows each, made from the columns' types (numbers, ISO timestamps, words),
 * distinct per row so a chart's groups and time grains have several values: for checks whose
 * answers are post-processed (Superset skips post-processing for a result without rows).
 */
export function withRows(tables: SqliteTable[], n = 3): SqliteTable[] {
  return tables.map((t) => ({ ...t, rows: Array.from({ length: n }, (_, i) => Object.values(t.columns).map((type) => valueOf(type, i))) }));
}

function valueOf(type: string, i: number): string | number {
  if (/INT|NUM|FLOAT|REAL|DOUBLE|DECIMAL|BOOL/i.test(type)) return /BOOL/i.test(type) ? i % 2 : i + 1;
  if (/DATE|TIME/i.test(type)) return `202${i}-0${(i % 9) + 1}-1${i % 10} 0${i % 10}:00:00`;
  return `v${i + 1}`;
}
