/**
 * The time-axis half of superset-ui-core's query building and the chart-controls post-processing
 * operators the time plugins share (pivot, cum/rolling, resample, flatten), as the built frontend of
 * every release 4.1 to 6.1 writes them (read from superset/static/assets of each wheel): the time
 * fields of buildQueryObject, the x-axis helpers (getXAxisColumn, getXAxisLabel), and
 * buildQueryContext's normalizeTimeColumn, whose base-axis column is a column reference from 6.0 on.
 * What a build here does not reproduce (a time comparison, a forecast) is refused with its reason.
 */
import { asArray, baseQuery, metricLabel } from './build.ts';
import { compareRelease } from './release.ts';

type FormData = Record<string, unknown>;
type QueryObject = Record<string, unknown>;

export const DTTM_ALIAS = '__timestamp';

const isDefined = (v: unknown): boolean => v !== undefined && v !== null;

/** isXAxisSet: the chart's x-axis is a column, physical or adhoc (else the legacy time column, `__timestamp`). */
export const xAxisSet = (fd: FormData): boolean => typeof fd.x_axis === 'string' || isAdhoc(fd.x_axis);

/** getXAxisColumn: the x-axis column, `__timestamp` for the legacy time column, undefined without either. */
export function xAxisColumn(fd: FormData): unknown {
  if (!fd.granularity_sqla && !fd.x_axis) return undefined;
  return xAxisSet(fd) ? fd.x_axis : DTTM_ALIAS;
}

/** getXAxisLabel: the x-axis column's label, `__timestamp` for the legacy time column, undefined without either. */
export function xAxisLabel(fd: FormData): string | undefined {
  const column = xAxisColumn(fd);
  return column === undefined ? undefined : columnLabel(column);
}

/** getColumnLabel: a physical column's name, an adhoc column's label or expression. */
export function columnLabel(c: unknown): string {
  if (typeof c === 'string') return c;
  const a = (c ?? {}) as Record<string, unknown>;
  return String(a.label ?? a.sqlExpression ?? '');
}

/** buildQueryObject's base plus its time fields: the time column, its grain, the series limit and order. */
export function timeBaseQuery(fd: FormData, release: string | null): QueryObject {
  const base = baseQuery(fd);
  const granularity = fd.granularity || fd.granularity_sqla;
  const seriesLimitMetric = isMetric(fd.series_limit_metric) ? fd.series_limit_metric : (fd.timeseries_limit_metric ?? undefined);
  return {
    ...base,
    extras: { ...(base.extras as object), ...(fd.time_grain_sqla === undefined ? {} : { time_grain_sqla: fd.time_grain_sqla }) },
    ...(granularity ? { granularity } : {}),
    ...(fd.since ? { since: fd.since } : {}),
    ...(fd.until ? { until: fd.until } : {}),
    series_limit: isDefined(fd.series_limit) ? fd.series_limit : isDefined(fd.limit) ? Number(fd.limit) : 0,
    ...(seriesLimitMetric === undefined ? {} : { series_limit_metric: seriesLimitMetric }),
    ...(newerThan5(release) ? { group_others_when_limit_reached: fd.group_others_when_limit_reached ?? false } : {}),
    order_desc: fd.order_desc === undefined ? true : fd.order_desc,
  };
}

/**
 * extractQueryFields: every field of the form data that holds columns, metrics or an order (by
 * name or alias, in the form data's own order), columns and metrics deduplicated by label.
 */
