/**
 * The one Superset client, used by the API and by Temporal activities: a transport and one small
 * module per resource behind this façade, so callers write `superset.dashboards.export(ids)`.
 *
 *   transport/transport.ts   the wire: undici pools (through the egress policy's connector when
 *                            there is one), deadlines, size caps, retries of GETs, typed errors
 *   transport/session.ts     login, token renewal, CSRF token and session cookie
 *   transport/answers.ts     what a status or body means (typed errors of ./errors.ts)
 *   transport/paths.ts       the base URL and the fixed API paths requests may go to
 *   transport/paging.ts      FAB list endpoints: a page, every page, related-field lists
 *   transport/wire.ts        an answer read within its cap; wire failures told apart
 *   resources/instance.ts    release, the service account's permissions, capabilities
 *   resources/dashboards.ts  charts.ts  datasets.ts  databases.ts  sql-lab.ts  rls.ts
 *   resources/chart-data.ts  the chart-data query, synchronous or an async job followed to its end
 *   resources/security.ts    upstream accounts (security API or related owners)
 *   resources/assets.ts      ZIP bundles: export and import
 *   resources/reports.ts  tags.ts  annotation-layers.ts  css-templates.ts  saved-queries.ts
 *   resources/themes.ts  embedded.ts
 *                            what people build around a dashboard that no export carries
 *   resources/users.ts  roles.ts  object-meta.ts
 *                            accounts and roles to map by name; owners, roles, tags and
 *                            certification of one dashboard, chart or dataset
 *
 * Secrets (password, tokens, cookies) are never logged.
 */
import { AnnotationLayers } from './resources/annotation-layers.ts';
import { Assets } from './resources/assets.ts';
import { ChartData } from './resources/chart-data.ts';
import { Charts } from './resources/charts.ts';
import { CssTemplates } from './resources/css-templates.ts';
import { Dashboards } from './resources/dashboards.ts';
import { Embedded } from './resources/embedded.ts';
import { Databases } from './resources/databases.ts';
import { Datasets } from './resources/datasets.ts';
import { Instance } from './resources/instance.ts';
import { ObjectMetas } from './resources/object-meta.ts';
import { Reports } from './resources/reports.ts';
import { RowLevelSecurity } from './resources/rls.ts';
import { Roles } from './resources/roles.ts';
import { SavedQueries } from './resources/saved-queries.ts';
import { Security } from './resources/security.ts';
import { SqlLab } from './resources/sql-lab.ts';
import { Tags } from './resources/tags.ts';
import { Themes } from './resources/themes.ts';
import { Users } from './resources/users.ts';
import { CAPABILITIES_RECHECK_MS, type SupersetClientOptions } from './transport/options.ts';
import { Pager } from './transport/paging.ts';
import { SupersetTransport, type QueryParams } from './transport/transport.ts';
import type { Method } from './transport/wire.ts';
import type {
  ChartDataQueryContext,
  ChartDataResponse,
  DashboardChart,
  DashboardDetail,
  DashboardListItem,
  DatabaseInfo,
  DatasetDetail,
  DatasetListItem,
  ImportOptions,
  ListQuery,
  ListResponse,
  Resource,
  RlsRule,
  RlsRuleWrite,
  SqlLabQuery,
  SqlLabResult,
  SupersetCapabilities,
  SupersetConnection,
  Thumbnail,
  UpstreamAccount,
  UpstreamRole,
} from './types.ts';

export { DASHBOARD_LIST_COLUMNS } from './resources/dashboards.ts';
export { DATABASE_LIST_COLUMNS } from './resources/databases.ts';
export { DATASET_LIST_COLUMNS } from './resources/datasets.ts';
export { displayName, type ResolvedUsername } from './resources/security.ts';
export { CAPABILITIES_RECHECK_MS, type ClientLogger, type RetryPolicy, type SupersetClientOptions } from './transport/options.ts';
export { MAX_PAGE_SIZE } from './transport/paging.ts';
export { normaliseBaseUrl, seg } from './transport/paths.ts';
export type { Resource } from './types.ts';

export class SupersetClient {
  readonly baseUrl: string;
  /** Release, permissions and capabilities of the instance. */
  readonly instance: Instance;
  /** Any FAB list endpoint by resource: a page, every row, every row with Superset's count. */
  readonly lists: Pager;
  readonly dashboards: Dashboards;
  readonly charts: Charts;
  readonly datasets: Datasets;
  readonly databases: Databases;
  readonly sqlLab: SqlLab;
  readonly rls: RowLevelSecurity;
  readonly security: Security;
  readonly assets: Assets;
  readonly reports: Reports;
  readonly tags: Tags;
  readonly annotationLayers: AnnotationLayers;
  readonly cssTemplates: CssTemplates;
  readonly savedQueries: SavedQueries;
  /** Themes (6.0+) and dashboards' embedded configurations. */
  readonly themes: Themes;
  readonly embedded: Embedded;
  readonly users: Users;
  readonly roles: Roles;
  /** Owners, dashboard roles, custom tags, certification and chart params of one object. */
  readonly meta: ObjectMetas;
  private readonly http: SupersetTransport;

