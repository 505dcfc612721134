/**
 * The one decider of what a change touches in one environment, from what was read there
 * (./types.ts Inventory): pure, so it is tested on hand-made objects and run on real ones alike.
 *
 * - A dataset is hit whole (every chart on it) when it is the target, when it is the physical
 *   dataset of the target table, when its SQL reads the target table (and, for a column, names the
 *   column or reads `*`), or when it is on the target database.
 * - A dataset is hit by column (or metric) when the target is a column or metric of it (or of its
 *   table): then only the charts that use the column, directly, in adhoc SQL, or through a saved
 *   metric or calculated column defined on it, are named.
 * - Saved queries and alerts are named when their SQL reads the target table (or column), or when
 *   they run on the target database; reports when they send a named chart or dashboard.
 */
import { chartRefs } from './form-data.ts';
import { dialectOfBackend, readsOfExpression, readsOfSql, type SqlDialect } from './sql-reads.ts';
import type {
  DatasetDefinitions,
  ImpactedChart,
  ImpactedDataset,
  ImpactedObject,
  ImpactFindings,
  ImpactTarget,
  Inventory,
  InventoryChart,
  InventoryDataset,
  UnparsedObject,
} from './types.ts';

const lower = (s: string | null | undefined) => String(s ?? '').toLowerCase();

interface Scope {
  target: ImpactTarget;
  databases: Set<number> | null;
  dialects: Map<number, SqlDialect | null>;
  /** The table SQL is checked for: the target's, or the physical target dataset's. */
  table: { name: string; schema: string | null } | null;
  unparsed: UnparsedObject[];
}

export function analyseImpact(inv: Inventory, target: ImpactTarget): ImpactFindings {
  const scope = scopeOf(inv, target);
  const byId = new Map(inv.datasets.map((d) => [d.id, d]));
  const own = target.dataset !== undefined ? [byId.get(target.dataset)].filter((d): d is InventoryDataset => !!d) : [];
  const physical = scope.table ? inv.datasets.filter((d) => !d.sql && physicalMatch(d, scope)) : [];
  const carriers = target.dataset !== undefined ? own : physical;
  const whole = new Map<number, string>();
  const fieldTarget = target.column !== undefined || target.metric !== undefined;
  if (!fieldTarget) for (const d of carriers) whole.set(d.id, d.sql ? 'is the target dataset' : `is the dataset of table ${d.table_name}`);
  if (target.database !== undefined && !scope.table && target.dataset === undefined) {
    for (const d of inv.datasets) if (inScope(scope, d.database_id)) whole.set(d.id, 'is on the target database');
  }
  if (scope.table && target.metric === undefined) {
    for (const d of inv.datasets) {
      if (!d.sql || whole.has(d.id) || !inScope(scope, d.database_id)) continue;
      const why = sqlUses(scope, { kind: 'dataset', id: d.id, name: d.table_name }, d.sql, d.database_id, d.schema);
      if (why) whole.set(d.id, why);
    }
  }
  const charts = chartsHit(inv, scope, whole, fieldTarget ? carriers : []);
  const dashboards = dashboardsOf(inv, charts);
  return {
    resolved: {
      databases: inv.databases.filter((d) => scope.databases?.has(d.id) ?? false).map((d) => ({ id: d.id, name: d.name })),
      datasets: carriers.map((d) => ({ id: d.id, name: d.table_name, kind: d.sql ? 'virtual' : 'physical' })),
    },
    charts,
    dashboards,
    datasets: [...whole].map(([id, why]) => datasetOut(byId.get(id)!, why)),
    saved_queries: savedQueriesHit(inv, scope),
    reports: reportsHit(inv, scope, charts, dashboards),
    dataset_fields: fieldsOn(inv.definitions, carriers, scope),
    unparsed: scope.unparsed,
  };
}

/** The datasets whose saved metrics and calculated columns the analysis reads (a column or metric target's); read them into `definitions`. */
export function datasetsToDefine(inv: Pick<Inventory, 'databases' | 'datasets'>, target: ImpactTarget): number[] {
  if (target.column === undefined && target.metric === undefined) return [];
  if (target.dataset !== undefined) return [target.dataset];
  const scope = scopeOf({ ...inv, charts: [], saved_queries: [], reports: [], definitions: [], unreadable: [], truncated: [] }, target);
  return scope.table ? inv.datasets.filter((d) => !d.sql && physicalMatch(d, scope)).map((d) => d.id) : [];
}

