// Fixtures for dataset tasks in a real Superset: a SQLite database holding a sales table (unique
// name per test, since SQLite metadata keeps table names unique) and a `column_dictionary` table,
// a curated dataset on it (a description a person wrote, labels, formats, flags, an extra
// metric), a chart and a dashboard using it. And a way to compare datasets field by field.
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import {
  createDashboard,
  createDataset,
  createSqliteDatabase,
  createTableChart,
  type SqliteTable,
  type SupersetClient,
} from './superset/fixtures.ts';

export interface CuratedDataset {
  id: number;
  tableName: string;
  databaseId: number;
  dashboardId: number;
  chartId: number;
}

/** The dictionary both sources carry: three columns of the sales table, and one it does not have. */
export const DICTIONARY = [
  { column_name: 'REGION', verbose_name: 'Region', description: 'Sales region (EMEA, NA, APAC, LATAM)' },
  { column_name: 'units', verbose_name: 'Units sold', description: 'Number of units sold that day' },
  { column_name: ' revenue ', verbose_name: 'Revenue', description: 'Revenue in EUR, from the dictionary' },
  { column_name: 'discount', verbose_name: 'Discount', description: 'Not a column of the dataset' },
];

/** What a person wrote into the dataset before any task ran. */
export const HUMAN = {
  revenueDescription: 'Gross revenue in EUR, written by a person',
  datasetDescription: 'Sales by day, curated by hand',
};

function tables(table: string): SqliteTable[] {
  const rows: Array<Array<string | number>> = [];
  for (let i = 0; i < 12; i++)
    rows.push([
      `2025-01-${String(i + 1).padStart(2, '0')}`,
      ['EMEA', 'NA', 'APAC'][i % 3]!,
      ['widget', 'gadget'][i % 2]!,
      i + 1,
      (i + 1) * 9.5,
    ]);
  return [
    { name: table, columns: { ds: 'DATE', region: 'TEXT', product: 'TEXT', units: 'INTEGER', revenue: 'REAL' }, rows },
    {
      name: 'column_dictionary',
      columns: { column_name: 'TEXT', verbose_name: 'TEXT', description: 'TEXT' },
      rows: DICTIONARY.map((d) => [d.column_name, d.verbose_name, d.description]),
    },
  ];
}

const STRIP = new Set(['changed_on', 'created_on', 'type_generic']);
const strip = (o: Record<string, unknown>) => Object.fromEntries(Object.entries(o).filter(([k]) => !STRIP.has(k)));

/** Updates a dataset as a person would in Superset's editor: full lists, one field changed. */
export async function editDataset(
  client: SupersetClient,
  id: number,
  edit: (d: { columns: Array<Record<string, any>>; metrics: Array<Record<string, any>>; top: Record<string, unknown> }) => void,
): Promise<void> {
  const d = (await client.request<{ result: any }>('GET', `/api/v1/dataset/${id}`)).result;
  const body = { columns: d.columns.map(strip), metrics: d.metrics.map(strip), top: {} as Record<string, unknown> };
  edit(body);
  await client.request('PUT', `/api/v1/dataset/${id}`, { json: { columns: body.columns, metrics: body.metrics, ...body.top } });
}

export async function createCuratedDataset(client: SupersetClient, opts: { prefix: string; dataDir: string }): Promise<CuratedDataset> {
  const tableName = `${opts.prefix}_sales`;
  const db = await createSqliteDatabase(client, {
    name: `${opts.prefix}_analytics`,
    path: join(opts.dataDir, 'fixture-data', `${opts.prefix}.sqlite`),
    tables: tables(tableName),
  });
  const ds = await createDataset(client, { database: db.id, tableName });
  await editDataset(client, ds.id, ({ columns, metrics, top }) => {
    const col = (n: string) => columns.find((c) => c.column_name === n)!;
    col('revenue').description = HUMAN.revenueDescription;
    col('ds').python_date_format = '%Y-%m-%d';
    col('ds').verbose_name = 'Day';
    col('product').filterable = false;
    col('product').groupby = false;
    col('units').expression = null;
    metrics.push({
      metric_name: 'total_revenue',
      expression: 'SUM(revenue)',
      verbose_name: 'Total revenue',
      d3format: ',.2f',
      description: 'Sum of revenue',
    });
    top.description = HUMAN.datasetDescription;
    top.cache_timeout = 600;
    top.fetch_values_predicate = "region <> 'TEST'";
  });
  const chart = await createTableChart(client, { name: `${opts.prefix} rows`, datasetId: ds.id, columns: ['region', 'units'] });
  const dash = await createDashboard(client, {
    title: `${opts.prefix} sales`,
    charts: [{ id: chart.id, name: chart.name, uuid: chart.uuid }],
  });
  return { id: ds.id, tableName, databaseId: db.id, dashboardId: dash.id, chartId: chart.id };
}

export async function readDataset(client: SupersetClient, id: number): Promise<any> {
  return (await client.request<{ result: any }>('GET', `/api/v1/dataset/${id}`)).result;
}

const VOLATILE = new Set([
  'changed_on',
  'changed_on_humanized',
  'changed_by',
  'created_on',
  'created_on_humanized',
  'created_by',
  'verbose_map',
  'order_by_choices',
  'granularity_sqla',
  'time_grain_sqla',
  'column_formats',
  'select_star',
]);

/** A dataset as compared in tests: timestamps and the views Superset derives from the columns left out, lists by id. */
export function comparable(d: any): any {
  const top = Object.fromEntries(Object.entries(d).filter(([k]) => !VOLATILE.has(k)));
  const item = (o: any) => Object.fromEntries(Object.entries(o).filter(([k]) => k !== 'changed_on' && k !== 'created_on'));
  return {
    ...top,
    columns: [...d.columns].sort((a: any, b: any) => a.id - b.id).map(item),
    metrics: [...d.metrics].sort((a: any, b: any) => a.id - b.id).map(item),
  };
}

/** `before` with column fields set as given: what the dataset must equal after a write of exactly these. */
export function expectedAfter(
  before: any,
  set: Record<string, Partial<Record<'verbose_name' | 'description', string | null>>>,
  top: Record<string, unknown> = {},
): any {
  const out = structuredClone(comparable(before));
  for (const c of out.columns) Object.assign(c, set[c.column_name] ?? {});
  Object.assign(out, top);
  return out;
}

/** An .xlsx workbook of the dictionary (header row, optional table column). */
export async function dictionaryWorkbook(
  rows: Array<Record<string, string | null>>,
  headers = ['column_name', 'verbose_name', 'description'],
): Promise<Buffer> {
  const wb = new ExcelJS.Workbook();
  const ws = wb.addWorksheet('Dictionary');
  ws.addRow(headers);
  for (const r of rows) ws.addRow(headers.map((h) => r[h] ?? null));
  return Buffer.from(await wb.xlsx.writeBuffer());
}