  constructor(conn: SupersetConnection, opts: SupersetClientOptions = {}) {
    this.http = new SupersetTransport(conn, opts);
    this.baseUrl = this.http.baseUrl;
    this.lists = new Pager(this.http, opts.listConcurrency);
    this.assets = new Assets(this.http);
    this.dashboards = new Dashboards(this.http, this.lists, this.assets);
    this.charts = new Charts(this.http, this.lists, new ChartData(this.http, opts.asyncQueries));
    this.datasets = new Datasets(this.http, this.lists);
    this.databases = new Databases(this.lists, this.http);
    this.sqlLab = new SqlLab(this.http);
    this.rls = new RowLevelSecurity(this.http, this.lists);
    this.security = new Security(this.http);
    this.reports = new Reports(this.http, this.lists);
    this.tags = new Tags(this.http, this.lists);
    this.annotationLayers = new AnnotationLayers(this.http, this.lists);
    this.cssTemplates = new CssTemplates(this.http, this.lists);
    this.savedQueries = new SavedQueries(this.http, this.lists);
    this.themes = new Themes(this.http, this.lists);
    this.embedded = new Embedded(this.http);
    this.users = new Users(this.lists);
    this.roles = new Roles(this.lists);
    this.meta = new ObjectMetas(this.http, this.lists);
    this.instance = new Instance(this.http, this.lists, this.security, opts.capabilitiesRecheckMs ?? CAPABILITIES_RECHECK_MS);
  }

  /** Drops pooled connections. The client must not be used afterwards. */
  close(): void {
    this.http.close();
  }

  /** Logs in now (otherwise the first call does). Throws SupersetAuthError on refused credentials. */
  login(): Promise<void> {
    return this.http.login();
  }

  /** Fetches the CSRF token a write will carry now, beside other reads (a failure is met again by the write). */
  prepareWrites(): void {
    this.http.prepareWrites();
  }

  /**
   * One JSON call to a fixed API path (transport/paths.ts): rison `q`, query parameters and a
   * JSON body; GETs are retried as any other read. The resource modules are built on it.
   */
  request<T>(method: Method, path: string, opts: { q?: unknown; query?: QueryParams; json?: unknown } = {}): Promise<T> {
    return this.http.request<T>(method, path, opts);
  }

  /** @internal The session's tokens under the names the client's own tests reach them by. */
  get auth(): { accessToken: string } | undefined {
    return this.http.session.heldAuth;
  }
  /** @internal */
  get csrf(): string | undefined {
    return this.http.session.csrfToken;
  }
  set csrf(token: string | undefined) {
    this.http.session.csrfToken = token;
  }

  // ---------------------------------------------------------------------------------------------
  // The flat names of the client before its resources, for callers not yet moved (tests, bench,
  // the assistant). New code uses the resources above.

  version(): Promise<string | null> {
    return this.instance.version();
  }
  capabilities(): Promise<SupersetCapabilities> {
    return this.instance.capabilities();
  }
  list<T>(resource: Resource, query: ListQuery = {}): Promise<ListResponse<T>> {
    return this.lists.page<T>(resource, query);
  }
  listAll<T extends { id: number }>(resource: Resource, query: Omit<ListQuery, 'page' | 'pageSize'> = {}, maxItems?: number): Promise<T[]> {
    return this.lists.all<T>(resource, query, maxItems);
  }
  listDashboards(query: ListQuery = {}): Promise<ListResponse<DashboardListItem>> {
    return this.dashboards.list(query);
  }
  getDashboard(idOrSlug: number | string): Promise<DashboardDetail> {
    return this.dashboards.get(idOrSlug);
  }
  getDashboardCharts(idOrSlug: number | string): Promise<DashboardChart[]> {
    return this.dashboards.charts(idOrSlug);
  }
  dashboardThumbnail(id: number, digest?: string): Promise<Thumbnail> {
    return this.dashboards.thumbnail(id, digest);
  }
  exportDashboards(ids: number[]): Promise<Buffer> {
    return this.dashboards.export(ids);
  }
  exportBundle(resource: Resource, ids: number[]): Promise<Buffer> {
    return this.assets.export(resource, ids);
  }
  importBundle(resource: Resource, zip: Buffer | Uint8Array, opts?: ImportOptions): Promise<void> {
    return this.assets.import(resource, zip, opts);
  }
  chartData(queryContext: ChartDataQueryContext): Promise<ChartDataResponse> {
    return this.charts.data(queryContext);
  }
  listDatasets(query: ListQuery = {}): Promise<ListResponse<DatasetListItem>> {
    return this.datasets.list(query);
  }
  getDataset(id: number): Promise<DatasetDetail> {
    return this.datasets.get(id);
  }
  listDatabases(): Promise<DatabaseInfo[]> {
    return this.databases.list();
  }
  executeSql(query: SqlLabQuery): Promise<SqlLabResult> {
    return this.sqlLab.execute(query);
  }
  listRlsRules(): Promise<RlsRule[]> {
    return this.rls.list();
  }
  getRlsRule(id: number): Promise<RlsRule> {
    return this.rls.get(id);
  }
  createRlsRule(rule: RlsRuleWrite): Promise<number> {
    return this.rls.create(rule);
  }
  updateRlsRule(id: number, rule: RlsRuleWrite): Promise<void> {
    return this.rls.update(id, rule);
  }
  deleteRlsRule(id: number): Promise<void> {
    return this.rls.delete(id);
  }
  listRlsRoles(): Promise<UpstreamRole[]> {
    return this.rls.roles();
  }
  findAccounts(search: string, limit?: number): Promise<UpstreamAccount[]> {
    return this.security.findAccounts(search, limit);
  }
  resolveUsername(username: string): ReturnType<Security['resolveUsername']> {
    return this.security.resolveUsername(username);
  }
}
