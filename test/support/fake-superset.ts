// An in-process fake of Superset's REST API, written from the answers of Superset 6.0.0 and 6.1.0,
// for the failures a real Superset will not produce on demand (timeouts, 5xx, garbage bodies,
// resets, thousands of rows, an import answering 500). Call counts and orderings are proven on the
// real instances behind the recording proxy (test/support/gateway-proxy.ts); docs/tests.md lists,
// per file still using this fake, the fault it needs.
//
//   const fake = await startFakeSuperset();
//   fake.addUser({ username: 'alice', first_name: 'Alice', last_name: 'Liddell' });
//   fake.addDashboard({ title: 'Sales', owners: [2] });
//   fake.fail({ path: /\/dashboard\/$/ }, 'timeout');   // or '500', 'garbage', 'html', 'reset'
//   ... fake.baseUrl, fake.username, fake.password, fake.requests ...
//   await fake.close();
//
// Behaviour kept from the real one: JWT login with provider, 401 `{"msg": ...}` without or with an
// expired token, CSRF token + session cookie required on mutating calls (400 SIP-40 body for JSON,
// 302 to /login/ for multipart), HTML error pages unless `Accept` excludes text/html, rison `q`,
// page_size clamped to 1..100, `count`/`ids`/`result` list bodies, title_or_slug / rel_m_m /
// rel_o_m / in / eq / ct filters, owners without usernames, `related/owners`, the security API,
// `_info` permissions, thumbnails (404 when off, 302 to the current digest, 202 or PNG when on),
// dashboard exports as real bundles (a ZIP of YAML files under one root folder) and imports that
// read them back, matching every object by uuid.
import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { strFromU8, strToU8, unzipSync, zipSync } from 'fflate';
import rison from 'rison';
import { parse as parseYaml, stringify as toYaml } from 'yaml';

export interface FakeUser {
  id: number;
  username: string;
  first_name: string;
  last_name: string;
  email: string;
  active: boolean;
  password: string;
}

export interface FakeDashboard {
  id: number;
  uuid: string;
  dashboard_title: string;
  slug: string | null;
  published: boolean;
  owners: number[];
  /** Owners answered as plain values (a name, not an account object), after the accounts. */
  plainOwners?: string[];
  created_by: number | null;
  changed_by: number | null;
  changed_on: Date;
  css: string;
  json_metadata: string;
  position_json: string | null;
  chartIds: number[];
  /** Thumbnail state when thumbnails are on: missing (202 and queue), ready (PNG). */
  thumbnail: 'pending' | 'ready';
  /** What a ready thumbnail answers instead of the PNG (content type and bytes). */
  thumbnailImage?: { contentType: string; body: Buffer | string };
}

export interface FakeDatabase {
  id: number;
  uuid: string;
  database_name: string;
  backend: string;
}

export interface FakeDataset {
  id: number;
  uuid: string;
  table_name: string;
  schema: string | null;
  sql: string | null;
  database: number;
  owners: number[];
  columns: string[];
  /** Exported as the dataset's `catalog` when set (4.1+ export it; PostgreSQL's is the database the connection opens). */
  catalog?: string | null;
}

export interface FakeChart {
  id: number;
  uuid: string;
  slice_name: string;
  viz_type: string;
  dataset: number;
  params: Record<string, unknown>;
  /** The saved query context as Superset stores it (a JSON string); none when unset. */
  query_context?: string | null;
}

/** An imported bundle as the fake read it: file path (root folder stripped) → YAML content. */
export type FakeBundleFiles = Record<string, Record<string, unknown>>;

/** What an import answers instead of OK, for the bundles `when` picks. */
export interface FakeImportFailure {
  when: (files: FakeBundleFiles) => boolean;
  status: number;
  /** The answer's body, or how to make it from the bundle (Superset names the files it refuses). */
  body: unknown | ((files: FakeBundleFiles) => unknown);
}

export type FailureMode = 'timeout' | '500' | '502' | '503' | 'garbage' | 'html' | 'reset' | 'empty' | '403' | 'truncated-json';

interface Failure {
  method?: string;
  path?: RegExp | string;
  mode: FailureMode;
  remaining: number;
}

export interface RecordedRequest {
  method: string;
  path: string;
  q?: unknown;
  accept?: string;
  authorized: boolean;
  /** A chart-data request's JSON body, as sent. */
  json?: unknown;
}

export interface FakeSupersetOptions {
  username?: string;
  password?: string;
  version?: string | null;
  /** Access token lifetime in seconds (default 900, as flask-jwt-extended). */
  tokenTtlSeconds?: number;
  thumbnails?: boolean;
  securityApi?: boolean;
  /** Permissions `_info` reports for every resource. */
  permissions?: string[];
  /**
   * Reproduce Flask-AppBuilder's thread-unsafe `get_list`: the filters of a list call are kept on
   * an object shared by concurrent requests, so overlapping calls may run with each other's filters.
   */
  fabFilterRace?: boolean;
  /**
   * Behave like a release whose lists carry no `uuid` and whose dataset exports name no id
   * (Superset before 4.1.4): lookups by uuid must go through exports.
   */
  listsWithoutUuid?: boolean;
  /** Columns `_info?keys=filters` reports per resource (default: none, as if the probe were refused). */
  filterColumns?: Partial<Record<'dashboard' | 'chart' | 'dataset' | 'database', string[]>>;
}

/** A row-level-security rule as the fake keeps it: tables (dataset ids) and roles (role ids). */
export interface FakeRlsRule {
  id: number;
  name: string;
  filter_type: string;
  clause: string;
  group_key: string | null;
  description: string | null;
  tables: number[];
  roles: number[];
}

