// Fixtures in a real Superset, built through the project's own Superset client
// (lib/superset/client.ts): its login, CSRF handling, rison encoding and typed errors. The
// creating calls go through the client's generic `request`, since no production code creates
// databases, datasets, charts, dashboards or users. Run against 6.0.0 and 6.1.0.
//
//   const client = await login(instance.baseUrl, 'admin', 'admin');
//   const fx = await buildStandardFixtures(client, { dataDir: instance.dataDir });
import { createHash } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { SupersetClient, seg } from '../../../lib/superset/client.ts';
import type { ListQuery, ListResponse } from '../../../lib/superset/types.ts';

export type { ListQuery, ListResponse, SupersetClient };

// ------------------------------------------------------------------------------------------------
// client

/** A logged-in client of the project's kind, with a deadline long enough for fixture imports. */
export async function login(baseUrl: string, username: string, password: string): Promise<SupersetClient> {
  const client = new SupersetClient({ baseUrl, username, password, timeoutSeconds: 120 });
  await client.login();
  return client;
}

/**
 * A bare access token, for comparing with Superset called directly (curl, fetch) in smoke
 * checks and benchmarks; Switchyard's own calls always go through the client.
 */
export async function bareAccessToken(baseUrl: string, username: string, password: string): Promise<string> {
  const res = await fetch(`${baseUrl.replace(/\/+$/, '')}/api/v1/security/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ username, password, provider: 'db', refresh: false }),
  });
  const body = (await res.json()) as { access_token?: string };
  if (!res.ok || !body.access_token) throw new Error(`login of ${username} at ${baseUrl} failed: ${res.status}`);
  return body.access_token;
}

/** The id of a Superset account, from the security API. */
export async function userIdOf(client: SupersetClient, username: string): Promise<number> {
  const res = await client.request<ListResponse<{ id: number; username: string }>>('GET', '/api/v1/security/users/', {
    q: { filters: [{ col: 'username', opr: 'eq', value: username }], columns: ['id', 'username'] },
  });
  const user = res.result.find((u) => u.username === username);
  if (!user) throw new Error(`no Superset account '${username}'`);
  return user.id;
}

/**
 * A deterministic UUID (version-5 layout, SHA-1 of `seed:key`). The same seed and key give the same
 * uuid on every instance, so "the same" dashboard can exist in two environments.
 */
export function stableUuid(seed: string, key: string): string {
  const h = createHash('sha1').update(`${seed}:${key}`).digest();
  h[6] = (h[6]! & 0x0f) | 0x50;
  h[8] = (h[8]! & 0x3f) | 0x80;
  const hex = h.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

// ------------------------------------------------------------------------------------------------
// SQLite data file

export type SqlValue = string | number | null;

export interface SqliteTable {
  name: string;
  /** Column definitions, e.g. { ds: 'DATE', region: 'TEXT', units: 'INTEGER' }. */
  columns: Record<string, string>;
  rows: SqlValue[][];
}

const REGIONS = ['EMEA', 'NA', 'APAC', 'LATAM'];
const PRODUCTS = ['widget', 'gadget', 'doohickey'];

/** Two small tables: sales (48 rows) and customers (8 rows). Deterministic. */
export function defaultTables(): SqliteTable[] {
  const sales: SqlValue[][] = [];
  for (let i = 0; i < 48; i++) {
    const day = new Date(Date.UTC(2025, 0, 1 + i * 3)).toISOString().slice(0, 10);
    const units = ((i * 7) % 13) + 1;
    sales.push([day, REGIONS[i % 4]!, PRODUCTS[i % 3]!, units, Math.round(units * (9.5 + (i % 5)) * 100) / 100]);
  }
  const names = ['Ada', 'Grace', 'Edsger', 'Barbara', 'Donald', 'Frances', 'Ken', 'Radia'];
  const customers: SqlValue[][] = names.map((n, i) => [i + 1, n, REGIONS[i % 4]!, `2024-0${(i % 9) + 1}-15`]);
  return [
    { name: 'sales', columns: { ds: 'DATE', region: 'TEXT', product: 'TEXT', units: 'INTEGER', revenue: 'REAL' }, rows: sales },
    { name: 'customers', columns: { id: 'INTEGER PRIMARY KEY', name: 'TEXT', region: 'TEXT', signup_date: 'DATE' }, rows: customers },
  ];
}

/** Create (or replace the tables in) a SQLite file. Returns the absolute path. */
export function createSqliteDataFile(path: string, tables: SqliteTable[] = defaultTables()): string {
  const abs = resolve(path);
  mkdirSync(dirname(abs), { recursive: true });
  const db = new DatabaseSync(abs);
  try {
    db.exec('BEGIN');
    for (const t of tables) {
      const cols = Object.entries(t.columns);
      db.exec(`DROP TABLE IF EXISTS "${t.name}"`);
      db.exec(`CREATE TABLE "${t.name}" (${cols.map(([c, type]) => `"${c}" ${type}`).join(', ')})`);
      const insert = db.prepare(`INSERT INTO "${t.name}" VALUES (${cols.map(() => '?').join(', ')})`);
      for (const row of t.rows) insert.run(...row);
    }
    db.exec('COMMIT');
  } finally {
    db.close();
  }
  return abs;
}

// ------------------------------------------------------------------------------------------------
// object creation

export interface Created {
  id: number;
  uuid: string | undefined;
}

export interface CreateDatabaseInput {
  name: string;
  sqlalchemyUri: string;
  uuid?: string;
  allowDml?: boolean;
  exposeInSqllab?: boolean;
  /** JSON-serialisable `extra`, sent as a JSON string. */
  extra?: Record<string, unknown>;
}

export async function createDatabase(client: SupersetClient, input: CreateDatabaseInput): Promise<Created> {
  const body: Record<string, unknown> = {
    database_name: input.name,
    sqlalchemy_uri: input.sqlalchemyUri,
    expose_in_sqllab: input.exposeInSqllab ?? true,
    allow_dml: input.allowDml ?? true,
  };
  if (input.uuid) body.uuid = input.uuid;
  if (input.extra) body.extra = JSON.stringify(input.extra);
  const res = await client.request<{ id: number; result: { uuid?: string } }>('POST', '/api/v1/database/', { json: body });
  return { id: res.id, uuid: res.result?.uuid ?? input.uuid };
}

/** A SQLite file database: writes the tables into `path` and registers it as a connection. */
export async function createSqliteDatabase(
  client: SupersetClient,
  input: { name: string; path: string; tables?: SqliteTable[]; uuid?: string },
): Promise<Created & { path: string }> {
  const path = createSqliteDataFile(input.path, input.tables);
  const db = await createDatabase(client, { name: input.name, sqlalchemyUri: `sqlite:///${path}`, uuid: input.uuid });
  return { ...db, path };
}

export interface DatasetColumn {
  column_name: string;
  type: string | null;
  is_dttm: boolean;
}

export interface CreatedDataset extends Created {
  tableName: string;
  columns: DatasetColumn[];
}

export interface CreateDatasetInput {
  database: number;
  tableName: string;
  schema?: string | null;
  /** Virtual dataset SQL. Omit for a physical table. */
  sql?: string;
  owners?: number[];
  uuid?: string;
  templateParams?: Record<string, unknown>;
}

export async function createDataset(client: SupersetClient, input: CreateDatasetInput): Promise<CreatedDataset> {
  const body: Record<string, unknown> = {
    database: input.database,
    schema: input.schema ?? null,
    table_name: input.tableName,
  };
  if (input.sql) body.sql = input.sql;
  if (input.owners) body.owners = input.owners;
  if (input.uuid) body.uuid = input.uuid;
  if (input.templateParams) body.template_params = JSON.stringify(input.templateParams);
  const res = await client.request<{ id: number; data?: { uuid?: string; columns?: DatasetColumn[] } }>('POST', '/api/v1/dataset/', {
    json: body,
  });
  let uuid = res.data?.uuid ?? input.uuid;
  let columns = res.data?.columns;
  if (!columns || !uuid) {
    const detail = await client.request<{ result: { uuid?: string; columns: DatasetColumn[] } }>('GET', `/api/v1/dataset/${seg(res.id)}`);
    uuid ??= detail.result.uuid;
    columns ??= detail.result.columns;
  }
  return {
    id: res.id,
    uuid,
    tableName: input.tableName,
    columns: (columns ?? []).map((c) => ({ column_name: c.column_name, type: c.type, is_dttm: c.is_dttm })),
  };
}

/** An adhoc SQL metric, as the explore UI saves it. */
export interface AdhocMetric {
  expressionType: 'SQL';
  sqlExpression: string;
  label: string;
  hasCustomLabel?: boolean;
  optionName?: string;
}

export function sqlMetric(sqlExpression: string, label: string): AdhocMetric {
  return {
    expressionType: 'SQL',
    sqlExpression,
    label,
    hasCustomLabel: true,
    optionName: `metric_${label.replace(/\W+/g, '_').toLowerCase()}`,
  };
}

export interface QueryObject {
  columns?: unknown[];
  metrics?: (string | AdhocMetric)[] | null;
  filters?: { col: unknown; op: string; val?: unknown }[];
  orderby?: [unknown, boolean][];
  row_limit?: number;
  extras?: Record<string, unknown>;
  [key: string]: unknown;
}

export interface QueryContext {
  datasource: { id: number; type: 'table' };
  queries: QueryObject[];
  force?: boolean;
  form_data?: Record<string, unknown>;
  result_format?: 'json' | 'csv' | 'xlsx';
  result_type?: 'full' | 'query' | 'samples' | 'results' | 'columns' | 'post_processed';
}

export interface CreateChartInput {
  name: string;
  vizType: string;
  datasetId: number;
  /** Chart form data; `viz_type` and `datasource` are filled in. */
  params: Record<string, unknown>;
  /** Saved query context, needed for GET /api/v1/chart/{id}/data/. */
  queryContext?: QueryContext;
  dashboards?: number[];
  owners?: number[];
  description?: string;
  uuid?: string;
  cacheTimeout?: number;
}

export interface CreatedChart extends Created {
  name: string;
  vizType: string;
  datasetId: number;
  params: Record<string, unknown>;
  queryContext: QueryContext | undefined;
}

export async function createChart(client: SupersetClient, input: CreateChartInput): Promise<CreatedChart> {
  const params = { ...input.params, viz_type: input.vizType, datasource: `${input.datasetId}__table` };
  const queryContext = input.queryContext
    ? {
        ...input.queryContext,
        form_data: input.queryContext.form_data ?? { ...params, force: false, result_format: 'json', result_type: 'full' },
      }
    : undefined;
  const body: Record<string, unknown> = {
    slice_name: input.name,
    viz_type: input.vizType,
    datasource_id: input.datasetId,
    datasource_type: 'table',
    params: JSON.stringify(params),
  };
  if (queryContext) body.query_context = JSON.stringify(queryContext);
  if (input.dashboards) body.dashboards = input.dashboards;
  if (input.owners) body.owners = input.owners;
  if (input.description !== undefined) body.description = input.description;
  if (input.uuid) body.uuid = input.uuid;
  if (input.cacheTimeout !== undefined) body.cache_timeout = input.cacheTimeout;
  const res = await client.request<{ id: number }>('POST', '/api/v1/chart/', { json: body });
  const uuid = input.uuid ?? (await client.request<{ result: { uuid?: string } }>('GET', `/api/v1/chart/${res.id}`)).result.uuid;
  return { id: res.id, uuid, name: input.name, vizType: input.vizType, datasetId: input.datasetId, params, queryContext };
}

/** A raw-mode table chart over `columns`, with a saved query context. */
export function createTableChart(
  client: SupersetClient,
  input: { name: string; datasetId: number; columns: string[]; rowLimit?: number; dashboards?: number[]; owners?: number[]; uuid?: string },
): Promise<CreatedChart> {
  const rowLimit = input.rowLimit ?? 100;
  const params = {
    query_mode: 'raw',
    all_columns: input.columns,
    groupby: [],
    metrics: [],
    percent_metrics: [],
    order_by_cols: [],
    adhoc_filters: [],
    row_limit: rowLimit,
    server_page_length: 10,
    order_desc: true,
    table_timestamp_format: 'smart_date',
    show_cell_bars: true,
    color_pn: true,
  };
  return createChart(client, {
    name: input.name,
    vizType: 'table',
    datasetId: input.datasetId,
    params,
    dashboards: input.dashboards,
    owners: input.owners,
    uuid: input.uuid,
    queryContext: {
      datasource: { id: input.datasetId, type: 'table' },
      force: false,
      queries: [
        {
          filters: [],
          extras: { having: '', where: '' },
          applied_time_extras: {},
          columns: input.columns,
          orderby: [],
          annotation_layers: [],
          row_limit: rowLimit,
          series_limit: 0,
          order_desc: true,
          url_params: {},
          custom_params: {},
          custom_form_data: {},
        },
      ],
      result_format: 'json',
      result_type: 'full',
    },
  });
}

/** A big_number_total chart of one metric, with a saved query context. */
export function createBigNumberChart(
  client: SupersetClient,
  input: {
    name: string;
    datasetId: number;
    metric: AdhocMetric | string;
    subheader?: string;
    dashboards?: number[];
    owners?: number[];
    uuid?: string;
  },
): Promise<CreatedChart> {
  const params = {
    metric: input.metric,
    adhoc_filters: [],
    header_font_size: 0.4,
    subheader: input.subheader ?? '',
    subheader_font_size: 0.15,
    y_axis_format: 'SMART_NUMBER',
    time_format: 'smart_date',
  };
  return createChart(client, {
    name: input.name,
    vizType: 'big_number_total',
    datasetId: input.datasetId,
    params,
    dashboards: input.dashboards,
    owners: input.owners,
    uuid: input.uuid,
    queryContext: {
      datasource: { id: input.datasetId, type: 'table' },
      force: false,
      queries: [
        {
          filters: [],
          extras: { having: '', where: '' },
          applied_time_extras: {},
          columns: [],
          metrics: [input.metric],
          annotation_layers: [],
          series_limit: 0,
          order_desc: true,
          url_params: {},
          custom_params: {},
          custom_form_data: {},
        },
      ],
      result_format: 'json',
      result_type: 'full',
    },
  });
}

/** position_json for charts laid out in rows of `perRow` (each chart width 12/perRow). */
export function buildPositions(title: string, charts: { id: number; name?: string; uuid?: string }[], perRow = 2): Record<string, unknown> {
  const positions: Record<string, unknown> = {
    DASHBOARD_VERSION_KEY: 'v2',
    ROOT_ID: { type: 'ROOT', id: 'ROOT_ID', children: ['GRID_ID'] },
    HEADER_ID: { type: 'HEADER', id: 'HEADER_ID', meta: { text: title } },
  };
  const rows: string[] = [];
  const width = Math.max(1, Math.floor(12 / perRow));
  charts.forEach((chart, i) => {
    const rowId = `ROW-${Math.floor(i / perRow) + 1}`;
    if (i % perRow === 0) {
      rows.push(rowId);
      positions[rowId] = {
        type: 'ROW',
        id: rowId,
        children: [],
        parents: ['ROOT_ID', 'GRID_ID'],
        meta: { background: 'BACKGROUND_TRANSPARENT' },
      };
    }
    const chartKey = `CHART-${chart.id}`;
    (positions[rowId] as { children: string[] }).children.push(chartKey);
    const meta: Record<string, unknown> = { chartId: chart.id, width, height: 50 };
    if (chart.name) meta.sliceName = chart.name;
    if (chart.uuid) meta.uuid = chart.uuid;
    positions[chartKey] = { type: 'CHART', id: chartKey, children: [], parents: ['ROOT_ID', 'GRID_ID', rowId], meta };
  });
  positions.GRID_ID = { type: 'GRID', id: 'GRID_ID', children: rows, parents: ['ROOT_ID'] };
  return positions;
}

export interface CreateDashboardInput {
  title: string;
  slug?: string;
  published?: boolean;
  owners?: number[];
  /** Charts to place on the dashboard (links them and writes position_json). */
  charts?: { id: number; name?: string; uuid?: string }[];
  css?: string;
  jsonMetadata?: Record<string, unknown>;
  certifiedBy?: string;
  uuid?: string;
}

export interface CreatedDashboard extends Created {
  title: string;
  slug: string | undefined;
  chartIds: number[];
}

/**
 * POST /api/v1/dashboard/, then (if charts are given) PUT json_metadata.positions, which makes
 * Superset link the charts (dashboard_slices), write position_json and put each chart's uuid
 * into its position node.
 */
export async function createDashboard(client: SupersetClient, input: CreateDashboardInput): Promise<CreatedDashboard> {
  const body: Record<string, unknown> = { dashboard_title: input.title, published: input.published ?? true };
  if (input.slug !== undefined) body.slug = input.slug;
  if (input.owners) body.owners = input.owners;
  if (input.css !== undefined) body.css = input.css;
  if (input.certifiedBy !== undefined) body.certified_by = input.certifiedBy;
  if (input.uuid) body.uuid = input.uuid;
  if (input.jsonMetadata && !input.charts?.length) body.json_metadata = JSON.stringify(input.jsonMetadata);
  const res = await client.request<{ id: number; result: { uuid?: string } }>('POST', '/api/v1/dashboard/', { json: body });
  const charts = input.charts ?? [];
  if (charts.length) {
    const metadata = { ...(input.jsonMetadata ?? {}), positions: buildPositions(input.title, charts) };
    await client.request('PUT', `/api/v1/dashboard/${res.id}`, { json: { json_metadata: JSON.stringify(metadata) } });
  }
  let uuid = input.uuid ?? res.result?.uuid;
  if (!uuid) uuid = (await client.request<{ result: { uuid?: string } }>('GET', `/api/v1/dashboard/${res.id}`)).result.uuid;
  return { id: res.id, uuid, title: input.title, slug: input.slug, chartIds: charts.map((c) => c.id) };
}

export async function updateDashboard(client: SupersetClient, id: number, patch: Record<string, unknown>): Promise<void> {
  await client.request('PUT', `/api/v1/dashboard/${seg(id)}`, { json: patch });
}

/** Create `count` empty dashboards "<prefix> 001".. with slugs "<slugPrefix>-001".., `concurrency` at a time. */
export async function bulkCreateDashboards(
  client: SupersetClient,
  input: {
    count: number;
    prefix?: string;
    slugPrefix?: string;
    owners?: number[];
    /** Default: alternate published / draft. */
    published?: boolean;
    concurrency?: number;
    /** Derive each dashboard's uuid with stableUuid(uuidSeed, slug). */
    uuidSeed?: string;
  },
): Promise<CreatedDashboard[]> {
  const prefix = input.prefix ?? 'Bulk dashboard';
  const slugPrefix = input.slugPrefix ?? 'bulk';
  const width = Math.max(3, String(input.count).length);
  const out: CreatedDashboard[] = new Array(input.count);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < input.count) {
      const i = next++;
      const n = String(i + 1).padStart(width, '0');
      const body: Record<string, unknown> = {
        dashboard_title: `${prefix} ${n}`,
        slug: `${slugPrefix}-${n}`,
        published: input.published ?? i % 2 === 0,
      };
      if (input.owners) body.owners = input.owners;
      if (input.uuidSeed) body.uuid = stableUuid(input.uuidSeed, `dashboard:${String(body.slug)}`);
      const res = await client.request<{ id: number; result: { uuid?: string } }>('POST', '/api/v1/dashboard/', { json: body });
      out[i] = {
        id: res.id,
        uuid: (body.uuid as string | undefined) ?? res.result?.uuid,
        title: String(body.dashboard_title),
        slug: String(body.slug),
        chartIds: [],
      };
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, input.concurrency ?? 4) }, worker));
  return out;
}

