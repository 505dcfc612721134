/**
 * Shapes of the Superset REST API as this project uses them, as 6.0.0 and 6.1.0 answer. Superset
 * adds and drops keys between releases, so everything not needed to link objects is optional.
 */

/** How to reach one environment's Superset; built from an `environments` row. */
export interface SupersetConnection {
  /** e.g. `https://bi.example.com` or `https://host/superset` (SUPERSET_APP_ROOT); no query, no credentials. */
  baseUrl: string;
  username: string;
  password: string;
  /** Login provider; `db` unless the instance uses LDAP. */
  provider?: 'db' | 'ldap';
  verifyTls?: boolean;
  /** Per-request timeout. Default 30. */
  timeoutSeconds?: number;
}

/** The object kinds with FAB list, `_info`, export and import endpoints of the same shape. */
export type Resource = 'dashboard' | 'chart' | 'dataset' | 'database';

export interface ListResponse<T> {
  count: number;
  ids?: number[];
  result: T[];
}

export interface ListFilter {
  col: string;
  opr: string;
  value: unknown;
}

/** FAB's rison `q` for list endpoints; `page` is 0-based, `pageSize` at most 100 (Superset clamps). */
export interface ListQuery {
  filters?: ListFilter[];
  columns?: string[];
  orderColumn?: string;
  orderDirection?: 'asc' | 'desc';
  page?: number;
  pageSize?: number;
}

export interface UserSummary {
  id?: number;
  first_name?: string | null;
  last_name?: string | null;
  email?: string | null;
  username?: string | null;
}

export interface DashboardListItem {
  id: number;
  uuid?: string | null;
  dashboard_title?: string | null;
  slug?: string | null;
  url?: string | null;
  published?: boolean | null;
  status?: string | null;
  thumbnail_url?: string | null;
  certified_by?: string | null;
  certification_details?: string | null;
  changed_on_utc?: string | null;
  changed_on_delta_humanized?: string | null;
  changed_by?: UserSummary | null;
  changed_by_name?: string | null;
  created_by?: UserSummary | null;
  /** Objects in 6.x; older or patched servers may send plain names. */
  owners?: Array<UserSummary | string> | null;
  roles?: Array<{ id: number; name: string }> | null;
  tags?: Array<{ id: number; name: string; type?: number | string }> | null;
  is_managed_externally?: boolean | null;
  [key: string]: unknown;
}

export interface DashboardDetail extends DashboardListItem {
  css?: string | null;
  /** JSON strings in the API; parse with parseJsonField. */
  json_metadata?: string | null;
  position_json?: string | null;
  /** Chart names (legacy). */
  charts?: string[];
  changed_on?: string | null;
}

export interface DashboardChart {
  id: number;
  slice_name?: string | null;
  slice_url?: string | null;
  description?: string | null;
  cache_timeout?: number | null;
  changed_on?: string | null;
  certified_by?: string | null;
  form_data?: Record<string, unknown> & { datasource?: string; viz_type?: string };
  [key: string]: unknown;
}

export interface DashboardDataset {
  id: number;
  uid?: string;
  name?: string;
  table_name?: string;
  datasource_name?: string;
  schema?: string | null;
  sql?: string | null;
  type?: string;
  database?: { id: number; name?: string; database_name?: string; backend?: string; [key: string]: unknown } | null;
  columns?: Array<Record<string, unknown>>;
  metrics?: Array<Record<string, unknown>>;
  [key: string]: unknown;
}

export interface DatasetListItem {
  id: number;
  uuid?: string | null;
  table_name: string;
  schema?: string | null;
  catalog?: string | null;
  sql?: string | null;
  kind?: string | null;
  description?: string | null;
  explore_url?: string | null;
  datasource_type?: string | null;
  database?: { id: number; database_name: string; uuid?: string | null } | null;
  owners?: UserSummary[] | null;
  changed_by_name?: string | null;
  changed_on_utc?: string | null;
  [key: string]: unknown;
}

export interface DatabaseInfo {
  id: number;
  uuid?: string | null;
  database_name: string;
  backend?: string | null;
  driver?: string | null;
  expose_in_sqllab?: boolean | null;
  allow_dml?: boolean | null;
  allow_run_async?: boolean | null;
  allow_multi_catalog?: boolean | null;
  [key: string]: unknown;
}

export interface ChartListItem {
  id: number;
  uuid?: string | null;
  slice_name?: string | null;
  viz_type?: string | null;
  datasource_id?: number | null;
  datasource_type?: string | null;
  params?: string | null;
  query_context?: string | null;
  dashboards?: Array<{ id: number; dashboard_title?: string }>;
  [key: string]: unknown;
}

/** A Superset account, normalised from `related/owners` and (when readable) the security API. */
export interface UpstreamAccount {
  id: number;
  /** null when the instance does not expose its security API to the service account. */
  username: string | null;
  display_name: string;
  first_name: string | null;
  last_name: string | null;
  email: string | null;
  active: boolean | null;
}

export type Thumbnail =
  | { status: 'ready'; contentType: string; bytes: Buffer }
  /** Superset queued a render (202); ask again later. */
  | { status: 'computing'; retryAfterSeconds: number }
  /** Superset has no image: thumbnails are off on the instance, or the render failed. */
  | { status: 'missing'; detail: string };

