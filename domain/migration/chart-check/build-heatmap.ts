/**
 * The ECharts heatmap plugin's buildQuery: the x-axis column and the y dimension, ordered by the
 * axis sorts (by the metric's label when a sort is by value), ranked by the `rank` operator across
 * x, y or the whole heatmap. 4.1 orders by both sorts unconditionally (its build throws without
 * them: refused); 5.0 on only by those set. A heatmap on the legacy time column (no x-axis) is
 * refused: its plugin asks for `__timestamp` as a column.
 */
import { asArray, metricLabel, type FormDataBuild } from './build.ts';
import { columnLabel, finishQuery, timeBaseQuery, xAxisSet } from './build-time.ts';
import { compareRelease } from './release.ts';

export const buildHeatmap: FormDataBuild = (fd, release) => {
  if (!fd.metric) return { reason: 'a heatmap without a metric' };
  if (!fd.x_axis || !xAxisSet(fd)) return { reason: 'a heatmap without an x-axis column: its build is not reproduced' };
  const sortX = fd.sort_x_axis as string | undefined;
  const sortY = fd.sort_y_axis as string | undefined;
  const before5 = release !== null && compareRelease(release, '5.0') < 0;
  if ((before5 && (!sortX || !sortY)) || [sortX, sortY].some((s) => s && typeof s !== 'string'))
    return { reason: 'a heatmap without both axis sorts: its plugin fails to build it in this release' };
  if (fd.normalize_across === 'y' && typeof fd.groupby !== 'string')
    return { reason: 'a heatmap normalised across a y dimension that is not one column: its build is not reproduced' };
  const metric = metricLabel(fd.metric);
  const columns = [fd.x_axis, ...asArray(fd.groupby)];
  const orderby: unknown[] = [];
  if (sortX) orderby.push([sortX.includes('value') ? metric : columns[0], sortX.includes('asc')]);
  if (sortY) orderby.push([sortY.includes('value') ? metric : columns[1], sortY.includes('asc')]);
  const groupBy = fd.normalize_across === 'x' ? columnLabel(fd.x_axis) : fd.normalize_across === 'y' ? columnLabel(fd.groupby) : undefined;
  const query = {
    ...timeBaseQuery(fd, release),
    metrics: [fd.metric],
    columns,
    orderby,
    post_processing: [{ operation: 'rank', options: { metric, ...(groupBy === undefined ? {} : { group_by: groupBy }) } }],
  };
  return { queries: [finishQuery(fd, query, release)] };
};
