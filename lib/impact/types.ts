/** What the impact of a change is computed from (one environment's objects, as read) and what it answers. */

/** The object about to change: a database, a table, a dataset, or a column or metric of a table or dataset. */
export interface ImpactTarget {
  /** A database by id or by name. */
  database?: string;
  schema?: string;
  table?: string;
  dataset?: number;
  column?: string;
  metric?: string;
}

export interface InventoryDatabase {
  id: number;
  name: string;
  backend: string | null;
}

export interface InventoryDataset {
  id: number;
  uuid: string | null;
  table_name: string;
  schema: string | null;
  catalog: string | null;
  sql: string | null;
  database_id: number | null;
}

export interface InventoryChart {
  id: number;
  uuid: string | null;
  name: string;
  viz_type: string | null;
  datasource_id: number | null;
  datasource_type: string | null;
  params: unknown;
  query_context: unknown;
  dashboards: Array<{ id: number; title: string }>;
}

export interface InventorySavedQuery {
  id: number;
  label: string;
  db_id: number | null;
  schema: string | null;
  sql: string;
}

export interface InventoryReport {
  id: number;
  name: string;
  type: string;
  dashboard_id: number | null;
  chart_id: number | null;
  database_id: number | null;
  sql: string | null;
}

/** A dataset's saved metrics and calculated columns: what a chart may use a column through. */
export interface DatasetDefinitions {
  dataset_id: number;
  metrics: Array<{ metric_name: string; expression: string }>;
  calculated: Array<{ column_name: string; expression: string }>;
}

export type InventoryKind = 'databases' | 'datasets' | 'charts' | 'saved_queries' | 'reports' | 'dataset_definitions';

/** One kind of object Superset did not list: its own message, and its status when it answered. */
export interface UnreadableKind {
  kind: InventoryKind;
  message: string;
  upstream_status: number | null;
}

/** A kind listed only up to the bound: how many were read of how many Superset has. */
export interface TruncatedKind {
  kind: InventoryKind;
  read: number;
  total: number;
}

export interface Inventory {
  databases: InventoryDatabase[];
  datasets: InventoryDataset[];
  charts: InventoryChart[];
  saved_queries: InventorySavedQuery[];
  reports: InventoryReport[];
  /** Of the datasets a column or metric target names. */
  definitions: DatasetDefinitions[];
  unreadable: UnreadableKind[];
  truncated: TruncatedKind[];
}

export interface ImpactedObject {
  id: number;
  name: string;
  /** Why it is named: what of it uses the target. */
  via: string[];
}

export interface ImpactedChart extends ImpactedObject {
  viz_type: string | null;
  dataset_id: number | null;
  dashboard_ids: number[];
}

export interface ImpactedDataset extends ImpactedObject {
  kind: 'physical' | 'virtual';
  database_id: number | null;
}

export interface ImpactedReport extends ImpactedObject {
  type: string;
}

/** SQL a parser could not read (Jinja, another dialect): it may use the target; nobody can say here. */
export interface UnparsedObject {
  kind: 'dataset' | 'chart' | 'saved_query' | 'report';
  id: number;
  name: string;
  reason: string;
}

export interface ImpactFindings {
  /** What the target resolved to here: the databases and datasets it names. */
  resolved: { databases: Array<{ id: number; name: string }>; datasets: Array<{ id: number; name: string; kind: 'physical' | 'virtual' }> };
  charts: ImpactedChart[];
  dashboards: ImpactedObject[];
  datasets: ImpactedDataset[];
  saved_queries: ImpactedObject[];
  reports: ImpactedReport[];
  /** Metrics and calculated columns of the target's dataset defined on the target column. */
  dataset_fields: Array<{ dataset_id: number; kind: 'metric' | 'calculated_column'; name: string }>;
  unparsed: UnparsedObject[];
}