export interface ChartDataQueryContext {
  datasource: { id: number; type: string };
  queries: Array<Record<string, unknown>>;
  force?: boolean;
  form_data?: Record<string, unknown>;
  result_format?: 'json' | 'csv' | 'xlsx';
  result_type?: string;
}

export interface ChartDataResponse {
  result: Array<{
    status?: string;
    rowcount?: number;
    colnames?: string[];
    coltypes?: number[];
    data?: Array<Record<string, unknown>>;
    query?: string;
    error?: string | null;
    [key: string]: unknown;
  }>;
}

export interface ImportOptions {
  /** Update what already exists (matched by UUID) instead of refusing the bundle. */
  overwrite?: boolean;
}

export interface PermissionProbe {
  /** e.g. `can_read on Dashboard`, for every permission checked. */
  checked: string[];
  missing: string[];
}

/** What one list endpoint offers, as the instance itself reports it. */
export interface ListCapabilities {
  /** Columns the list accepts filters on (`_info?keys=filters`); null when the probe was refused. */
  filters: string[] | null;
  /** Whether list rows carry the object's `uuid` (4.1.4 and later list it; no release before 6.0 filters on it). */
  uuid_column: boolean | null;
}

/**
 * What a Superset instance can do, probed rather than inferred from its version: list filters and
 * columns per resource, the security API and thumbnails. Cached per client (see
 * SupersetClient.capabilities), with the version it was probed on.
 */
export interface SupersetCapabilities {
  version: string | null;
  lists: Record<'dashboard' | 'chart' | 'dataset', ListCapabilities>;
  /** Dataset list rows carry `database.uuid` (6.0 and later). */
  dataset_database_uuid: boolean | null;
  /** FAB's `/api/v1/security/users/` answers the service account (FAB_ADD_SECURITY_API). */
  security_api: boolean | null;
  /** The THUMBNAILS feature flag is on; null when there was no dashboard to ask about. */
  thumbnails: boolean | null;
  probed_at: string;
}

/** A dataset column as `GET /api/v1/dataset/{id}` answers it (other keys are kept and sent back). */
export interface DatasetColumn {
  id: number;
  column_name: string;
  verbose_name?: string | null;
  description?: string | null;
  type?: string | null;
  expression?: string | null;
  is_dttm?: boolean | null;
  [key: string]: unknown;
}

export interface DatasetMetric {
  id: number;
  metric_name: string;
  expression: string;
  verbose_name?: string | null;
  description?: string | null;
  [key: string]: unknown;
}

/** `GET /api/v1/dataset/{id}` → `result`. */
export interface DatasetDetail {
  id: number;
  uuid?: string | null;
  table_name: string;
  schema?: string | null;
  catalog?: string | null;
  sql?: string | null;
  kind?: string | null;
  description?: string | null;
  /** Naive UTC timestamp of the last change (`2026-11-22T23:06:30.392099`). */
  changed_on?: string | null;
  database: { id: number; database_name?: string; backend?: string | null; [key: string]: unknown };
  columns: DatasetColumn[];
  metrics: DatasetMetric[];
  [key: string]: unknown;
}

/** Charts and dashboards that use a dataset (`GET /api/v1/dataset/{id}/related_objects`). */
export interface DatasetRelatedObjects {
  charts: Array<{ id: number; slice_name?: string | null }>;
  dashboards: Array<{ id: number; title?: string | null; slug?: string | null }>;
}

export interface SqlLabQuery {
  databaseId: number;
  sql: string;
  schema?: string | null;
  catalog?: string | null;
  /** Rows at most (Superset also caps at its DISPLAY_MAX_ROW). */
  limit?: number;
}

export interface SqlLabResult {
  columns: string[];
  rows: Array<Record<string, unknown>>;
  /** True when Superset cut the result at the limit. */
  limited: boolean;
}

/** `PUT /api/v1/dataset/{id}` body: changed top-level fields plus the full column and metric lists. */
export interface DatasetUpdate {
  columns: Array<Record<string, unknown> & { id: number; column_name: string }>;
  metrics: Array<Record<string, unknown> & { id: number; metric_name: string }>;
  [key: string]: unknown;
}

/** A row-level-security rule as Superset lists it (`/api/v1/rowlevelsecurity/`): tables and roles with ids and names. */
export interface RlsRule {
  id: number;
  name: string;
  filter_type: 'Regular' | 'Base' | string;
  clause: string;
  group_key: string | null;
  /** Only in the detail (the list does not carry it). */
  description?: string | null;
  tables: Array<{ id: number; table_name: string; schema?: string | null }>;
  roles: Array<{ id: number; name: string }>;
}

/** What a rule's create and update take: tables (dataset ids) and roles (role ids) by id. */
export interface RlsRuleWrite {
  name: string;
  filter_type: string;
  clause: string;
  group_key: string | null;
  description: string | null;
  tables: number[];
  roles: number[];
}

export interface UpstreamRole {
  id: number;
  name: string;
}

/** A chart's dataset as its form_data names it (`<id>__<type>`, as Superset's Slice.form_data writes it); null when it does not. */
export function formDataDatasource(formData: { datasource?: unknown } | null | undefined): { id: number; type: string } | null {
  const m = /^(\d+)__(\w+)$/.exec(String(formData?.datasource ?? ''));
  return m ? { id: Number(m[1]), type: m[2]! } : null;
}