// ------------------------------------------------------------------------------------------------
// users

export interface CreateUserInput {
  username: string;
  password: string;
  firstName?: string;
  lastName?: string;
  email?: string;
  /** Role names (default ['Admin']). */
  roles?: string[];
}

export interface CreatedUser {
  id: number;
  username: string;
  password: string;
  firstName: string;
  lastName: string;
  email: string;
}

/** Needs FAB_ADD_SECURITY_API (on by default in 6.x and in our superset_config.py). */
export async function createUser(client: SupersetClient, input: CreateUserInput): Promise<CreatedUser> {
  const roles = await client.request<ListResponse<{ id: number; name: string }>>('GET', '/api/v1/security/roles/', {
    q: { page_size: 100 },
  });
  const wanted = input.roles ?? ['Admin'];
  const roleIds = wanted.map((name) => {
    const role = roles.result.find((r) => r.name === name);
    if (!role) throw new Error(`role ${name} not found (have: ${roles.result.map((r) => r.name).join(', ')})`);
    return role.id;
  });
  const firstName = input.firstName ?? input.username[0]!.toUpperCase() + input.username.slice(1);
  const lastName = input.lastName ?? 'Tester';
  const email = input.email ?? `${input.username}@example.com`;
  const res = await client.request<{ id: number }>('POST', '/api/v1/security/users/', {
    json: {
      username: input.username,
      password: input.password,
      first_name: firstName,
      last_name: lastName,
      email,
      active: true,
      roles: roleIds,
    },
  });
  return { id: res.id, username: input.username, password: input.password, firstName, lastName, email };
}

