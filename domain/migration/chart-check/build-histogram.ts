/**
 * The ECharts histogram plugin's buildQuery (the same in 4.1 to 6.1): its dimensions and its one
 * column, no metrics, binned server-side by the `histogram` operator (5 bins when the count is not
 * a number).
 */
import { asArray, type FormDataBuild } from './build.ts';
import { columnLabel, extractQueryFields, timeBaseQuery } from './build-time.ts';

export const buildHistogram: FormDataBuild = (fd, release) => {
  if (fd.column === undefined || fd.column === null || fd.column === '') return { reason: 'a histogram without a column' };
  const groupby = asArray(fd.groupby);
  const { orderby } = extractQueryFields(fd);
  const bins = Number.isNaN(Number(fd.bins)) ? 5 : Number(fd.bins);
  const histogram = {
    column: columnLabel(fd.column),
    groupby: groupby.map(columnLabel),
    bins,
    cumulative: fd.cumulative,
    normalize: fd.normalize,
  };
  return {
    queries: [
      {
        ...timeBaseQuery(fd, release),
        ...(orderby ? { orderby } : {}),
        columns: [...groupby, fd.column],
        post_processing: [{ operation: 'histogram', options: histogram }],
      },
    ],
  };
};
