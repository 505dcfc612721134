import { describe, expect, it } from 'vitest';
import { diffObjects } from '../../lib/bundles/diff.ts';

describe('bundle differences', () => {
  const chart = (datasetId: number, name: string) => ({
    slice_name: name,
    uuid: 'c1',
    params: { datasource: `${datasetId}__table`, slice_id: datasetId * 10, metrics: ['count'], annotation_layers: [] },
    query_context: JSON.stringify({
      datasource: { id: datasetId, type: 'table' },
      form_data: JSON.stringify({ datasource: `${datasetId}__table`, row_limit: 5 }),
    }),
  });

  it('ignores ids local to each environment and empty-value spellings', () => {
    expect(
      diffObjects('charts', chart(5, 'Sales'), { ...chart(2, 'Sales'), params: { ...chart(2, 'Sales').params, annotation_layers: null } }),
    ).toEqual([]);
    const dash = (chartId: number) => ({
      dashboard_title: 'D',
      position: { 'CHART-1': { type: 'CHART', meta: { uuid: 'c1', chartId } } },
      metadata: { chart_configuration: { [chartId]: {} }, color_scheme: 'x' },
    });
    expect(diffObjects('dashboards', dash(13), dash(9))).toEqual([]);
  });

  it('reports real changes field by field', () => {
    expect(diffObjects('charts', chart(5, 'Sales (renamed)'), chart(2, 'Sales'))).toEqual([
      { field: 'slice_name', source: 'Sales (renamed)', target: 'Sales' },
    ]);
    const changed = { ...chart(5, 'Sales'), params: { ...chart(5, 'Sales').params, metrics: ['sum'] } };
    expect(diffObjects('charts', changed, chart(2, 'Sales'))).toEqual([{ field: 'params.metrics', source: ['sum'], target: ['count'] }]);
  });

  it('ignores fields only one release exports, at any depth, and still sees changes beside them', () => {
    const older = { table_name: 't', columns: [{ column_name: 'ds', is_dttm: true }], metrics: [{ metric_name: 'count' }] };
    const newer = {
      table_name: 't',
      folders: null,
      currency_code_column: null,
      columns: [{ column_name: 'ds', is_dttm: true, datetime_format: null }],
      metrics: [{ metric_name: 'count' }],
    };
    expect(diffObjects('datasets', older, newer)).toEqual([]);
    expect(diffObjects('datasets', newer, older)).toEqual([]);
    const changed = { ...older, columns: [{ column_name: 'ds', is_dttm: false }] };
    expect(diffObjects('datasets', changed, newer)).toEqual([
      { field: 'columns', source: [{ column_name: 'ds', is_dttm: false }], target: [{ column_name: 'ds', is_dttm: true }] },
    ]);
    // A column added on one side is a change, not a field of another release.
    expect(diffObjects('datasets', { ...older, columns: [...older.columns, { column_name: 'x', is_dttm: false }] }, older)).toHaveLength(1);
  });
});