// ------------------------------------------------------------------------------------------------
// reading (the client's own calls, in the shapes these tests read)

export interface DashboardListItem {
  id: number;
  uuid?: string;
  dashboard_title: string;
  slug: string | null;
  published: boolean;
  status?: string;
  url: string;
  owners?: { id: number; first_name: string; last_name: string; email?: string }[];
  changed_by?: { id: number; first_name: string; last_name: string } | null;
  changed_by_name?: string;
  changed_on_utc?: string;
  [key: string]: unknown;
}

export function listDashboards(client: SupersetClient, query: ListQuery = {}): Promise<ListResponse<DashboardListItem>> {
  return client.list<DashboardListItem>('dashboard', query);
}

/** Every row of a list endpoint (page_size 100, the server maximum). */
export function listAll<T extends { id: number }>(
  client: SupersetClient,
  resource: 'dashboard' | 'chart' | 'dataset' | 'database',
  query: Omit<ListQuery, 'page' | 'pageSize'> = {},
): Promise<T[]> {
  return client.listAll<T>(resource, query);
}

export async function getDashboard(client: SupersetClient, idOrSlug: number | string): Promise<{ result: Record<string, unknown> }> {
  return { result: await client.getDashboard(idOrSlug) };
}

export interface ChartDataResult {
  result: {
    status?: string;
    rowcount: number;
    colnames: string[];
    data: Record<string, unknown>[];
    query?: string;
    error?: string | null;
    [key: string]: unknown;
  }[];
}