export interface FakeSuperset {
  baseUrl: string;
  /** Row-level-security rules and the roles they may name (Admin, Alpha, Gamma, Public to start with). */
  rlsRules: FakeRlsRule[];
  roles: Array<{ id: number; name: string }>;
  username: string;
  password: string;
  requests: RecordedRequest[];
  users: FakeUser[];
  dashboards: FakeDashboard[];
  databases: FakeDatabase[];
  datasets: FakeDataset[];
  charts: FakeChart[];
  options: Required<FakeSupersetOptions>;
  addUser(u: Partial<FakeUser> & { username: string }): FakeUser;
  addDashboard(d: {
    title: string;
    slug?: string | null;
    owners?: number[];
    plainOwners?: string[];
    changedBy?: number | null;
    published?: boolean;
    changedOn?: Date;
    charts?: number[];
  }): FakeDashboard;
  addDatabase(d: { name: string; backend?: string; uuid?: string }): FakeDatabase;
  addDataset(d: {
    table: string;
    database: number;
    schema?: string | null;
    sql?: string | null;
    owners?: number[];
    catalog?: string | null;
  }): FakeDataset;
  addChart(c: { name: string; dataset: number; vizType?: string; dashboards?: number[] }): FakeChart;
  /**
   * Many dashboards at once, for benchmarks: one database and dataset, then `count` dashboards of
   * `charts` charts each (default 1), exported and imported as real bundles like any other.
   */
  seedDashboards(count: number, opts?: { prefix?: string; charts?: number }): FakeDashboard[];
  /** Make matching requests fail `times` times (default: until cleared). */
  fail(match: { method?: string; path?: RegExp | string }, mode: FailureMode, times?: number): void;
  /** Make dashboard imports of the bundles `when` picks answer `status` with `body` (until cleared). */
  failImport(failure: FakeImportFailure): void;
  /** Answer another release from now on (as an upgraded instance would). */
  setVersion(version: string | null): void;
  /** Leave these top-level fields out of every exported object (as an older release's export would). */
  omitFromExports(fields: string[]): void;
  /** Answer matching requests `ms` later (until cleared with clearFailures). */
  slow(match: { method?: string; path?: RegExp | string }, ms: number): void;
  /** Hold matching requests (those for which `when`, asked on arrival, says so) until `until` settles (until cleared with clearFailures). */
  hold(match: { method?: string; path?: RegExp | string; when?: () => boolean }, until: Promise<unknown>): void;
  /** Settles when a matching request arrives (from now on). */
  /** Settles on the first request that matches (`query`: its decoded `q` too). */
  seen(match: { method?: string; path?: RegExp | string; query?: (q: unknown) => boolean }): Promise<void>;
  clearFailures(): void;
  /** Invalidate every issued token (as a restarted Superset with another secret would). */
  revokeTokens(): void;
  /** Requests whose path matches, optionally only since a mark. */
  count(path: RegExp | string, since?: number): number;
  mark(): number;
  close(): Promise<void>;
}

const PNG = Buffer.from(
  '89504e470d0a1a0a0000000d4948445200000001000000010806000000' +
    '1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082',
  'hex',
);

