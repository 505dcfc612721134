// A dashboard to review in a real Superset: a SQLite table of orders, a virtual dataset whose SQL
// reads `filter_values('region')` and `url_param('product')`, two charts on it, and a dashboard
// with two native filters (region, product) — plus a permalink holding two filter values.
import { join } from 'node:path';
import {
  createDashboard,
  createDataset,
  createSqliteDatabase,
  createTableChart,
  type SupersetClient,
} from '../support/superset/fixtures.ts';

export interface ReviewFixture {
  tableName: string;
  slug: string;
  /** The SQLite file holding the table. */
  dbPath: string;
  /** With `secondDataset`: a physical dataset on the table, with a chart on the dashboard. */
  secondDatasetId: number | null;
  databaseId: number;
  datasetId: number;
  chartId: number;
  spareChartId: number;
  dashboardId: number;
  permalinkKey: string;
  permalinkUrl: string;
}

export const FILTER_REGION = 'NATIVE_FILTER-region';
export const FILTER_PRODUCT = 'NATIVE_FILTER-product';

export const DATASET_SQL = (table: string) =>
  [
    `SELECT region, product, units FROM ${table} WHERE 1 = 1`,
    "{% if filter_values('region') %} AND region IN {{ filter_values('region')|where_in }}{% endif %}",
    "{% if url_param('product') %} AND product = '{{ url_param('product') }}'{% endif %}",
  ].join('\n');

function nativeFilter(id: string, name: string, column: string, datasetId: number) {
  return {
    id,
    name,
    type: 'NATIVE_FILTER',
    filterType: 'filter_select',
    targets: [{ datasetId, column: { name: column } }],
    defaultDataMask: { extraFormData: {}, filterState: {}, ownState: {} },
    controlValues: { multiSelect: true, enableEmptyFilter: false },
    cascadeParentIds: [],
    scope: { rootPath: ['ROOT_ID'], excluded: [] },
    chartsInScope: [],
  };
}

function mask(id: string, column: string, values: string[]) {
  return {
    id,
    extraFormData: { filters: [{ col: column, op: 'IN', val: values }] },
    filterState: { value: values, label: values.join(', ') },
    ownState: {},
  };
}

export async function createReviewFixture(
  client: SupersetClient,
  opts: { prefix: string; dataDir: string; baseUrl: string; secondDataset?: boolean },
): Promise<ReviewFixture> {
  const tableName = `${opts.prefix}_orders`;
  const rows: Array<Array<string | number>> = [];
  for (let i = 0; i < 12; i++) rows.push([['EMEA', 'NA', 'APAC'][i % 3]!, ['widget', 'gadget'][i % 2]!, i + 1]);
  const db = await createSqliteDatabase(client, {
    name: `${opts.prefix}_shop`,
    path: join(opts.dataDir, 'fixture-data', `${opts.prefix}.sqlite`),
    tables: [{ name: tableName, columns: { region: 'TEXT', product: 'TEXT', units: 'INTEGER' }, rows }],
  });
  const ds = await createDataset(client, { database: db.id, tableName: `${opts.prefix}_orders_view`, sql: DATASET_SQL(tableName) });
  const chart = await createTableChart(client, { name: `${opts.prefix} orders`, datasetId: ds.id, columns: ['region', 'units'] });
  const spare = await createTableChart(client, { name: `${opts.prefix} products`, datasetId: ds.id, columns: ['product', 'units'] });
  const second = opts.secondDataset ? await createDataset(client, { database: db.id, tableName }) : null;
  const secondChart = second
    ? await createTableChart(client, { name: `${opts.prefix} raw`, datasetId: second.id, columns: ['region', 'product'] })
    : null;
  const dash = await createDashboard(client, {
    title: `${opts.prefix} orders`,
    slug: `${opts.prefix}-orders`,
    charts: [
      { id: chart.id, name: chart.name, uuid: chart.uuid },
      { id: spare.id, name: spare.name, uuid: spare.uuid },
      ...(secondChart ? [{ id: secondChart.id, name: secondChart.name, uuid: secondChart.uuid }] : []),
    ],
    jsonMetadata: {
      native_filter_configuration: [
        nativeFilter(FILTER_REGION, 'Region', 'region', ds.id),
        nativeFilter(FILTER_PRODUCT, 'Product', 'product', ds.id),
      ],
    },
  });
  const link = await client.request<{ key: string; url: string }>('POST', `/api/v1/dashboard/${dash.id}/permalink`, {
    json: {
      dataMask: {
        [FILTER_REGION]: mask(FILTER_REGION, 'region', ['EMEA', 'NA']),
        [FILTER_PRODUCT]: mask(FILTER_PRODUCT, 'product', ['widget']),
      },
      activeTabs: [],
      urlParams: [],
    },
  });
  return {
    tableName,
    slug: `${opts.prefix}-orders`,
    dbPath: db.path,
    secondDatasetId: second?.id ?? null,
    databaseId: db.id,
    datasetId: ds.id,
    chartId: chart.id,
    spareChartId: spare.id,
    dashboardId: dash.id,
    permalinkKey: link.key,
    permalinkUrl: `${opts.baseUrl.replace(/\/+$/, '')}/superset/dashboard/p/${link.key}/`,
  };
}
