/**
 * Queries built from a chart's `form_data` the way its plugin's `buildQuery` writes them in the
 * browser (superset-ui-core's buildQueryObject, then the plugin's own part), for the few types in
 * FORM_DATA_BUILDS (./visualisations.ts). What a build does not reproduce (a time comparison,
 * server pagination's extra queries) makes the chart `not_verifiable` rather than a guess.
 */
type FormData = Record<string, unknown>;
type QueryObject = Record<string, unknown>;

/** The chart's queries, or why they cannot be built faithfully. */
export type FormDataBuild = (fd: FormData, release: string | null) => { queries: QueryObject[] } | { reason: string };

/** Rows asked for: the check needs an answer's columns and whether it ran, not the data. */
const CHECK_ROW_LIMIT = 10;

/** buildQueryObject's part every plugin shares: the adhoc filters as filters and WHERE/HAVING, the time range. */
export function baseQuery(fd: FormData): QueryObject {
  const filters: Array<{ col: unknown; op: unknown; val?: unknown }> = [];
  const where: string[] = [];
  const having: string[] = [];
  for (const f of asArray(fd.adhoc_filters) as Array<Record<string, unknown>>) {
    if (!f || typeof f !== 'object') continue;
    if (f.expressionType === 'SQL') (f.clause === 'HAVING' ? having : where).push(`(${String(f.sqlExpression ?? '')})`);
    else if (f.clause !== 'HAVING')
      filters.push({ col: f.subject, op: f.operator, ...(f.comparator === undefined ? {} : { val: f.comparator }) });
  }
  return {
    filters,
    extras: { where: where.join(' AND '), having: having.join(' AND ') },
    ...(typeof fd.time_range === 'string' ? { time_range: fd.time_range } : {}),
    row_limit: CHECK_ROW_LIMIT,
    annotation_layers: [],
    applied_time_extras: {},
    url_params: {},
    custom_params: {},
    custom_form_data: {},
  };
}

/** superset-ui-core's getMetricLabel: a saved metric's name, an adhoc metric's label or what it would be labelled. */
export function metricLabel(m: unknown): string {
  if (typeof m === 'string') return m;
  const a = (m ?? {}) as Record<string, unknown>;
  if (typeof a.label === 'string' && a.label) return a.label;
  if (a.expressionType === 'SQL') return String(a.sqlExpression ?? '');
  const column = (a.column ?? {}) as Record<string, unknown>;
  return `${String(a.aggregate ?? '')}(${String(column.column_name ?? '')})`;
}

/** The table plugin: raw records (all_columns) or aggregated (groupby, metrics, percent metrics). */
export const buildTable: FormDataBuild = (fd) => {
  if (asArray(fd.time_compare).length) return { reason: 'a table with a time comparison: its build is not reproduced' };
  if (fd.server_pagination) return { reason: 'a table with server pagination: its build is not reproduced' };
  const raw = fd.query_mode === 'raw' || (fd.query_mode !== 'aggregate' && asArray(fd.all_columns).length > 0);
  if (raw) return { queries: [{ ...baseQuery(fd), columns: asArray(fd.all_columns), metrics: [], orderby: [] }] };
  const percent = asArray(fd.percent_metrics);
  const metrics = dedupeByLabel([...asArray(fd.metrics), ...percent]);
  const sortBy = asArray(fd.timeseries_limit_metric)[0];
  const orderby = sortBy ? [[sortBy, !fd.order_desc]] : metrics.length ? [[metrics[0], false]] : [];
  const labels = [...new Set(percent.map(metricLabel))];
  const post_processing = labels.length
    ? [{ operation: 'contribution', options: { columns: labels, rename_columns: labels.map((l) => `%${l}`) } }]
    : [];
  return { queries: [{ ...baseQuery(fd), columns: asArray(fd.groupby), metrics, orderby, post_processing }] };
};

/** The Big Number (total) plugin: its one metric. */
export const buildBigNumberTotal: FormDataBuild = (fd) => {
  if (!fd.metric) return { reason: 'a big number without a metric' };
  return { queries: [{ ...baseQuery(fd), columns: [], metrics: [fd.metric] }] };
};

/** The ECharts pie plugin: its dimensions and one metric, sorted by it when asked. */
export const buildPie: FormDataBuild = (fd) => {
  if (!fd.metric) return { reason: 'a pie without a metric' };
  const orderby = fd.sort_by_metric ? [[fd.metric, false]] : [];
  return { queries: [{ ...baseQuery(fd), columns: asArray(fd.groupby), metrics: [fd.metric], orderby }] };
};

/** The ECharts treemap plugin: its hierarchy (groupby) and one metric. */
export const buildTreemap: FormDataBuild = (fd) => {
  if (!fd.metric) return { reason: 'a treemap without a metric' };
  return {
    queries: [
      { ...baseQuery(fd), columns: asArray(fd.groupby), metrics: [fd.metric], orderby: fd.sort_by_metric ? [[fd.metric, false]] : [] },
    ],
  };
};

/** The word cloud plugin: its series (one column) and one metric. */
export const buildWordCloud: FormDataBuild = (fd) => {
  if (!fd.metric || !fd.series) return { reason: 'a word cloud without a series or a metric' };
  return {
    queries: [{ ...baseQuery(fd), columns: [fd.series], metrics: [fd.metric], orderby: fd.sort_by_metric ? [[fd.metric, false]] : [] }],
  };
};

function dedupeByLabel(metrics: unknown[]): unknown[] {
  const seen = new Set<string>();
  return metrics.filter((m) => !seen.has(metricLabel(m)) && (seen.add(metricLabel(m)), true));
}

export function asArray(v: unknown): unknown[] {
  if (v === undefined || v === null || v === '') return [];
  return Array.isArray(v) ? v : [v];
}