/** POST /api/v1/chart/data (CSRF-exempt). */
export async function chartData(client: SupersetClient, queryContext: QueryContext): Promise<ChartDataResult> {
  return (await client.chartData(queryContext)) as ChartDataResult;
}

/** A query context built from a chart's params, for charts without a saved one. */
export function queryContextFromParams(datasetId: number, params: Record<string, unknown>, rowLimit = 5): QueryContext {
  const columns = (params.all_columns as unknown[] | undefined)?.length
    ? (params.all_columns as unknown[])
    : ((params.groupby as unknown[] | undefined) ?? []);
  const metrics = (params.metrics as (string | AdhocMetric)[] | undefined)?.length
    ? (params.metrics as (string | AdhocMetric)[])
    : params.metric
      ? [params.metric as string | AdhocMetric]
      : undefined;
  const query: QueryObject = { columns, row_limit: rowLimit };
  if (metrics) query.metrics = metrics;
  return { datasource: { id: datasetId, type: 'table' }, queries: [query], result_format: 'json', result_type: 'full' };
}

/** GET /api/v1/chart/{id}/data/: replays the saved query_context (400 if the chart has none). */
export function savedChartData(client: SupersetClient, chartId: number): Promise<ChartDataResult> {
  return client.request<ChartDataResult>('GET', `/api/v1/chart/${seg(chartId)}/data/`, { query: { format: 'json', type: 'full' } });
}