function scopeOf(inv: Inventory, target: ImpactTarget): Scope {
  const wanted = target.database;
  const databases =
    wanted === undefined
      ? null
      : new Set(inv.databases.filter((d) => String(d.id) === wanted || lower(d.name) === lower(wanted)).map((d) => d.id));
  const dialects = new Map(inv.databases.map((d) => [d.id, dialectOfBackend(d.backend)]));
  let table: Scope['table'] = target.table ? { name: target.table, schema: target.schema ?? null } : null;
  if (target.dataset !== undefined && !table) {
    const d = inv.datasets.find((x) => x.id === target.dataset);
    // A physical dataset's column is its table's: SQL reading that table and column is hit too.
    if (d && !d.sql && target.column !== undefined) table = { name: d.table_name, schema: d.schema || null };
  }
  return { target, databases, dialects, table, unparsed: [] };
}

function inScope(scope: Scope, databaseId: number | null): boolean {
  return !scope.databases || (databaseId !== null && scope.databases.has(databaseId));
}

function physicalMatch(d: InventoryDataset, scope: Scope): boolean {
  const t = scope.table!;
  if (lower(d.table_name) !== lower(t.name) || !inScope(scope, d.database_id)) return false;
  return !t.schema || !d.schema || lower(d.schema) === lower(t.schema);
}

/** Why `sql` uses the scope's table (and column), or undefined; SQL no parser reads is noted as unparsed. */
function sqlUses(
  scope: Scope,
  obj: Omit<UnparsedObject, 'reason'>,
  sql: string,
  databaseId: number | null,
  defaultSchema: string | null,
): string | undefined {
  const dialect = databaseId === null ? null : scope.dialects.get(databaseId);
  if (!dialect) {
    scope.unparsed.push({ ...obj, reason: 'its database has no SQL parser here (PostgreSQL, MySQL, MariaDB and SQLite have)' });
    return undefined;
  }
  const read = readsOfSql(dialect, sql);
  if (!read.ok) {
    scope.unparsed.push({ ...obj, reason: read.reason });
    return undefined;
  }
  const t = scope.table!;
  const ref = read.reads.tables.find(
    (r) =>
      lower(r.table) === lower(t.name) &&
      (!t.schema || !(r.schema ?? defaultSchema) || lower(r.schema ?? defaultSchema) === lower(t.schema)),
  );
  if (!ref) return undefined;
  const name = `${ref.schema ? `${ref.schema}.` : ''}${ref.table}`;
  const column = scope.target.column;
  if (column === undefined) return `its SQL reads ${name}`;
  if (read.reads.columns.includes(lower(column))) return `its SQL reads ${name} and names ${column}`;
  return read.reads.star ? `its SQL reads ${name} with *` : undefined;
}

function datasetOut(d: InventoryDataset, why: string): ImpactedDataset {
  return { id: d.id, name: d.table_name, kind: d.sql ? 'virtual' : 'physical', database_id: d.database_id, via: [why] };
}

function chartsHit(inv: Inventory, scope: Scope, whole: Map<number, string>, carriers: InventoryDataset[]): ImpactedChart[] {
  const byField = new Map(carriers.map((d) => [d.id, d]));
  const out: ImpactedChart[] = [];
  for (const c of inv.charts) {
    if (c.datasource_type && c.datasource_type !== 'table') continue;
    const ds = c.datasource_id;
    if (ds === null) continue;
    const why = whole.get(ds);
    const via = why ? [`dataset ${ds} ${why}`] : byField.has(ds) ? chartFieldUses(inv, scope, c, byField.get(ds)!) : [];
    if (via.length)
      out.push({ id: c.id, name: c.name, viz_type: c.viz_type, dataset_id: ds, dashboard_ids: c.dashboards.map((d) => d.id), via });
  }
  return out;
}

/** How a chart uses the target column or metric of its dataset; empty when it does not. */
function chartFieldUses(inv: Inventory, scope: Scope, chart: InventoryChart, ds: InventoryDataset): string[] {
  const refs = chartRefs(chart.params, chart.query_context);
  const defs = inv.definitions.find((d) => d.dataset_id === ds.id);
  const metric = scope.target.metric;
  if (metric !== undefined) return refs.metrics.some((m) => m === metric) ? [`saved metric ${metric}`] : [];
  const column = lower(scope.target.column);
  const dialect = ds.database_id === null ? null : (scope.dialects.get(ds.database_id) ?? null);
  const via: string[] = [];
  if (refs.columns.some((c) => lower(c) === column)) via.push(`column ${scope.target.column}`);
  const onColumn = (sql: string) => expressionNames(scope, chart, dialect, sql, column);
  for (const m of defs?.metrics ?? [])
    if (refs.metrics.includes(m.metric_name) && onColumn(m.expression)) via.push(`saved metric ${m.metric_name}`);
  for (const c of defs?.calculated ?? [])
    if (refs.columns.some((x) => lower(x) === lower(c.column_name)) && onColumn(c.expression))
      via.push(`calculated column ${c.column_name}`);
  for (const e of refs.expressions) if (onColumn(e)) via.push(`SQL expression ${e.length > 80 ? `${e.slice(0, 77)}...` : e}`);
  return via;
}

