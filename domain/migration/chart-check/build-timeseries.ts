/**
 * The ECharts time series plugins' one buildQuery (line, bar, area, scatter, smooth, step and the
 * generic one, 4.1 to 6.1): the x-axis (or the legacy time column) and the dimensions, pivoted by
 * the x-axis, the rolling window and resampling in the release's order, the metric name truncated,
 * the contribution, the x-axis sort, flattened. A time comparison or a forecast is refused, and so
 * is the one case where releases rename differently (a truncated metric with a comparison type).
 */
import { asArray, metricLabel, type FormDataBuild } from './build.ts';
import {
  extractQueryFields,
  extraMetrics,
  finishQuery,
  flattenOperator,
  normalizedOrderBy,
  pivotOperator,
  timeBaseQuery,
  timeOperatorsRefusal,
  windowOperators,
  xAxisColumn,
  xAxisLabel,
  xAxisSet,
} from './build-time.ts';

type FormData = Record<string, unknown>;
type QueryObject = Record<string, unknown>;

const COMPARISONS = ['difference', 'percentage', 'ratio'];

export const buildTimeseries: FormDataBuild = (fd, release) => {
  if (fd.series_columns !== undefined) return { reason: 'a time series chart with series columns of its own: its build is not reproduced' };
  let fields: ReturnType<typeof extractQueryFields>;
  try {
    fields = extractQueryFields(fd);
  } catch {
    // expected: an order that does not parse is the chart's own fault, reported as the reason returned.
    return { reason: 'a time series chart whose order is not JSON: its plugin fails to build it too' };
  }
  if (!fields.metrics.length) return { reason: 'a time series chart without metrics' };
  const refusal = timeOperatorsRefusal(fd, fields.metrics);
  if (refusal) return { reason: `a time series chart with ${refusal}` };
  const base: QueryObject = { ...timeBaseQuery(fd, release), ...fields };
  const truncates =
    fd.truncate_metric !== undefined && !!fd.truncate_metric && asArray(base.columns).length > 0 && fields.metrics.length === 1;
  if (truncates && COMPARISONS.includes(String(fd.comparison_type)))
    return { reason: 'a time series chart truncating its metric name with a comparison type: releases rename it differently' };
  const x = xAxisSet(fd);
  const query = {
    ...base,
    metrics: [...fields.metrics, ...extraMetrics(fd)],
    columns: [...(x ? asArray(xAxisColumn(fd)) : []), ...asArray(fd.groupby)],
    ...(fd.groupby === undefined ? {} : { series_columns: fd.groupby }),
    ...(x ? {} : { is_timeseries: true }),
    orderby: normalizedOrderBy(base),
    time_offsets: [],
    post_processing: [
      pivotOperator(fd, base),
      ...windowOperators(fd, base, release),
      truncates && xAxisLabel(fd)
        ? { operation: 'rename', options: { columns: { [metricLabel(fields.metrics[0])]: null }, level: 0, inplace: true } }
        : undefined,
      fd.contributionMode ? { operation: 'contribution', options: { orientation: fd.contributionMode, time_shifts: [] } } : undefined,
      sortOperator(fd),
      flattenOperator(),
    ],
  };
  if (query.orderby === undefined) delete (query as QueryObject).orderby;
  return { queries: [finishQuery(fd, query, release)] };
};

/** sortOperator: without dimensions, the x-axis sorted by itself or by a metric, when both sort controls are set. */
function sortOperator(fd: FormData): QueryObject | undefined {
  const x = xAxisLabel(fd);
  const sortable = [x, ...asArray(fd.metrics).map(metricLabel), ...extraMetrics(fd).map(metricLabel)].filter(Boolean);
  const set = (v: unknown) => v !== undefined && v !== null;
  if (!set(fd.x_axis_sort) || !set(fd.x_axis_sort_asc) || !sortable.includes(fd.x_axis_sort as string) || asArray(fd.groupby).length)
    return undefined;
  return fd.x_axis_sort === x
    ? { operation: 'sort', options: { is_sort_index: true, ascending: fd.x_axis_sort_asc } }
    : { operation: 'sort', options: { by: fd.x_axis_sort, ascending: fd.x_axis_sort_asc } };
}
