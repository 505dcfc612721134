/**
 * What a chart refers to in its dataset, read from its saved form_data (`params`) and its saved
 * query context: column names (groupby, columns, x_axis, series, filters' subjects, spatial
 * columns, …), saved metrics by name, and the SQL of adhoc metrics, columns and filters (read later
 * with the dialect's parser, ./sql-reads.ts). The walk is by key: the nearest key that says what a
 * value is decides, so a metric's own column (`{aggregate, column: {column_name}}`) counts as a
 * column wherever the metric sits.
 */

export interface ChartRefs {
  /** Column names, as written. */
  columns: string[];
  /** Saved metric names, as written. */
  metrics: string[];
  /** SQL of adhoc metrics, columns and filters, and the legacy `where` / `having`. */
  expressions: string[];
}

/** Keys whose string values (or strings in their lists) name a column of the dataset. */
const COLUMN_KEYS = new Set([
  'columns',
  'groupby',
  'all_columns',
  'all_columns_x',
  'all_columns_y',
  'x_axis',
  'series',
  'entity',
  'granularity_sqla',
  'granularity',
  'groupbyRows',
  'groupbyColumns',
  'series_columns',
  'line_column',
  'js_columns',
  'tooltip_columns',
  'dimension',
  'dimensions',
  'cols',
  'rows',
  'column',
  'col',
  'subject',
  'column_name',
  'lonCol',
  'latCol',
  'lonlatCol',
  'geohashCol',
  'time_column',
  'order_by_cols',
]);

/** Keys whose string values (or strings in their lists) name a saved metric. */
const METRIC_KEYS = new Set([
  'metric',
  'metrics',
  'metric_2',
  'metrics_b',
  'secondary_metric',
  'percent_metrics',
  'timeseries_limit_metric',
  'series_limit_metric',
  'size',
  'x',
  'y',
  'orderby',
]);

/** Keys holding SQL text. */
const SQL_KEYS = new Set(['sqlExpression', 'where', 'having']);

/** Keys whose object keys are column names (`temporal_columns_lookup: {ds: true}`). */
const COLUMN_MAP_KEYS = new Set(['temporal_columns_lookup']);

type Role = 'column' | 'metric' | null;

/** A JSON-in-a-string field (`params`, `query_context`) as an object; null when it is not one. */
export function jsonField(v: unknown): Record<string, unknown> | null {
  if (v && typeof v === 'object' && !Array.isArray(v)) return v as Record<string, unknown>;
  if (typeof v !== 'string' || !v.trim()) return null;
  try {
    const parsed = JSON.parse(v) as unknown;
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : null;
  } catch {
    // expected: form data that does not parse names nothing.
    return null;
  }
}

/** The references of a chart: its form_data and, when saved, its query context, together. */
export function chartRefs(formData: unknown, queryContext?: unknown): ChartRefs {
  const out = { columns: new Set<string>(), metrics: new Set<string>(), expressions: new Set<string>() };
  walk(jsonField(formData), null, out);
  const qc = jsonField(queryContext);
  if (qc) {
    walk(qc.queries, null, out);
    walk(qc.form_data, null, out);
  }
  return { columns: [...out.columns], metrics: [...out.metrics], expressions: [...out.expressions] };
}

type Acc = { columns: Set<string>; metrics: Set<string>; expressions: Set<string> };

function walk(v: unknown, role: Role, out: Acc): void {
  if (typeof v === 'string') {
    addString(v, role, out);
    return;
  }
  if (Array.isArray(v)) {
    for (const x of v) walk(x, role, out);
    return;
  }
  if (!v || typeof v !== 'object') return;
  const obj = v as Record<string, unknown>;
  // An adhoc SQL metric or column is its SQL, whatever its label says.
  if (obj.expressionType === 'SQL' && typeof obj.sqlExpression === 'string') {
    // A column reference written as SQL (`isColumnReference`, the x-axis as base axis) is a column name.
    if (obj.isColumnReference === true) out.columns.add(obj.sqlExpression);
    else if (obj.sqlExpression.trim()) out.expressions.add(obj.sqlExpression);
    return;
  }
  for (const [key, value] of Object.entries(obj)) {
    if (SQL_KEYS.has(key)) {
      if (typeof value === 'string' && value.trim()) out.expressions.add(value);
      else walk(value, role, out);
    } else if (COLUMN_MAP_KEYS.has(key) && value && typeof value === 'object' && !Array.isArray(value)) {
      for (const name of Object.keys(value)) out.columns.add(name);
    } else {
      walk(value, COLUMN_KEYS.has(key) ? 'column' : METRIC_KEYS.has(key) ? 'metric' : keepsRole(key) ? role : null, out);
    }
  }
}

/** Inside a list of [metric, ascending] pairs or a filter's `val`, the role stays or ends. */
function keepsRole(key: string): boolean {
  return /^\d+$/.test(key);
}

function addString(s: string, role: Role, out: Acc): void {
  if (!role || !s.trim()) return;
  // `order_by_cols` holds JSON pairs as strings: '["name", true]'.
  if (s.startsWith('[')) {
    try {
      const pair = JSON.parse(s) as unknown;
      if (Array.isArray(pair) && typeof pair[0] === 'string') addString(pair[0], role, out);
      return;
    } catch {
      // expected: not JSON: a name that starts with a bracket.
      // Not JSON: a name that starts with a bracket.
    }
  }
  (role === 'column' ? out.columns : out.metrics).add(s);
}