// ------------------------------------------------------------------------------------------------
// the standard fixture set

export interface StandardFixtures {
  admin: { id: number; username: string };
  users: CreatedUser[];
  database: Created & { name: string; path: string };
  datasets: { sales: CreatedDataset; customers: CreatedDataset; salesByRegion: CreatedDataset };
  charts: CreatedChart[];
  dashboards: CreatedDashboard[];
  bulkDashboards: CreatedDashboard[];
}

export interface StandardFixturesOptions {
  /** Where the SQLite data file goes (the instance's dataDir is a good choice). */
  dataDir: string;
  /** Prefix for names, slugs and usernames, so several fixture sets can share an instance. */
  prefix?: string;
  /** The account `client` is logged in as (default `admin`). */
  adminUsername?: string;
  /** Extra empty dashboards for paging tests (default 0). */
  bulkDashboards?: number;
  /**
   * Give every object a deterministic uuid derived from this seed (stableUuid), so two instances
   * built with the same seed hold "the same" objects. Default: Superset assigns random uuids.
   */
  uuidSeed?: string;
}

/**
 * Builds: users alice + bob (Admin role), a SQLite database "<prefix>analytics" with tables sales and
 * customers, datasets sales / customers / sales_by_region (virtual), four charts (two table, two big
 * number), three dashboards:
 *   - "<P>Sales overview" slug <p>sales-overview: 3 charts, owners admin+alice, published,
 *     last modified by alice (so changed_by != created_by)
 *   - "<P>Customers" slug <p>customers: 1 chart, owner bob, draft, modified by bob
 *   - "<P>Empty" no slug, no charts
 * plus `bulkDashboards` empty ones.
 */