function expressionNames(scope: Scope, chart: InventoryChart, dialect: SqlDialect | null, sql: string, column: string): boolean {
  const note = (reason: string) => {
    if (!scope.unparsed.some((u) => u.kind === 'chart' && u.id === chart.id))
      scope.unparsed.push({ kind: 'chart', id: chart.id, name: chart.name, reason });
  };
  if (!dialect) {
    note('its database has no SQL parser here (PostgreSQL, MySQL, MariaDB and SQLite have)');
    return false;
  }
  const read = readsOfExpression(dialect, sql);
  if (!read.ok) {
    note(`an expression of it: ${read.reason}`);
    return false;
  }
  return read.reads.columns.includes(column);
}

function dashboardsOf(inv: Inventory, charts: ImpactedChart[]): ImpactedObject[] {
  const titles = new Map(inv.charts.flatMap((c) => c.dashboards.map((d) => [d.id, d.title] as const)));
  const out = new Map<number, ImpactedObject>();
  for (const c of charts) {
    for (const id of c.dashboard_ids) {
      const d = out.get(id) ?? { id, name: titles.get(id) ?? '', via: [] };
      d.via.push(`chart ${c.id} (${c.name})`);
      out.set(id, d);
    }
  }
  return [...out.values()];
}

function savedQueriesHit(inv: Inventory, scope: Scope): ImpactedObject[] {
  const out: ImpactedObject[] = [];
  for (const q of inv.saved_queries) {
    if (!inScope(scope, q.db_id)) continue;
    const why = scope.table
      ? sqlUses(scope, { kind: 'saved_query', id: q.id, name: q.label }, q.sql, q.db_id, q.schema)
      : scope.databases && scope.target.dataset === undefined
        ? 'runs on the target database'
        : undefined;
    if (why) out.push({ id: q.id, name: q.label, via: [why] });
  }
  return out;
}

function reportsHit(inv: Inventory, scope: Scope, charts: ImpactedChart[], dashboards: ImpactedObject[]) {
  const chartIds = new Set(charts.map((c) => c.id));
  const dashboardIds = new Set(dashboards.map((d) => d.id));
  const out: Array<ImpactedObject & { type: string }> = [];
  for (const r of inv.reports) {
    const via: string[] = [];
    if (r.chart_id !== null && chartIds.has(r.chart_id)) via.push(`sends chart ${r.chart_id}`);
    if (r.dashboard_id !== null && dashboardIds.has(r.dashboard_id)) via.push(`sends dashboard ${r.dashboard_id}`);
    if (r.sql && inScope(scope, r.database_id)) {
      const why = scope.table
        ? sqlUses(scope, { kind: 'report', id: r.id, name: r.name }, r.sql, r.database_id, null)
        : scope.databases && scope.target.dataset === undefined
          ? 'its alert query runs on the target database'
          : undefined;
      if (why) via.push(`its alert query: ${why.replace(/^its SQL /, '')}`);
    }
    if (via.length) out.push({ id: r.id, name: r.name, type: r.type, via });
  }
  return out;
}

function fieldsOn(defs: DatasetDefinitions[], carriers: InventoryDataset[], scope: Scope): ImpactFindings['dataset_fields'] {
  const column = scope.target.column;
  if (column === undefined) return [];
  const out: ImpactFindings['dataset_fields'] = [];
  for (const ds of carriers) {
    const d = defs.find((x) => x.dataset_id === ds.id);
    const dialect = ds.database_id === null ? null : (scope.dialects.get(ds.database_id) ?? null);
    if (!d || !dialect) continue;
    const names = (sql: string) => {
      const read = readsOfExpression(dialect, sql);
      return read.ok && read.reads.columns.includes(lower(column));
    };
    for (const m of d.metrics) if (names(m.expression)) out.push({ dataset_id: ds.id, kind: 'metric', name: m.metric_name });
    for (const c of d.calculated) if (names(c.expression)) out.push({ dataset_id: ds.id, kind: 'calculated_column', name: c.column_name });
  }
  return out;
}