function uuidFrom(seed: string): string {
  const h = createHash('sha1').update(seed).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

function isoUtc(d: Date): string {
  return d.toISOString().replace('Z', '000+0000');
}

export async function startFakeSuperset(opts: FakeSupersetOptions = {}): Promise<FakeSuperset> {
  const options: Required<FakeSupersetOptions> = {
    username: opts.username ?? 'admin',
    password: opts.password ?? 'admin',
    version: opts.version === undefined ? '6.1.0' : opts.version,
    tokenTtlSeconds: opts.tokenTtlSeconds ?? 900,
    thumbnails: opts.thumbnails ?? false,
    securityApi: opts.securityApi ?? true,
    permissions: opts.permissions ?? ['can_read', 'can_write', 'can_export'],
    fabFilterRace: opts.fabFilterRace ?? false,
    listsWithoutUuid: opts.listsWithoutUuid ?? false,
    filterColumns: opts.filterColumns ?? {},
  };
  let sharedFilters: ListQ['filters'] = [];
  let omittedFields: string[] = [];
  const secret = randomBytes(16).toString('hex');
  let tokenGeneration = 0;
  const users: FakeUser[] = [];
  const dashboards: FakeDashboard[] = [];
  const databases: FakeDatabase[] = [];
  const datasets: FakeDataset[] = [];
  const charts: FakeChart[] = [];
  const rlsRules: FakeRlsRule[] = [];
  const roles = ['Admin', 'Alpha', 'Gamma', 'Public'].map((name, i) => ({ id: i + 1, name }));
  const requests: RecordedRequest[] = [];
  let failures: Failure[] = [];
  let delays: Array<{ method?: string; path?: RegExp | string; ms: number }> = [];
  let holds: Array<{ method?: string; path?: RegExp | string; when?: () => boolean; until: Promise<unknown> }> = [];
  const watchers: Array<{ method?: string; path?: RegExp | string; query?: (q: unknown) => boolean; resolve: () => void }> = [];
  const matches = (m: { method?: string; path?: RegExp | string }, method: string, path: string) =>
    (!m.method || m.method === method) && (!m.path || (typeof m.path === 'string' ? path === m.path : m.path.test(path)));
  let importFailures: FakeImportFailure[] = [];
  const sessions = new Map<string, string>(); // session cookie -> csrf token
  let clock = Date.UTC(2026, 0, 1);

  const addUser: FakeSuperset['addUser'] = (u) => {
    const user: FakeUser = {
      id: u.id ?? users.length + 1,
      username: u.username,
      first_name: u.first_name ?? u.username[0].toUpperCase() + u.username.slice(1),
      last_name: u.last_name ?? 'Tester',
      email: u.email ?? `${u.username}@example.com`,
      active: u.active ?? true,
      password: u.password ?? `${u.username}-pw`,
    };
    users.push(user);
    return user;
  };
  addUser({ username: options.username, password: options.password, first_name: 'Ada', last_name: 'Admin' });

  const addDashboard: FakeSuperset['addDashboard'] = (d) => {
    const id = dashboards.length ? Math.max(...dashboards.map((x) => x.id)) + 1 : 1;
    clock += 1000;
    const dash: FakeDashboard = {
      id,
      uuid: uuidFrom(`dashboard:${id}:${d.title}`),
      dashboard_title: d.title,
      slug: d.slug === undefined ? null : d.slug,
      published: d.published ?? true,
      owners: d.owners ?? [1],
      ...(d.plainOwners ? { plainOwners: d.plainOwners } : {}),
      created_by: 1,
      changed_by: d.changedBy === undefined ? 1 : d.changedBy,
      changed_on: d.changedOn ?? new Date(clock),
      css: '',
      json_metadata: JSON.stringify({ color_scheme: 'supersetColors' }),
      position_json: null,
      chartIds: d.charts ?? [],
      thumbnail: 'pending',
    };
    dashboards.push(dash);
    return dash;
  };
  const addDatabase: FakeSuperset['addDatabase'] = (d) => {
    const db: FakeDatabase = {
      id: databases.length + 1,
      uuid: d.uuid ?? uuidFrom(`db:${d.name}:${databases.length}`),
      database_name: d.name,
      backend: d.backend ?? 'postgresql',
    };
    databases.push(db);
    return db;
  };
  const addDataset: FakeSuperset['addDataset'] = (d) => {
    const ds: FakeDataset = {
      id: datasets.length + 1,
      uuid: uuidFrom(`ds:${d.table}:${datasets.length}`),
      table_name: d.table,
      schema: d.schema ?? 'public',
      sql: d.sql ?? null,
      database: d.database,
      owners: d.owners ?? [1],
      columns: ['ds', 'region', 'units'],
      ...(d.catalog ? { catalog: d.catalog } : {}),
    };
    datasets.push(ds);
    return ds;
  };
  const seedDashboards: FakeSuperset['seedDashboards'] = (count, o = {}) => {
    const prefix = o.prefix ?? 'Seeded';
    const db = addDatabase({ name: `${prefix} database` });
    const ds = addDataset({ table: `${fileName(prefix).toLowerCase()}_sales`, database: db.id });
    // Ids are assigned here rather than by addDashboard, whose max() over every dashboard would make this quadratic.
    let id = nextId(dashboards);
    const made: FakeDashboard[] = [];
    for (let i = 0; i < count; i++, id++) {
      clock += 1000;
      const d: FakeDashboard = {
        id,
        uuid: uuidFrom(`dashboard:${id}:${prefix} ${i}`),
        dashboard_title: `${prefix} ${i}`,
        slug: `${fileName(prefix).toLowerCase()}-${i}`,
        published: true,
        owners: [1],
        created_by: 1,
        changed_by: 1,
        changed_on: new Date(clock),
        css: '',
        json_metadata: JSON.stringify({ color_scheme: 'supersetColors' }),
        position_json: null,
        chartIds: [],
        thumbnail: 'pending',
      };
      dashboards.push(d);
      made.push(d);
      for (let c = 0; c < (o.charts ?? 1); c++) addChart({ name: `${prefix} ${i} chart ${c}`, dataset: ds.id, dashboards: [d.id] });
    }
    return made;
  };
  const addChart: FakeSuperset['addChart'] = (c) => {
    const id = charts.length + 1;
    const chart: FakeChart = {
      id,
      uuid: uuidFrom(`chart:${c.name}:${charts.length}`),
      slice_name: c.name,
      viz_type: c.vizType ?? 'table',
      dataset: c.dataset,
      // Each chart asks a query of its own, as real charts mostly do (a chart check sends a query two charts share once).
      params: {
        viz_type: c.vizType ?? 'table',
        datasource: `${c.dataset}__table`,
        all_columns: ['region'],
        adhoc_filters: [{ expressionType: 'SQL', clause: 'WHERE', sqlExpression: `units > ${id}` }],
      },
    };
    charts.push(chart);
    for (const d of c.dashboards ?? []) dashboards.find((x) => x.id === d)?.chartIds.push(chart.id);
    return chart;
  };

  const userSummary = (id: number | null, withEmail = false) => {
    const u = users.find((x) => x.id === id);
    if (!u) return null;
    return withEmail
      ? { id: u.id, first_name: u.first_name, last_name: u.last_name, email: u.email }
      : { id: u.id, first_name: u.first_name, last_name: u.last_name };
  };
  const nameOf = (id: number | null) => {
    const u = users.find((x) => x.id === id);
    return u ? `${u.first_name} ${u.last_name}` : '';
  };
  const digestOf = (d: FakeDashboard) => createHash('md5').update(`${d.id}:${d.json_metadata}:${d.css}`).digest('hex');

  const dashboardRow = (d: FakeDashboard) => ({
    certification_details: null,
    certified_by: null,
    changed_by: userSummary(d.changed_by),
    changed_by_name: nameOf(d.changed_by),
    changed_on_delta_humanized: 'a day ago',
    changed_on_utc: isoUtc(d.changed_on),
    created_by: userSummary(d.created_by),
    created_on_delta_humanized: 'a day ago',
    dashboard_title: d.dashboard_title,
    id: d.id,
    is_managed_externally: false,
    owners: [...d.owners.map((o) => userSummary(o, true)).filter(Boolean), ...(d.plainOwners ?? [])],
    published: d.published,
    roles: [],
    slug: d.slug,
    status: d.published ? 'published' : 'draft',
    tags: [],
    thumbnail_url: `/api/v1/dashboard/${d.id}/thumbnail/${digestOf(d)}/`,
    url: `/superset/dashboard/${d.slug ?? d.id}/`,
    ...(options.listsWithoutUuid ? {} : { uuid: d.uuid }),
  });

  const datasetRow = (ds: FakeDataset) => {
    const db = databases.find((x) => x.id === ds.database);
    return {
      id: ds.id,
      ...(options.listsWithoutUuid ? {} : { uuid: ds.uuid }),
      table_name: ds.table_name,
      schema: ds.schema,
      catalog: null,
      sql: ds.sql,
      kind: ds.sql ? 'virtual' : 'physical',
      description: null,
      explore_url: `/explore/?datasource_type=table&datasource_id=${ds.id}`,
      datasource_type: 'table',
      database: db ? { id: db.id, database_name: db.database_name, uuid: db.uuid } : null,
      owners: ds.owners.map((o) => userSummary(o)).filter(Boolean),
      changed_by_name: 'Ada Admin',
      changed_on_utc: isoUtc(new Date(clock)),
    };
  };

  // ---- bundles ---------------------------------------------------------------------------------

  const fileName = (s: string) => s.replace(/[^A-Za-z0-9_-]+/g, '_');
  /** A connection's URI as Superset shows it, password masked: its path is the database (PostgreSQL's default catalog). */
  const connectionUri = (db: FakeDatabase) => `${db.backend}://user:XXXXXXXXXX@db.example.com/${fileName(db.database_name)}`;
  const nextId = (rows: Array<{ id: number }>) => (rows.length ? Math.max(...rows.map((r) => r.id)) + 1 : 1);

  /**
   * Superset's export layout: one root folder; dashboards, charts, datasets/<db>/, databases,
   * metadata.yaml. A chart export holds the charts with their datasets and databases, a dataset
   * export the datasets with their databases.
   */
  const exportBundle = (ids: number[], kind: 'dashboard' | 'chart' | 'dataset' = 'dashboard'): Uint8Array => {
    const root = `${kind}_export_${new Date(clock).toISOString().replace(/\D/g, '').slice(0, 14)}`;
    const files: Record<string, Uint8Array> = {};
    const put = (path: string, content: Record<string, unknown>) => {
      const kept =
        path === 'metadata.yaml' ? content : Object.fromEntries(Object.entries(content).filter(([k]) => !omittedFields.includes(k)));
      files[`${root}/${path}`] = strToU8(toYaml(kept));
    };
    const type = { dashboard: 'Dashboard', chart: 'Slice', dataset: 'SqlaTable' }[kind];
    put('metadata.yaml', { version: '1.0.0', type, timestamp: new Date(clock).toISOString() });
    const putDatabase = (db: FakeDatabase) =>
      put(`databases/${fileName(db.database_name)}.yaml`, {
        database_name: db.database_name,
        sqlalchemy_uri: connectionUri(db),
        cache_timeout: null,
        expose_in_sqllab: true,
        allow_dml: false,
        extra: {},
        uuid: db.uuid,
        version: '1.0.0',
      });
    const putDataset = (ds: FakeDataset) => {
      const db = databases.find((x) => x.id === ds.database)!;
      // Releases before 6.0 leave the id out of a dataset's file name.
      const name = options.listsWithoutUuid ? fileName(ds.table_name) : `${fileName(ds.table_name)}_${ds.id}`;
      put(`datasets/${fileName(db.database_name)}/${name}.yaml`, {
        table_name: ds.table_name,
        main_dttm_col: null,
        description: null,
        schema: ds.schema,
        sql: ds.sql,
        params: null,
        template_params: null,
        filter_select_enabled: true,
        uuid: ds.uuid,
        metrics: [{ metric_name: 'count', expression: 'COUNT(*)' }],
        columns: ds.columns.map((col) => ({ column_name: col, type: 'TEXT', is_dttm: col === 'ds' })),
        version: '1.0.0',
        database_uuid: db.uuid,
        ...(ds.catalog ? { catalog: ds.catalog } : {}),
      });
      putDatabase(db);
    };
    const putChart = (c: FakeChart) => {
      const ds = datasets.find((x) => x.id === c.dataset)!;
      put(`charts/${fileName(c.slice_name)}_${c.id}.yaml`, {
        slice_name: c.slice_name,
        description: null,
        certified_by: null,
        viz_type: c.viz_type,
        params: c.params,
        query_context: c.query_context ?? null,
        cache_timeout: null,
        uuid: c.uuid,
        version: '1.0.0',
        dataset_uuid: ds.uuid,
      });
      putDataset(ds);
    };
    if (kind === 'chart') for (const id of ids) putChart(charts.find((c) => c.id === id)!);
    if (kind === 'dataset') for (const id of ids) putDataset(datasets.find((d) => d.id === id)!);
    if (kind !== 'dashboard') return zipSync(files);
    for (const id of ids) {
      const d = dashboards.find((x) => x.id === id)!;
      const dashCharts = d.chartIds.map((cid) => charts.find((c) => c.id === cid)).filter((c): c is FakeChart => !!c);
      const position: Record<string, unknown> = {
        DASHBOARD_VERSION_KEY: 'v2',
        ROOT_ID: { type: 'ROOT', id: 'ROOT_ID', children: ['GRID_ID'] },
        GRID_ID: { type: 'GRID', id: 'GRID_ID', children: dashCharts.map((c) => `CHART-${c.id}`), parents: ['ROOT_ID'] },
      };
      for (const c of dashCharts) {
        position[`CHART-${c.id}`] = {
          type: 'CHART',
          id: `CHART-${c.id}`,
          children: [],
          parents: ['ROOT_ID', 'GRID_ID'],
          meta: { chartId: c.id, uuid: c.uuid, sliceName: c.slice_name, width: 4, height: 50 },
        };
      }
      put(`dashboards/${fileName(d.dashboard_title)}_${d.id}.yaml`, {
        dashboard_title: d.dashboard_title,
        description: null,
        css: d.css,
        slug: d.slug,
        certified_by: null,
        position,
        metadata: JSON.parse(d.json_metadata) as unknown,
        version: '1.0.0',
        uuid: d.uuid,
      });
      for (const c of dashCharts) putChart(c);
    }
    return zipSync(files);
  };

  /** The bundle's files, root folder stripped, or undefined when it is not a readable export. */
  const readBundle = (zip: Uint8Array): FakeBundleFiles | undefined => {
    try {
      const out: FakeBundleFiles = {};
      for (const [name, data] of Object.entries(unzipSync(zip))) {
        const slash = name.indexOf('/');
        if (slash < 0 || !/\.ya?ml$/.test(name)) continue;
        out[name.slice(slash + 1)] = (parseYaml(strFromU8(data)) ?? {}) as Record<string, unknown>;
      }
      return out['metadata.yaml'] ? out : undefined;
    } catch {
      return undefined;
    }
  };

  /** Creates what the bundle holds and the instance lacks (by uuid); an existing dashboard is overwritten. */
  const importBundle = (files: FakeBundleFiles) => {
    const of = (kind: string) =>
      Object.entries(files)
        .filter(([p]) => p.startsWith(`${kind}/`))
        .map(([, c]) => c as Record<string, any>);
    for (const c of of('databases')) {
      if (!databases.some((d) => d.uuid === c.uuid)) {
        databases.push({ id: nextId(databases), uuid: String(c.uuid), database_name: String(c.database_name), backend: 'sqlite' });
      }
    }
    for (const c of of('datasets')) {
      if (datasets.some((d) => d.uuid === c.uuid)) continue;
      datasets.push({
        id: nextId(datasets),
        uuid: String(c.uuid),
        table_name: String(c.table_name),
        schema: (c.schema as string | null) ?? null,
        sql: (c.sql as string | null) ?? null,
        database: databases.find((d) => d.uuid === c.database_uuid)!.id,
        owners: [1],
        columns: ((c.columns as Array<{ column_name: string }> | undefined) ?? []).map((x) => x.column_name),
      });
    }
    for (const c of of('charts')) {
      if (charts.some((x) => x.uuid === c.uuid)) continue;
      charts.push({
        id: nextId(charts),
        uuid: String(c.uuid),
        slice_name: String(c.slice_name),
        viz_type: String(c.viz_type),
        dataset: datasets.find((d) => d.uuid === c.dataset_uuid)!.id,
        params: (c.params as Record<string, unknown>) ?? {},
        query_context: typeof c.query_context === 'string' ? c.query_context : null,
      });
    }
    for (const c of of('dashboards')) {
      const position = (c.position ?? {}) as Record<string, { type?: string; meta?: { uuid?: string } }>;
      const chartIds = Object.values(position)
        .filter((n) => n?.type === 'CHART' && n.meta?.uuid)
        .map((n) => charts.find((x) => x.uuid === n.meta!.uuid)?.id)
        .filter((id): id is number => id !== undefined);
      clock += 1000;
      const existing = dashboards.find((d) => d.uuid === c.uuid);
      if (existing) {
        Object.assign(existing, {
          dashboard_title: String(c.dashboard_title),
          slug: c.slug ?? null,
          chartIds,
          changed_on: new Date(clock),
        });
        continue;
      }
      const d = addDashboard({ title: String(c.dashboard_title), slug: (c.slug as string | null) ?? null, charts: chartIds });
      d.uuid = String(c.uuid);
    }
  };

  /** One field of a multipart body. */
  const formPart = (req: http.IncomingMessage, body: Buffer, name: string): Buffer | undefined => {
    const m = /boundary=(?:"([^"]+)"|([^;]+))/i.exec(String(req.headers['content-type'] ?? ''));
    if (!m) return undefined;
    const boundary = Buffer.from(`--${m[1] ?? m[2]}`);
    for (let start = body.indexOf(boundary); start >= 0;) {
      const next = body.indexOf(boundary, start + boundary.length);
      if (next < 0) break;
      const part = body.subarray(start + boundary.length + 2, next - 2);
      const headerEnd = part.indexOf('\r\n\r\n');
      if (headerEnd >= 0 && part.subarray(0, headerEnd).toString('latin1').includes(`name="${name}"`)) return part.subarray(headerEnd + 4);
      start = next;
    }
    return undefined;
  };

  // ---- responses -------------------------------------------------------------------------------

  type Res = http.ServerResponse;
  const json = (res: Res, status: number, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  };
  const htmlAllowed = (req: http.IncomingMessage) => {
    const accept = String(req.headers.accept ?? '*/*');
    return /text\/html|\*\/\*/.test(accept);
  };
  /** Like Superset's CommandException/HTTPException handlers: an HTML page when Accept admits it. */
  const error = (req: http.IncomingMessage, res: Res, status: number, message: string) => {
    if (htmlAllowed(req) && status >= 404) {
      res.writeHead(status, { 'content-type': 'text/html; charset=utf-8' });
      res.end(`<!doctype html><html><body><h1>${status}</h1><p>${message}</p></body></html>`);
      return;
    }
    json(res, status, { message });
  };
  const sip40 = (res: Res, status: number, message: string, extra: Record<string, unknown> = {}, errorType = 'GENERIC_COMMAND_ERROR') =>
    json(res, status, {
      errors: [
        {
          message,
          error_type: errorType,
          level: 'error',
          extra: {
            ...extra,
            issue_codes: [{ code: 1010, message: 'Issue 1010 - Superset encountered an error while running a command.' }],
          },
        },
      ],
    });

  const signToken = (sub: number, kind: 'access' | 'refresh') => {
    const header = Buffer.from(JSON.stringify({ alg: 'HS256', typ: 'JWT' })).toString('base64url');
    const now = Math.floor(Date.now() / 1000);
    const exp = kind === 'access' ? now + options.tokenTtlSeconds : now + 30 * 86400;
    const payload = Buffer.from(JSON.stringify({ sub: String(sub), type: kind, exp, gen: tokenGeneration })).toString('base64url');
    const sig = createHash('sha256').update(`${header}.${payload}.${secret}`).digest('base64url');
    return `${header}.${payload}.${sig}`;
  };
  const verifyToken = (token: string, kind: 'access' | 'refresh'): { sub: number } | 'expired' | 'invalid' => {
    const [h, p, s] = token.split('.');
    if (!h || !p || !s) return 'invalid';
    if (createHash('sha256').update(`${h}.${p}.${secret}`).digest('base64url') !== s) return 'invalid';
    const claims = JSON.parse(Buffer.from(p, 'base64url').toString()) as { sub: string; type: string; exp: number; gen: number };
    if (claims.type !== kind || claims.gen !== tokenGeneration) return 'invalid';
    if (claims.exp * 1000 < Date.now()) return 'expired';
    return { sub: Number(claims.sub) };
  };

  const readBody = (req: http.IncomingMessage) =>
    new Promise<Buffer>((resolve) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => resolve(Buffer.concat(chunks)));
    });

  const cookieOf = (req: http.IncomingMessage, name: string) => {
    for (const part of String(req.headers.cookie ?? '').split(';')) {
      const [k, ...v] = part.trim().split('=');
      if (k === name) return v.join('=');
    }
    return undefined;
  };

  // ---- list machinery ----------------------------------------------------------------------------

  interface ListQ {
    filters?: Array<{ col: string; opr: string; value: unknown }>;
    order_column?: string;
    order_direction?: 'asc' | 'desc';
    page?: number;
    page_size?: number;
    filter?: string;
  }

  const pageOf = <T extends { id: number }>(rows: T[], q: ListQ) => {
    let size = q.page_size ?? 20;
    if (size > 100 || size < 1) size = 100;
    const page = q.page ?? 0;
    const slice = rows.slice(page * size, page * size + size);
    return { count: rows.length, ids: slice.map((r) => r.id), result: slice };
  };

  const filterDashboards = (q: ListQ): FakeDashboard[] | string => {
    let rows = [...dashboards];
    for (const f of q.filters ?? []) {
      const v = f.value;
      if (f.col === 'dashboard_title' && f.opr === 'title_or_slug') {
        const needle = String(v).toLowerCase();
        rows = rows.filter((d) => d.dashboard_title.toLowerCase().includes(needle) || (d.slug ?? '').toLowerCase().includes(needle));
      } else if (f.col === 'owners' && f.opr === 'rel_m_m') rows = rows.filter((d) => d.owners.includes(Number(v)));
      else if (f.col === 'changed_by' && f.opr === 'rel_o_m') rows = rows.filter((d) => d.changed_by === Number(v));
      else if (f.col === 'id' && f.opr === 'in') rows = rows.filter((d) => (v as number[]).includes(d.id));
      else if (f.col === 'published' && f.opr === 'eq') rows = rows.filter((d) => d.published === v);
      else if (f.col === 'slug' && f.opr === 'eq') rows = rows.filter((d) => d.slug === v);
      else if (f.col === 'uuid' && f.opr === 'eq' && !options.listsWithoutUuid) rows = rows.filter((d) => d.uuid === v);
      else if (f.col === 'id' && f.opr === 'gt') rows = rows.filter((d) => d.id > Number(v));
      else return `Filter column: ${f.col} not allowed to filter`;
    }
    const col = q.order_column ?? 'changed_on';
    const dir = (q.order_direction ?? 'desc') === 'asc' ? 1 : -1;
    if (col === 'changed_on' || col === 'changed_on_delta_humanized')
      rows.sort((a, b) => dir * (a.changed_on.getTime() - b.changed_on.getTime()));
    else if (col === 'dashboard_title') rows.sort((a, b) => dir * a.dashboard_title.localeCompare(b.dashboard_title));
    else return `Invalid order by column: ${col}`;
    return rows;
  };

  // ---- routing -----------------------------------------------------------------------------------

  const route = async (req: http.IncomingMessage, res: Res): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://fake');
    const method = req.method ?? 'GET';
    const path = url.pathname;
    let q: ListQ & Record<string, unknown> = {};
    const rawQ = url.searchParams.get('q');
    if (rawQ !== null) {
      try {
        q = rison.decode(rawQ);
      } catch {
        return json(res, 400, { message: 'Not a valid rison/json argument' });
      }
    }
    const auth = String(req.headers.authorization ?? '');
    const record: RecordedRequest = {
      method,
      path,
      q: rawQ === null ? undefined : q,
      accept: req.headers.accept,
      authorized: auth.startsWith('Bearer '),
    };
    requests.push(record);
    for (const w of watchers.filter((x) => matches(x, method, path) && (!x.query || x.query(record.q)))) {
      watchers.splice(watchers.indexOf(w), 1);
      w.resolve();
    }
    const held = holds.find((x) => matches(x, method, path) && (!x.when || x.when()));
    if (held) await held.until.catch(() => {});

    const delay = delays.find(
      (d) => (!d.method || d.method === method) && (!d.path || (typeof d.path === 'string' ? path === d.path : d.path.test(path))),
    );
    if (delay) await new Promise((r) => setTimeout(r, delay.ms));
    const failure = failures.find(
      (f) =>
        f.remaining > 0 &&
        (!f.method || f.method === method) &&
        (!f.path || (typeof f.path === 'string' ? path === f.path : f.path.test(path))),
    );
    if (failure) {
      failure.remaining--;
      switch (failure.mode) {
        case 'timeout':
          return; // never answer; the socket is destroyed on close()
        case 'reset':
          req.socket.destroy();
          return;
        case 'garbage':
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end('{"count": 3, "result": [ this is not json');
          return;
        case 'truncated-json':
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end('');
          return;
        case 'html':
          res.writeHead(200, { 'content-type': 'text/html' });
          res.end('<!doctype html><html><body>Maintenance</body></html>');
          return;
        case 'empty':
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end('null');
          return;
        case '403':
          return json(res, 403, { message: 'Forbidden' });
        default:
          return failure.mode === '500'
            ? json(res, 500, { message: 'Fatal error' })
            : json(res, Number(failure.mode), { message: 'Bad gateway' });
      }
    }

    // anonymous endpoints
    if (method === 'GET' && path === '/health') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      return void res.end('OK');
    }
    if (method === 'GET' && path === '/static/version_info.json') {
      if (!options.version) return error(req, res, 404, 'Not Found');
      return json(res, 200, { GIT_SHA: '', version: options.version });
    }
    const body = method === 'GET' ? Buffer.alloc(0) : await readBody(req);
    if (method === 'POST' && path === '/api/v1/security/login') {
      let b: { username?: string; password?: string; provider?: string; refresh?: boolean };
      try {
        b = JSON.parse(body.toString());
      } catch {
        return json(res, 400, { message: 'Request payload is not JSON' });
      }
      if (!b.provider) return json(res, 500, { message: 'Fatal error' });
      const user = users.find((u) => u.username === b.username && u.password === b.password && u.active);
      if (!user) return json(res, 401, { message: 'Not authorized' });
      return json(res, 200, {
        access_token: signToken(user.id, 'access'),
        ...(b.refresh ? { refresh_token: signToken(user.id, 'refresh') } : {}),
      });
    }
    if (method === 'POST' && path === '/api/v1/security/refresh') {
      const v = verifyToken(auth.replace(/^Bearer /, ''), 'refresh');
      if (typeof v === 'string') return json(res, 401, { msg: v === 'expired' ? 'Token has expired' : 'Signature verification failed' });
      return json(res, 200, { access_token: signToken(v.sub, 'access') });
    }

    // everything else needs a valid access token
    if (!auth.startsWith('Bearer ')) return json(res, 401, { msg: 'Missing Authorization Header' });
    const who = verifyToken(auth.slice(7), 'access');
    if (who === 'expired') return json(res, 401, { msg: 'Token has expired' });
    if (who === 'invalid') return json(res, 422, { msg: 'Signature verification failed' });

    if (method === 'GET' && path === '/api/v1/security/csrf_token/') {
      const session = randomBytes(12).toString('hex');
      const token = randomBytes(16).toString('hex');
      sessions.set(session, token);
      return json(res, 200, { result: token }, { 'set-cookie': `session=${session}; HttpOnly; Path=/; SameSite=Lax` });
    }
    if (method !== 'GET') {
      const session = cookieOf(req, 'session');
      const ok = session !== undefined && sessions.get(session) === req.headers['x-csrftoken'] && req.headers.referer !== undefined;
      const exempt = path === '/api/v1/chart/data';
      if (!ok && !exempt) {
        if (String(req.headers['content-type'] ?? '').startsWith('multipart/')) {
          res.writeHead(302, { location: '/login/?next=' + encodeURIComponent(path) });
          return void res.end();
        }
        return sip40(res, 400, '400 Bad Request: The CSRF token is missing.', {}, 'GENERIC_BACKEND_ERROR');
      }
    }

    let m: RegExpExecArray | null;
    // dashboards
    if (method === 'GET' && path === '/api/v1/dashboard/') {
      if (options.fabFilterRace) {
        sharedFilters = q.filters; // self._filters.clear_filters(); rest_add_filters(...)
        await new Promise((r) => setTimeout(r, 15));
        q = { ...q, filters: sharedFilters }; // get_joined_filters(): whatever the last request left there
      }
      const rows = filterDashboards(q);
      if (typeof rows === 'string') return json(res, 400, { message: rows });
      const page = pageOf(rows, q);
      return json(res, 200, { ...page, result: page.result.map(dashboardRow) });
    }
    if (method === 'GET' && path === '/api/v1/dashboard/related/owners') {
      const needle = String(q.filter ?? '').toLowerCase();
      const hits = users.filter(
        (u) => `${u.first_name} ${u.last_name}`.toLowerCase().includes(needle) || u.username.toLowerCase().includes(needle),
      );
      const page = pageOf(hits, q);
      return json(res, 200, {
        count: page.count,
        result: page.result.map((u) => ({
          value: u.id,
          text: `${u.first_name} ${u.last_name}`,
          extra: { active: u.active, email: u.email },
        })),
      });
    }
    if (method === 'GET' && (m = /^\/api\/v1\/(dashboard|chart|dataset|database)\/_info$/.exec(path))) {
      const cols = options.filterColumns?.[m[1] as 'dashboard'];
      return json(res, 200, {
        permissions: options.permissions,
        ...(cols ? { filters: Object.fromEntries(cols.map((c) => [c, [{ name: 'Equal to', operator: 'eq' }]])) } : {}),
      });
    }
    if (method === 'GET' && (m = /^\/api\/v1\/(chart|dataset)\/export\/$/.exec(path))) {
      const ids = (Array.isArray(q) ? q : []) as number[];
      const rows: Array<{ id: number }> = m[1] === 'chart' ? charts : datasets;
      if (!ids.length || ids.some((id) => !rows.some((r) => r.id === id))) return error(req, res, 404, 'Not found');
      res.writeHead(200, { 'content-type': 'application/zip' });
      return void res.end(exportBundle(ids, m[1] as 'chart'));
    }
    if (method === 'GET' && path === '/api/v1/dashboard/export/') {
      const ids = (Array.isArray(q) ? q : []) as number[];
      if (!ids.length || ids.some((id) => !dashboards.some((d) => d.id === id))) return error(req, res, 404, 'Not found');
      res.writeHead(200, { 'content-type': 'application/zip' });
      return void res.end(exportBundle(ids));
    }
    if (method === 'POST' && path === '/api/v1/dashboard/import/') {
      const text = body.toString('latin1');
      if (!/name="formData"/.test(text)) return json(res, 400, { message: 'Arguments are not correct' });
      if (!/PK\x03\x04/.test(text)) return json(res, 500, { message: 'Import dashboard failed for an unknown reason' });
      const zip = formPart(req, body, 'formData');
      const files = zip ? readBundle(zip) : undefined;
      const failure = files && importFailures.find((f) => f.when(files));
      if (failure) return json(res, failure.status, typeof failure.body === 'function' ? failure.body(files) : failure.body);
      if (formPart(req, body, 'overwrite')?.toString('latin1') !== 'true')
        return sip40(res, 422, 'Error importing dashboard', {
          'dashboards/x.yaml': 'Dashboard already exists and `overwrite=true` was not passed',
        });
      if (files) importBundle(files);
      return json(res, 200, { message: 'OK' });
    }
    if (method === 'GET' && (m = /^\/api\/v1\/dashboard\/([A-Za-z0-9_-]+)(\/charts|\/datasets)?$/.exec(path))) {
      const key = m[1];
      const d = dashboards.find((x) => String(x.id) === key || x.slug === key || x.uuid === key);
      if (!d) return error(req, res, 404, 'Not found');
      if (m[2] === '/charts') {
        return json(res, 200, {
          result: d.chartIds
            .map((id) => charts.find((c) => c.id === id))
            .filter((c): c is FakeChart => !!c)
            .map((c) => ({
              id: c.id,
              slice_name: c.slice_name,
              slice_url: `/explore/?slice_id=${c.id}`,
              description: null,
              cache_timeout: null,
              changed_on: d.changed_on.toISOString().replace('Z', ''),
              certified_by: null,
              certification_details: null,
              description_markeddown: '',
              form_data: { ...c.params, slice_id: c.id },
            })),
        });
      }
      if (m[2] === '/datasets') {
        const ids = [
          ...new Set(d.chartIds.map((id) => charts.find((c) => c.id === id)?.dataset).filter((x): x is number => x !== undefined)),
        ];
        return json(res, 200, {
          result: ids
            .map((id) => datasets.find((x) => x.id === id))
            .filter((x): x is FakeDataset => !!x)
            .map((ds) => {
              const db = databases.find((x) => x.id === ds.database);
              return {
                id: ds.id,
                uid: `${ds.id}__table`,
                name: `${ds.schema ? ds.schema + '.' : ''}${ds.table_name}`,
                table_name: ds.table_name,
                datasource_name: ds.table_name,
                schema: ds.schema,
                sql: ds.sql,
                type: 'table',
                database: db ? { id: db.id, name: db.database_name, backend: db.backend } : null,
                columns: ds.columns.map((c) => ({ column_name: c, type: 'TEXT', is_dttm: c === 'ds' })),
                metrics: [{ metric_name: 'count', expression: 'COUNT(*)' }],
              };
            }),
        });
      }
      return json(res, 200, {
        id: d.id,
        result: {
          ...dashboardRow(d),
          changed_on: d.changed_on.toISOString().replace('Z', ''),
          css: d.css,
          json_metadata: d.json_metadata,
          position_json: d.position_json,
          charts: d.chartIds.map((id) => charts.find((c) => c.id === id)?.slice_name).filter(Boolean),
          owners: d.owners.map((o) => userSummary(o)).filter(Boolean),
        },
      });
    }
    if (method === 'GET' && (m = /^\/api\/v1\/dashboard\/(\d+)\/thumbnail\/([A-Za-z0-9_-]+)\/$/.exec(path))) {
      const d = dashboards.find((x) => x.id === Number(m![1]));
      if (!options.thumbnails || !d) return error(req, res, 404, 'Not found');
      if (m[2] !== digestOf(d)) {
        res.writeHead(302, { location: `/api/v1/dashboard/${d.id}/thumbnail/${digestOf(d)}/` });
        return void res.end();
      }
      if (d.thumbnail === 'pending') {
        return json(res, 202, {
          cache_key: digestOf(d),
          dashboard_url: `/superset/dashboard/${d.id}/`,
          image_url: `/api/v1/dashboard/${d.id}/thumbnail/${digestOf(d)}/`,
          task_status: 'Pending',
          task_updated_at: new Date().toISOString(),
        });
      }
      res.writeHead(200, { 'content-type': d.thumbnailImage?.contentType ?? 'image/png' });
      return void res.end(d.thumbnailImage?.body ?? PNG);
    }
    // datasets, databases, charts
    if (method === 'GET' && (m = /^\/api\/v1\/dataset\/(\d+)$/.exec(path))) {
      // One dataset, as Superset shows it: its row with its columns and metrics (4.1 and 5.0 leave the uuid out of a
      // detail, as listsWithoutUuid does here).
      const ds = datasets.find((x) => x.id === Number(m![1]));
      if (!ds) return error(req, res, 404, 'Not found');
      return json(res, 200, {
        id: ds.id,
        result: {
          ...datasetRow(ds),
          columns: ds.columns.map((c) => ({ column_name: c, type: 'TEXT', is_dttm: c === 'ds' })),
          metrics: [{ metric_name: 'count', expression: 'COUNT(*)' }],
        },
      });
    }
    if (method === 'GET' && path === '/api/v1/dataset/') {
      let rows = [...datasets];
      for (const f of q.filters ?? []) {
        if (f.col === 'table_name' && f.opr === 'ct')
          rows = rows.filter((d) => d.table_name.toLowerCase().includes(String(f.value).toLowerCase()));
        else if (f.col === 'table_name' && f.opr === 'eq') rows = rows.filter((d) => d.table_name === f.value);
        else if (f.col === 'uuid' && f.opr === 'eq' && !options.listsWithoutUuid) rows = rows.filter((d) => d.uuid === f.value);
        else if (f.col === 'id' && f.opr === 'gt') rows = rows.filter((d) => d.id > Number(f.value));
        else if (f.col === 'id' && f.opr === 'eq') rows = rows.filter((d) => d.id === Number(f.value));
        else if (f.col === 'database' && f.opr === 'rel_o_m') rows = rows.filter((d) => d.database === Number(f.value));
        else if (f.col === 'id' && f.opr === 'in') rows = rows.filter((d) => (f.value as number[]).includes(d.id));
        else return json(res, 400, { message: `Filter column: ${f.col} not allowed to filter` });
      }
      rows.sort((a, b) => a.table_name.localeCompare(b.table_name) || a.id - b.id);
      if (q.order_direction === 'desc') rows.reverse();
      const page = pageOf(rows, q);
      return json(res, 200, { ...page, result: page.result.map(datasetRow) });
    }
    if (method === 'GET' && path === '/api/v1/database/') {
      const rows = [...databases].sort((a, b) => a.database_name.localeCompare(b.database_name));
      const size = q.page_size === -1 ? rows.length || 1 : q.page_size;
      const page = pageOf(rows, { ...q, page_size: size === rows.length ? Math.min(100, size) : size });
      return json(res, 200, {
        ...page,
        result: page.result.map((d) => ({ ...d, expose_in_sqllab: true, allow_dml: false, allow_run_async: false })),
      });
    }
    if (method === 'GET' && (m = /^\/api\/v1\/database\/(\d+)\/(connection|catalogs\/)$/.exec(path))) {
      const db = databases.find((x) => x.id === Number(m![1]));
      if (!db) return error(req, res, 404, 'Not found');
      if (m[2] === 'connection')
        return json(res, 200, { result: { id: db.id, database_name: db.database_name, sqlalchemy_uri: connectionUri(db) } });
      return json(res, 200, { result: [fileName(db.database_name)] });
    }
    if (method === 'GET' && (m = /^\/api\/v1\/database\/(\d+)$/.exec(path))) {
      const db = databases.find((x) => x.id === Number(m![1]));
      if (!db) return error(req, res, 404, 'Not found');
      return json(res, 200, { id: db.id, result: { ...db, driver: 'psycopg2' } });
    }
    if (method === 'POST' && path === '/api/v1/chart/data') {
      // One result per query of the query context, as Superset answers.
      let queries = 1;
      try {
        const parsed = JSON.parse(body.toString('utf8')) as { queries?: unknown[] };
        record.json = parsed;
        if (Array.isArray(parsed.queries) && parsed.queries.length) queries = parsed.queries.length;
      } catch {
        // not JSON: one result, as before
      }
      return json(res, 200, {
        result: Array.from({ length: queries }, () => ({
          status: 'success',
          rowcount: 1,
          colnames: ['region'],
          data: [{ region: 'EMEA' }],
        })),
      });
    }
    if (method === 'GET' && (m = /^\/api\/v1\/chart\/(\d+)$/.exec(path))) {
      // One chart, as Superset shows it: its params as a string, its saved query context (a string, or null).
      const c = charts.find((x) => x.id === Number(m![1]));
      if (!c) return error(req, res, 404, 'Not found');
      const { dataset, params, ...rest } = c;
      return json(res, 200, {
        id: c.id,
        result: {
          ...rest,
          params: JSON.stringify(params),
          query_context: c.query_context ?? null,
          datasource_id: dataset,
          datasource_type: 'table',
        },
      });
    }
    if (method === 'GET' && path === '/api/v1/chart/') {
      let rows = [...charts];
      for (const f of q.filters ?? []) {
        if (f.col === 'uuid' && f.opr === 'eq' && !options.listsWithoutUuid) rows = rows.filter((c) => c.uuid === f.value);
        else if (f.col === 'id' && f.opr === 'gt') rows = rows.filter((c) => c.id > Number(f.value));
        else if (f.col === 'dashboards' && f.opr === 'rel_m_m')
          rows = rows.filter((c) => dashboards.some((d) => d.id === Number(f.value) && d.chartIds.includes(c.id)));
        else if (f.col === 'id' && f.opr === 'in') rows = rows.filter((c) => (f.value as number[]).includes(c.id));
        else return json(res, 400, { message: `Filter column: ${f.col} not allowed to filter` });
      }
      const page = pageOf(rows, q);
      return json(res, 200, {
        ...page,
        result: page.result.map((c) => ({
          id: c.id,
          ...(options.listsWithoutUuid ? {} : { uuid: c.uuid }),
          slice_name: c.slice_name,
          viz_type: c.viz_type,
          datasource_id: c.dataset,
          datasource_type: 'table',
          // As the detail shows them (no owners, tags or certification on a fake chart).
          params: JSON.stringify(c.params),
          // Slice.form_data, as the dashboard's chart list gives it; the dashboards the chart is on.
          form_data: { ...c.params, slice_id: c.id },
          dashboards: dashboards.filter((d) => d.chartIds.includes(c.id)).map((d) => ({ id: d.id })),
          owners: [],
          tags: [],
          certified_by: null,
          certification_details: null,
        })),
      });
    }
    // row-level security
    const rlsRead = (r: FakeRlsRule) => ({
      id: r.id,
      name: r.name,
      filter_type: r.filter_type,
      clause: r.clause,
      group_key: r.group_key,
      tables: r.tables.map((id) => ({ id, table_name: datasets.find((d) => d.id === id)?.table_name ?? '' })),
      roles: r.roles.map((id) => ({ id, name: roles.find((x) => x.id === id)?.name ?? '' })),
    });
    if (method === 'GET' && path === '/api/v1/rowlevelsecurity/') {
      const rows = [...rlsRules].sort((a, b) => a.name.localeCompare(b.name));
      const page = pageOf(rows, q);
      return json(res, 200, { ...page, result: page.result.map(rlsRead) });
    }
    // Superset's related-field lists of roles (a dashboard's roles, a rule's roles): the same rows.
    if (method === 'GET' && (path === '/api/v1/rowlevelsecurity/related/roles' || path === '/api/v1/dashboard/related/roles')) {
      const page = pageOf(roles, q);
      return json(res, 200, { count: page.count, result: page.result.map((r) => ({ value: r.id, text: r.name, extra: {} })) });
    }
    if ((m = /^\/api\/v1\/rowlevelsecurity\/(\d+)$/.exec(path)) && (method === 'GET' || method === 'PUT')) {
      const rule = rlsRules.find((r) => r.id === Number(m![1]));
      if (!rule) return error(req, res, 404, 'Not found');
      if (method === 'GET') return json(res, 200, { id: rule.id, result: { ...rlsRead(rule), description: rule.description } });
      Object.assign(rule, JSON.parse(body.toString('utf8')));
      return json(res, 201, { id: rule.id, result: {} });
    }
    if (method === 'POST' && path === '/api/v1/rowlevelsecurity/') {
      const input = JSON.parse(body.toString('utf8')) as Omit<FakeRlsRule, 'id'>;
      if (rlsRules.some((r) => r.name === input.name)) return json(res, 422, { message: 'Name must be unique' });
      const rule: FakeRlsRule = { ...input, id: rlsRules.length ? Math.max(...rlsRules.map((r) => r.id)) + 1 : 1 };
      rlsRules.push(rule);
      return json(res, 201, { id: rule.id, result: input });
    }
    // security API
    if (method === 'GET' && path === '/api/v1/security/users/') {
      if (!options.securityApi) return error(req, res, 404, 'Not Found');
      let rows = [...users];
      for (const f of q.filters ?? []) {
        if (f.col === 'username' && f.opr === 'ct')
          rows = rows.filter((u) => u.username.toLowerCase().includes(String(f.value).toLowerCase()));
        else if (f.col === 'username' && f.opr === 'eq') rows = rows.filter((u) => u.username === f.value);
        else if (f.col === 'id' && f.opr === 'in') rows = rows.filter((u) => (f.value as number[]).includes(u.id));
        else return json(res, 400, { message: `Filter column: ${f.col} not allowed to filter` });
      }
      const page = pageOf(rows, q);
      return json(res, 200, { ...page, result: page.result.map(({ password: _pw, ...u }) => u) });
    }
    return error(req, res, 404, 'Not Found');
  };

  const sockets = new Set<Socket>();
  const server = http.createServer((req, res) => {
    route(req, res).catch((err: unknown) => {
      if (!res.headersSent) json(res, 500, { message: `fake superset error: ${(err as Error).message}` });
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;

  return {
    baseUrl: `http://127.0.0.1:${port}`,
    rlsRules,
    roles,
    username: options.username,
    password: options.password,
    requests,
    users,
    dashboards,
    databases,
    datasets,
    charts,
    options,
    addUser,
    addDashboard,
    addDatabase,
    addDataset,
    addChart,
    seedDashboards,
    fail(match, mode, times = Number.POSITIVE_INFINITY) {
      failures.push({ ...match, mode, remaining: times });
    },
    failImport(failure) {
      importFailures.push(failure);
    },
    setVersion(version) {
      options.version = version;
    },
    omitFromExports(fields) {
      omittedFields = fields;
    },
    slow(match, ms) {
      delays.push({ ...match, ms });
    },
    hold(match, until) {
      holds.push({ ...match, until });
    },
    seen(match) {
      return new Promise<void>((resolve) => watchers.push({ ...match, resolve }));
    },
    clearFailures() {
      holds = [];
      delays = [];
      failures = [];
      importFailures = [];
    },
    revokeTokens() {
      tokenGeneration++;
    },
    count(path, since = 0) {
      return requests.slice(since).filter((r) => (typeof path === 'string' ? r.path === path : path.test(r.path))).length;
    },
    mark() {
      return requests.length;
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