export function extractQueryFields(fd: FormData): { columns: unknown[]; metrics: unknown[]; orderby?: unknown[] } {
  const aliases: Record<string, string> = {
    metric: 'metrics',
    metric_2: 'metrics',
    secondary_metric: 'metrics',
    x: 'metrics',
    y: 'metrics',
    size: 'metrics',
    all_columns: 'columns',
    series: 'groupby',
    order_by_cols: 'orderby',
  };
  let columns: unknown[] = [];
  let metrics: unknown[] = [];
  let orderby: unknown[] = [];
  for (const [key, value] of Object.entries(fd)) {
    if (key === 'query_mode' || value === undefined || value === null) continue;
    const name = aliases[key] ?? key;
    if (fd.query_mode === 'aggregate' && name === 'columns') continue;
    if (fd.query_mode === 'raw' && (name === 'groupby' || name === 'metrics')) continue;
    if (name === 'metrics') metrics = metrics.concat(value);
    else if (name === 'columns' || name === 'groupby') columns = columns.concat(value);
    else if (name === 'orderby') orderby = orderby.concat(value);
  }
  return {
    columns: uniqueBy(
      columns.filter((c) => c !== ''),
      columnLabel,
    ),
    metrics: fd.query_mode === 'raw' ? [] : uniqueBy(metrics, metricLabel),
    ...(orderby.length ? { orderby: orderby.map((o) => (typeof o === 'string' ? JSON.parse(o) : o)) } : {}),
  };
}

/** normalizeOrderBy's order: the query's own when valid, else by the series limit metric or the first metric, descending unless asked. */
export function normalizedOrderBy(q: QueryObject): unknown[] | undefined {
  const own = asArray(q.orderby);
  const first = own[0];
  if (Array.isArray(first) && first.length === 2 && !isEmpty(first[0]) && typeof first[1] === 'boolean') return own;
  const asc = !q.order_desc;
  if (!isEmpty(q.series_limit_metric)) return [[q.series_limit_metric, asc]];
  const metrics = asArray(q.metrics);
  return metrics.length ? [[metrics[0], asc]] : undefined;
}

/** Why the shared time operators cannot be built faithfully for this chart, or null. */
export function timeOperatorsRefusal(fd: FormData, metrics: unknown[]): string | null {
  if (asArray(fd.time_compare).length) return 'a time comparison: its build is not reproduced';
  if (fd.forecastEnabled) return 'a forecast: its build is not reproduced';
  const rolling = ['cumsum', 'sum', 'mean', 'std'].includes(String(fd.rolling_type));
  if (rolling && metrics.some((m) => typeof m !== 'string' && typeof (m as { label?: unknown })?.label !== 'string'))
    return 'a rolling window over a metric without a label: its build is not reproduced';
  return null;
}

/** pivotOperator (no time comparison): one column per metric and series value, indexed by the x-axis. */
export function pivotOperator(fd: FormData, q: QueryObject): QueryObject | undefined {
  const labels = [...asArray(q.metrics), ...extraMetrics(fd)].map(metricLabel);
  const index = xAxisLabel(fd);
  if (!index || !labels.length) return undefined;
  return {
    operation: 'pivot',
    options: {
      index: [index],
      columns: asArray(q.series_columns ?? q.columns).map(columnLabel),
      aggregates: Object.fromEntries(labels.map((l) => [l, { operator: 'mean' }])),
      drop_missing_columns: !fd.show_empty_columns,
    },
  };
}

/** rollingWindowOperator (no time comparison): a cumulative sum or a rolling window over each metric. */
export function rollingWindowOperator(fd: FormData, q: QueryObject): QueryObject | undefined {
  const columns = Object.fromEntries(
    asArray(q.metrics)
      .map((m) => (typeof m === 'string' ? m : String((m as { label: string }).label)))
      .map((c) => [c, c]),
  );
  if (fd.rolling_type === 'cumsum') return { operation: 'cum', options: { operator: 'sum', columns } };
  if (!['sum', 'mean', 'std'].includes(String(fd.rolling_type))) return undefined;
  return {
    operation: 'rolling',
    options: {
      rolling_type: fd.rolling_type,
      window: ensureIsInt(fd.rolling_periods, 1),
      min_periods: ensureIsInt(fd.min_periods, 0),
      columns,
    },
  };
}

/** resampleOperator: the rule and method asked for (zero fill is `asfreq` filled with 0). */
export function resampleOperator(fd: FormData): QueryObject | undefined {
  const zero = fd.resample_method === 'zerofill';
  const method = zero ? 'asfreq' : fd.resample_method;
  if (!method || !fd.resample_rule) return undefined;
  return { operation: 'resample', options: { method, rule: fd.resample_rule, fill_value: zero ? 0 : null } };
}

