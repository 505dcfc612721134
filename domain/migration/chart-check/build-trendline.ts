/**
 * The Big Number with Trendline plugin's buildQuery (4.1 to 6.1; from 6.0 a second query when it
 * aggregates raw values, which is refused): its metric over the x-axis (or the legacy time column),
 * pivoted, then the cumulative or rolling window and the resampling (in the release's order), flattened.
 */
import type { FormDataBuild } from './build.ts';
import {
  finishQuery,
  flattenOperator,
  pivotOperator,
  timeBaseQuery,
  timeOperatorsRefusal,
  xAxisColumn,
  windowOperators,
  xAxisSet,
} from './build-time.ts';

export const buildBigNumberTrendline: FormDataBuild = (fd, release) => {
  if (!fd.metric) return { reason: 'a big number without a metric' };
  if (fd.aggregation === 'raw') return { reason: 'a big number aggregating raw values: its second query is not reproduced' };
  const metrics = [fd.metric];
  const refusal = timeOperatorsRefusal(fd, metrics);
  if (refusal) return { reason: `a big number with ${refusal}` };
  const base = { ...timeBaseQuery(fd, release), columns: [], metrics };
  const x = xAxisSet(fd);
  const query = {
    ...base,
    columns: x ? [xAxisColumn(fd)].filter((c) => c !== undefined) : [],
    ...(x ? {} : { is_timeseries: true }),
    post_processing: [pivotOperator(fd, base), ...windowOperators(fd, base, release), flattenOperator()],
  };
  return { queries: [finishQuery(fd, query, release)] };
};
