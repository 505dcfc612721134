/**
 * What the migration needs from a Superset environment. Kept narrow so the migration logic reads
 * as the recipe it is; implemented over the project's one Superset client (see ./superset-upstream.ts).
 */
export interface UpstreamDatabase {
  id: number;
  uuid: string;
  database_name: string;
  backend?: string | null;
}

export interface MigrationUpstream {
  version(): Promise<string | null>;
  exportDashboards(ids: number[]): Promise<Uint8Array>;
  /** Export of one chart or dataset, as its YAML content (for differences). */
  exportObject(kind: 'charts' | 'datasets', id: number): Promise<Record<string, unknown> | null>;
  /** kind selects Superset's import endpoint; throws SupersetImportError (422 with per-file errors) on rejection. */
  importBundle(kind: 'dashboard' | 'chart' | 'dataset', zip: Uint8Array, overwrite: boolean): Promise<void>;
  listDatabases(): Promise<UpstreamDatabase[]>;
  /** By UUID or slug (Superset resolves both on the same path). */
  findDashboard(idOrSlug: string): Promise<{ id: number; uuid: string | null; slug: string | null; dashboard_title: string | null } | null>;
  findChart(uuid: string): Promise<{ id: number; uuid: string } | null>;
  findDataset(
    q: { uuid: string } | { databaseId: number; schema: string | null; tableName: string },
  ): Promise<{ id: number; uuid: string | null } | null>;
  /** Every dataset on a table of this name, whatever its database (for diagnosing a failed import). */
  findDatasetsByTable(
    tableName: string,
  ): Promise<Array<{ id: number; uuid: string | null; schema: string | null; database: { id: number; name: string } | null }>>;
  dashboardCharts(id: number): Promise<Array<{ id: number; slice_name: string | null; form_data: Record<string, unknown> }>>;
  /** Runs a chart's query with a minimal query context built from its params; rows, or the upstream's error. */
  runChartQuery(chart: {
    id: number;
    form_data: Record<string, unknown>;
  }): Promise<{ ok: true; rows: number } | { ok: false; error: string }>;
}
