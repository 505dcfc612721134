/**
 * What the migration needs from a Superset environment. Kept narrow so the migration logic reads
 * as the recipe it is; implemented over the project's one Superset client (see ./superset-upstream.ts).
 * Lookups by uuid, slug and table go through a TargetIndex (./target-index.ts) built on `listRows`
 * and `exportObjects`, which every release answers; no list filter on `uuid` is ever sent (releases
 * before 6.0 refuse it).
 */
import type { Bundle } from '../../lib/bundles/bundle.ts';
import type { TargetCatalogs } from '../../lib/bundles/catalogs.ts';
import type { DashboardChart, RlsRule, RlsRuleWrite, UpstreamRole } from '../../lib/superset/types.ts';
import type { ExportedChart } from './chart-check/exported.ts';
import type { ChartAnswer, ChartForCheck } from './chart-check/types.ts';

export interface UpstreamDatabase {
  id: number;
  uuid: string;
  database_name: string;
  backend?: string | null;
}

export type IndexedResource = 'dashboard' | 'chart' | 'dataset';

export interface MigrationUpstream {
  version(): Promise<string | null>;
  /** Readies the writes to come (Superset's CSRF token fetched beside the reads before them); never fails. */
  prepareWrites?(): void;
  exportDashboards(ids: number[]): Promise<Uint8Array>;
  /** Exports of these charts or datasets (several calls for many ids), each bundle read. */
  exportObjects(kind: 'chart' | 'dataset', ids: number[]): Promise<Bundle[]>;
  /** kind selects Superset's import endpoint; throws SupersetImportError (422 with per-file errors) on rejection. */
  importBundle(kind: 'dashboard' | 'chart' | 'dataset', zip: Uint8Array, overwrite: boolean): Promise<void>;
  listDatabases(): Promise<UpstreamDatabase[]>;
  /**
   * A database's catalogs as Superset exposes them: its default (from its connection URI; undefined
   * when it cannot be told) and, with `names`, the catalogs it lists. Absent: catalogs are left as exported.
   */
  databaseCatalogs?(id: number, names: boolean): Promise<TargetCatalogs | undefined>;
  /**
   * Every row of a list with only these columns (Superset silently drops the ones it does not
   * have); with `afterId`, only rows whose id is greater (objects created since).
   */
  listRows(resource: IndexedResource, columns: string[], afterId?: number): Promise<Array<Record<string, unknown> & { id: number }>>;
  /** One page of dashboards, the most recently changed first (id, uuid, slug, title, changed_on_utc). */
  recentDashboards(page: number, pageSize: number): Promise<Array<Record<string, unknown> & { id: number }>>;
  /** By UUID, slug or id (Superset resolves all three on the same path, in every release). */
  findDashboard(idOrSlug: string): Promise<{ id: number; uuid: string | null; slug: string | null; dashboard_title: string | null } | null>;
  dashboardCharts(id: number): Promise<Array<{ id: number; slice_name: string | null; form_data: Record<string, unknown> }>>;
  /**
   * A dashboard's charts as the chart check reads them: uuid, type, form_data, dataset, saved query
   * context (404 when the dashboard is not there). `listed`: its chart list as already read here;
   * `exported`: its charts as this environment's own export wrote them (not read again).
   */
  chartsForCheck(
    dashboardId: number,
    listed?: Promise<DashboardChart[]>,
    exported?: ReadonlyMap<number, ExportedChart>,
  ): Promise<ChartForCheck[]>;
  /** A chart's query context run through the chart-data API: its columns, Superset's refusal, or why there is no answer. */
  runQueryContext(queryContext: Record<string, unknown>): Promise<ChartAnswer>;
  /** These charts' uuids by id, from the chart list (a hundred ids a call); an id the list leaves out is left out. */
  chartUuids(ids: number[]): Promise<Map<number, string | null>>;
  /**
   * Several charts' query contexts on one dataset in one chart-data call: each chart's answer as
   * runQueryContext gives it alone, or null when the call gave no such answers (Superset refuses
   * the whole call when one query fails), so each chart is asked alone.
   */
  runQueryContexts?(queryContexts: Array<Record<string, unknown>>): Promise<ChartAnswer[] | null>;
  /** A chart run through the legacy explore endpoint with its saved form_data. */
  runLegacyChart(chartId: number): Promise<ChartAnswer>;
  /** Row-level-security rules (no descriptions); read once per task through the TargetIndex. */
  rlsRules(): Promise<RlsRule[]>;
  /** One rule with its description. */
  rlsRule(id: number): Promise<RlsRule>;
  /** The roles a rule may name. */
  rlsRoles(): Promise<UpstreamRole[]>;
  createRlsRule(rule: RlsRuleWrite): Promise<number>;
  updateRlsRule(id: number, rule: RlsRuleWrite): Promise<void>;
}
