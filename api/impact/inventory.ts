/**
 * One environment's objects as impact needs them, read through the Superset client (its pooled
 * client, per-environment list concurrency, deadlines and circuit). Each kind is read on its own:
 * a kind Superset does not list is named with its message and status, never answered as an empty
 * list, and the other kinds are still read. Every list stops at MAX_OBJECTS rows; a kind cut there
 * is named in `truncated`.
 */
import { datasetsToDefine } from '../../lib/impact/analyse.ts';
import type {
  DatasetDefinitions,
  ImpactTarget,
  Inventory,
  InventoryChart,
  InventoryKind,
  InventoryReport,
  TruncatedKind,
  UnreadableKind,
} from '../../lib/impact/types.ts';
import { classifySupersetFailure, DATABASE_LIST_COLUMNS, DATASET_LIST_COLUMNS, type SupersetClient } from '../../lib/superset/index.ts';
import { upstreamReason } from '../../lib/upstream-reason.ts';

/** Most rows read of each kind: bounds the time and memory of one answer (docs/validation.md). */
export const MAX_OBJECTS = 20_000;
/** Alerts' SQL is only in each alert's own answer: at most this many are asked at once. */
const ALERT_READS_AT_ONCE = 4;

const CHART_COLUMNS = [
  'id',
  'uuid',
  'slice_name',
  'viz_type',
  'datasource_id',
  'datasource_type',
  'params',
  'query_context',
  'dashboards.id',
  'dashboards.dashboard_title',
];

type Read<T> = { rows: T[]; truncated?: TruncatedKind } | { failed: UnreadableKind };

async function readKind<T>(kind: InventoryKind, read: () => Promise<{ rows: T[]; count?: number }>): Promise<Read<T>> {
  try {
    const { rows, count } = await read();
    return count !== undefined && count > rows.length ? { rows, truncated: { kind, read: rows.length, total: count } } : { rows };
  } catch (err) {
    const failure = classifySupersetFailure(err);
    if (!failure) throw err;
    const message = upstreamReason(failure.upstream?.message ?? (err as Error).message) ?? failure.reason;
    return { failed: { kind, message, upstream_status: failure.upstream?.status ?? null } };
  }
}

const num = (v: unknown): number | null => (typeof v === 'number' ? v : null);
const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);

async function readCharts(client: SupersetClient) {
  const { rows, count } = await client.lists.allCounted<Record<string, unknown> & { id: number }>(
    'chart',
    { columns: CHART_COLUMNS },
    MAX_OBJECTS,
  );
  const charts: InventoryChart[] = rows.map((r) => ({
    id: r.id,
    uuid: str(r.uuid),
    name: String(r.slice_name ?? ''),
    viz_type: str(r.viz_type),
    datasource_id: num(r.datasource_id),
    datasource_type: str(r.datasource_type),
    params: r.params ?? null,
    query_context: r.query_context ?? null,
    dashboards: (Array.isArray(r.dashboards) ? (r.dashboards as Array<Record<string, unknown>>) : []).map((d) => ({
      id: Number(d.id),
      title: String(d.dashboard_title ?? ''),
    })),
  }));
  return { rows: charts, count };
}

async function readDatasets(client: SupersetClient) {
  const { rows, count } = await client.lists.allCounted<Record<string, unknown> & { id: number }>(
    'dataset',
    { columns: DATASET_LIST_COLUMNS },
    MAX_OBJECTS,
  );
  return {
    rows: rows.map((r) => ({
      id: r.id,
      uuid: str(r.uuid),
      table_name: String(r.table_name ?? ''),
      schema: str(r.schema),
      catalog: str(r.catalog),
      sql: str(r.sql)?.trim() ? str(r.sql) : null,
      database_id: num((r.database as { id?: unknown } | null)?.id),
    })),
    count,
  };
}

async function readDatabases(client: SupersetClient) {
  const { rows, count } = await client.lists.allCounted<Record<string, unknown> & { id: number }>(
    'database',
    { columns: DATABASE_LIST_COLUMNS },
    MAX_OBJECTS,
  );
  return { rows: rows.map((r) => ({ id: r.id, name: String(r.database_name ?? ''), backend: str(r.backend) })), count };
}

/** Reports and alerts; an alert's SQL and database are read from its own answer. */
async function readReports(client: SupersetClient) {
  const listed = (await client.reports.list()).slice(0, MAX_OBJECTS);
  const out: InventoryReport[] = listed.map((r) => ({ ...r, database_id: null, sql: null }));
  const alerts = out.filter((r) => r.type.toLowerCase() === 'alert');
  let next = 0;
  const worker = async () => {
    while (next < alerts.length) {
      const a = alerts[next++]!;
      const detail = await client.reports.get(a.id);
      a.database_id = detail.database_id;
      a.sql = detail.sql;
    }
  };
  await Promise.all(Array.from({ length: Math.min(ALERT_READS_AT_ONCE, alerts.length) }, worker));
  return { rows: out };
}

async function readDefinitions(client: SupersetClient, ids: number[]) {
  const rows: DatasetDefinitions[] = [];
  for (const id of ids) {
    const d = await client.datasets.get(id);
    rows.push({
      dataset_id: id,
      metrics: d.metrics.map((m) => ({ metric_name: m.metric_name, expression: m.expression })),
      calculated: d.columns.filter((c) => c.expression?.trim()).map((c) => ({ column_name: c.column_name, expression: c.expression! })),
    });
  }
  return { rows };
}

function take<T>(r: Read<T>, inv: Pick<Inventory, 'unreadable' | 'truncated'>): T[] {
  if ('failed' in r) {
    inv.unreadable.push(r.failed);
    return [];
  }
  if (r.truncated) inv.truncated.push(r.truncated);
  return r.rows;
}

/**
 * Reads one environment's objects for `target` (each kind apart, failures named). A target given
 * as a function is decided from what was listed (an environment migrated to names the objects by
 * its own ids); null there reads no definitions.
 */
export async function readInventory(
  client: SupersetClient,
  target: ImpactTarget | ((inv: Inventory) => ImpactTarget | null),
): Promise<Inventory> {
  const [databases, datasets, charts, savedQueries, reports] = await Promise.all([
    readKind('databases', () => readDatabases(client)),
    readKind('datasets', () => readDatasets(client)),
    readKind('charts', () => readCharts(client)),
    readKind('saved_queries', async () => ({ rows: (await client.savedQueries.list()).slice(0, MAX_OBJECTS) })),
    readKind('reports', () => readReports(client)),
  ]);
  const inv: Inventory = {
    databases: [],
    datasets: [],
    charts: [],
    saved_queries: [],
    reports: [],
    definitions: [],
    unreadable: [],
    truncated: [],
  };
  inv.databases = take(databases, inv);
  inv.datasets = take(datasets, inv);
  inv.charts = take(charts, inv);
  inv.saved_queries = take(savedQueries, inv);
  inv.reports = take(reports, inv);
  const decided = typeof target === 'function' ? target(inv) : target;
  const define = decided ? datasetsToDefine(inv, decided) : [];
  if (define.length) inv.definitions = take(await readKind('dataset_definitions', () => readDefinitions(client, define)), inv);
  return inv;
}