export async function buildStandardFixtures(client: SupersetClient, options: StandardFixturesOptions): Promise<StandardFixtures> {
  const p = options.prefix ?? '';
  const slugP = p.toLowerCase().replace(/[^a-z0-9]+/g, '-');
  const seed = options.uuidSeed;
  const uid = (key: string): string | undefined => (seed ? stableUuid(seed, `${p}${key}`) : undefined);
  const adminName = options.adminUsername ?? 'admin';
  const admin = { id: await userIdOf(client, adminName), username: adminName };

  const alice = await createUser(client, { username: `${slugP}alice`, password: 'alice-pw', firstName: 'Alice', lastName: 'Liddell' });
  const bob = await createUser(client, { username: `${slugP}bob`, password: 'bob-pw', firstName: 'Bob', lastName: 'Builder' });

  const dbName = `${p}analytics`;
  const file = join(resolve(options.dataDir), 'fixture-data', `${slugP || 'default-'}analytics.sqlite`);
  const database = await createSqliteDatabase(client, { name: dbName, path: file, uuid: uid('database:analytics') });

  const sales = await createDataset(client, {
    database: database.id,
    tableName: 'sales',
    owners: [admin.id, alice.id],
    uuid: uid('dataset:sales'),
  });
  const customers = await createDataset(client, {
    database: database.id,
    tableName: 'customers',
    owners: [bob.id],
    uuid: uid('dataset:customers'),
  });
  const salesByRegion = await createDataset(client, {
    database: database.id,
    tableName: `${slugP.replace(/-/g, '_')}sales_by_region`,
    sql: 'SELECT region, SUM(units) AS units, SUM(revenue) AS revenue FROM sales GROUP BY region',
    uuid: uid('dataset:sales_by_region'),
  });

  const salesTable = await createTableChart(client, {
    name: `${p}Sales rows`,
    datasetId: sales.id,
    columns: ['ds', 'region', 'product', 'units', 'revenue'],
    owners: [admin.id, alice.id],
    uuid: uid('chart:sales-rows'),
  });
  const revenue = await createBigNumberChart(client, {
    name: `${p}Total revenue`,
    datasetId: sales.id,
    metric: sqlMetric('SUM(revenue)', 'Revenue'),
    subheader: 'all time',
    uuid: uid('chart:total-revenue'),
  });
  const regionTable = await createTableChart(client, {
    name: `${p}Revenue by region`,
    datasetId: salesByRegion.id,
    columns: ['region', 'units', 'revenue'],
    uuid: uid('chart:revenue-by-region'),
  });
  const customerCount = await createBigNumberChart(client, {
    name: `${p}Customers`,
    datasetId: customers.id,
    metric: 'count',
    owners: [bob.id],
    uuid: uid('chart:customers'),
  });

  const overview = await createDashboard(client, {
    title: `${p}Sales overview`,
    slug: `${slugP}sales-overview`,
    owners: [admin.id, alice.id],
    charts: [salesTable, revenue, regionTable],
    jsonMetadata: { color_scheme: 'supersetColors', refresh_frequency: 0 },
    uuid: uid('dashboard:sales-overview'),
  });
  const customersDash = await createDashboard(client, {
    title: `${p}Customers`,
    slug: `${slugP}customers`,
    published: false,
    owners: [bob.id],
    charts: [customerCount],
    uuid: uid('dashboard:customers'),
  });
  const empty = await createDashboard(client, { title: `${p}Empty`, owners: [admin.id], uuid: uid('dashboard:empty') });

  // Last modifications by other users, so changed_by differs from created_by.
  const asAlice = await login(client.baseUrl, alice.username, alice.password);
  await updateDashboard(asAlice, overview.id, { css: '/* touched by alice */' });
  const asBob = await login(client.baseUrl, bob.username, bob.password);
  await updateDashboard(asBob, customersDash.id, { css: '/* touched by bob */' });

  const bulkDashboards = options.bulkDashboards
    ? await bulkCreateDashboards(client, {
        count: options.bulkDashboards,
        prefix: `${p}Bulk`,
        slugPrefix: `${slugP}bulk`,
        owners: [admin.id, bob.id],
        uuidSeed: seed ? `${seed}:${p}` : undefined,
      })
    : [];

  return {
    admin,
    users: [alice, bob],
    database: { ...database, name: dbName },
    datasets: { sales, customers, salesByRegion },
    charts: [salesTable, revenue, regionTable, customerCount],
    dashboards: [overview, customersDash, empty],
    bulkDashboards,
  };
}