/** The rolling window and the resampling, in the order the release runs them: 6.1 resamples first, 4.1 to 6.0 roll first. */
export function windowOperators(fd: FormData, q: QueryObject, release: string | null): Array<QueryObject | undefined> {
  const rolling = rollingWindowOperator(fd, q);
  const resample = resampleOperator(fd);
  return release === null || compareRelease(release, '6.1') >= 0 ? [resample, rolling] : [rolling, resample];
}

export const flattenOperator = (): QueryObject => ({ operation: 'flatten' });

/**
 * buildQueryContext's last steps: falsy operators dropped, and with a generic x-axis its column made
 * the base axis at the chart's time grain (normalizeTimeColumn), `is_timeseries` dropped.
 */
export function finishQuery(fd: FormData, q: QueryObject, release: string | null): QueryObject {
  const out: QueryObject = { ...q, ...(Array.isArray(q.post_processing) ? { post_processing: q.post_processing.filter(Boolean) } : {}) };
  if (!xAxisSet(fd)) return out;
  const columns = asArray(out.columns);
  const x = fd.x_axis as unknown;
  const at = columns.findIndex((c) =>
    typeof c === 'string' && typeof x === 'string'
      ? c === x
      : isAdhoc(c) && isAdhoc(x) && (c as FormData).sqlExpression === (x as FormData).sqlExpression,
  );
  if (at < 0) return out;
  const timeGrain = (out.extras as FormData | undefined)?.time_grain_sqla;
  const grain = timeGrain === undefined ? {} : { timeGrain };
  const axis = isAdhoc(columns[at])
    ? { ...grain, columnType: 'BASE_AXIS', ...(columns[at] as object) }
    : {
        ...grain,
        columnType: 'BASE_AXIS',
        sqlExpression: x,
        label: x,
        expressionType: 'SQL',
        ...(newerThan5(release) ? { isColumnReference: true } : {}),
      };
  const { is_timeseries: _dropped, ...rest } = out;
  return { ...rest, columns: columns.map((c, i) => (i === at ? axis : c)) };
}

/** extractExtraMetrics: without dimensions, the sort metric the x-axis is sorted by when it is not a chart metric. */
export function extraMetrics(fd: FormData): unknown[] {
  const sort = asArray(fd.timeseries_limit_metric)[0];
  if (asArray(fd.groupby).length || !sort || metricLabel(sort) !== fd.x_axis_sort) return [];
  return asArray(fd.metrics).some((m) => metricLabel(m) === fd.x_axis_sort) ? [] : [sort];
}

function uniqueBy(xs: unknown[], key: (x: unknown) => string): unknown[] {
  const seen = new Set<string>();
  return xs.filter((x) => !seen.has(key(x)) && (seen.add(key(x)), true));
}

/** lodash isEmpty as the frontend applies it to a metric: nothing, an empty string, array or object. */
function isEmpty(v: unknown): boolean {
  if (v === undefined || v === null) return true;
  if (typeof v === 'string' || Array.isArray(v)) return v.length === 0;
  return typeof v === 'object' ? Object.keys(v).length === 0 : true;
}

function ensureIsInt(v: unknown, fallback: number): number {
  const n = Number.parseInt(String(v), 10);
  return Number.isNaN(n) ? fallback : n;
}

/** isAdhocColumn: an SQL column with an expression and a label. */
function isAdhoc(c: unknown): boolean {
  if (typeof c !== 'object' || c === null) return false;
  const a = c as FormData;
  return a.sqlExpression !== undefined && a.label !== undefined && (a.expressionType === undefined || a.expressionType === 'SQL');
}
const isMetric = (m: unknown): boolean => (typeof m === 'string' ? m !== '' : typeof m === 'object' && m !== null);
const newerThan5 = (release: string | null): boolean => release === null || compareRelease(release, '6.0') >= 0;
