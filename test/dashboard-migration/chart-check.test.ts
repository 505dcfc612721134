import { describe, expect, it } from 'vitest';
import { classify } from '../../domain/migration/chart-check/classify.ts';
import { planCheck } from '../../domain/migration/chart-check/decide.ts';
import { columnsFromData, MAX_QUERIES_PER_CALL, runChecks } from '../../domain/migration/chart-check/run.ts';
import type { ChartAnswer, ChartForCheck } from '../../domain/migration/chart-check/types.ts';
import type { MigrationUpstream } from '../../domain/migration/upstream.ts';
import { aggregateFields } from '../../contracts/migration.ts';

/** The chart check's decider and classification, and the dropped fields' aggregation, without Superset. */
const chart = (over: Partial<ChartForCheck>): ChartForCheck => ({
  id: 7,
  uuid: 'u-7',
  name: 'c',
  viz_type: 'table',
  form_data: {},
  datasource: { id: 3, type: 'table' },
  query_context: null,
  ...over,
});

describe('how a chart is checked', () => {
  it('sends a legacy-API type to the explore endpoint in the releases whose frontend does so, and says why otherwise', () => {
    expect(planCheck(chart({ viz_type: 'deck_scatter' }), '6.0.0')).toEqual({ method: 'legacy_api', chartId: 7 });
    expect(planCheck(chart({ viz_type: 'deck_scatter' }), '4.1.4').method).toBe('legacy_api');
    const in61 = planCheck(chart({ viz_type: 'deck_scatter' }), '6.1.0');
    expect(in61.method).toBeNull();
    expect((in61 as { reason: string }).reason).toMatch(/deck_scatter/);
    expect(planCheck(chart({ viz_type: 'deck_geojson' }), '6.1.0').method).toBe('legacy_api');
    expect(planCheck(chart({ viz_type: 'histogram' }), '4.1.4').method).toBe('legacy_api');
    expect(planCheck(chart({ viz_type: 'histogram' }), '5.0.0').method).toBeNull();
  });

  it("runs a saved query context pointed at the chart's own dataset", () => {
    const saved = { datasource: { id: 99, type: 'table' }, queries: [{ columns: ['a'] }], form_data: { datasource: '99__table' } };
    const plan = planCheck(chart({ query_context: saved }), '6.1.0') as { method: string; queryContext: any };
    expect(plan.method).toBe('saved_query_context');
    expect(plan.queryContext.datasource).toEqual({ id: 3, type: 'table' });
    expect(plan.queryContext.form_data.datasource).toBe('3__table');
    expect(plan.queryContext.queries).toEqual([{ columns: ['a'] }]);
  });

  it('builds a table query by its mode: raw records never mixed with the groupby (no duplicate labels)', () => {
    // Superset's example "Games": both all_columns and groupby, no query_mode: the plugin reads it as raw.
    const fd = {
      all_columns: ['name', 'platform'],
      groupby: ['name'],
      metrics: ['count'],
      adhoc_filters: [{ expressionType: 'SIMPLE', clause: 'WHERE', subject: 'rank', operator: '<=', comparator: '25' }],
    };
    const plan = planCheck(chart({ form_data: fd }), '6.1.0') as { method: string; queryContext: any };
    expect(plan.method).toBe('form_data');
    expect(plan.queryContext.queries[0]).toMatchObject({
      columns: ['name', 'platform'],
      metrics: [],
      filters: [{ col: 'rank', op: '<=', val: '25' }],
    });
    const agg = planCheck(
      chart({ form_data: { query_mode: 'aggregate', groupby: ['g'], metrics: ['m'], all_columns: ['x'] } }),
      '6.1.0',
    ) as any;
    expect(agg.queryContext.queries[0]).toMatchObject({ columns: ['g'], metrics: ['m'], orderby: [['m', false]] });
    expect(planCheck(chart({ viz_type: 'bubble_v2' }), '6.1.0').method).toBeNull();
    expect(planCheck(chart({ form_data: { groupby: ['g'], metrics: ['m'], time_compare: ['1 year ago'] } }), '6.1.0').method).toBeNull();
  });

  it('builds a big number with trendline over its x-axis, a column reference from 6.0 on, and refuses what it does not reproduce', () => {
    const fd = { x_axis: 'ds', time_grain_sqla: 'P1M', metric: 'count', rolling_type: 'cumsum', adhoc_filters: [] };
    const query = (release: string) =>
      (planCheck(chart({ viz_type: 'big_number', form_data: fd }), release) as any).queryContext.queries[0];
    const axis = { timeGrain: 'P1M', columnType: 'BASE_AXIS', sqlExpression: 'ds', label: 'ds', expressionType: 'SQL' };
    expect(query('6.1.0').columns).toEqual([{ ...axis, isColumnReference: true }]);
    expect(query('4.1.4').columns).toEqual([axis]);
    expect(query('6.1.0')).not.toHaveProperty('is_timeseries');
    expect(query('6.1.0').post_processing).toEqual([
      {
        operation: 'pivot',
        options: { index: ['ds'], columns: [], aggregates: { count: { operator: 'mean' } }, drop_missing_columns: true },
      },
      { operation: 'cum', options: { operator: 'sum', columns: { count: 'count' } } },
      { operation: 'flatten' },
    ]);
    // The legacy time column: a time series query indexed by __timestamp.
    const legacy = (
      planCheck(
        chart({ viz_type: 'big_number', form_data: { granularity_sqla: 'ds', metric: 'count', rolling_type: 'None', limit: '25' } }),
        '6.1.0',
      ) as any
    ).queryContext.queries[0];
    expect(legacy).toMatchObject({ columns: [], is_timeseries: true, granularity: 'ds', series_limit: 25 });
    expect(legacy.post_processing.map((p: { operation: string }) => p.operation)).toEqual(['pivot', 'flatten']);
    expect(legacy.post_processing[0].options.index).toEqual(['__timestamp']);
    expect(planCheck(chart({ viz_type: 'big_number', form_data: { ...fd, time_compare: ['1 year ago'] } }), '6.1.0').method).toBeNull();
    expect(planCheck(chart({ viz_type: 'big_number', form_data: { ...fd, aggregation: 'raw' } }), '6.1.0').method).toBeNull();
    // 6.1 resamples before the rolling window, the releases before it after.
    const both = { ...fd, resample_method: 'asfreq', resample_rule: '1D' };
    const order = (release: string) =>
      (planCheck(chart({ viz_type: 'big_number', form_data: both }), release) as any).queryContext.queries[0].post_processing.map(
        (p: { operation: string }) => p.operation,
      );
    expect(order('6.1.0')).toEqual(['pivot', 'resample', 'cum', 'flatten']);
    expect(order('6.0.0')).toEqual(['pivot', 'cum', 'resample', 'flatten']);
  });

  it('builds the ECharts time series query by its dimensions and order, and refuses what it does not reproduce', () => {
    const fd = { x_axis: 'ds', groupby: ['region'], metrics: ['count'], truncate_metric: true, time_grain_sqla: 'P1D' };
    const plan = (over: Record<string, unknown>, viz = 'echarts_timeseries_line') =>
      planCheck(chart({ viz_type: viz, form_data: { ...fd, ...over } }), '6.1.0') as any;
    const q = plan({}).queryContext.queries[0];
    expect(q).toMatchObject({ series_columns: ['region'], metrics: ['count'], orderby: [['count', false]], time_offsets: [] });
    expect(q.columns[1]).toBe('region');
    expect(q.post_processing.map((p: { operation: string }) => p.operation)).toEqual(['pivot', 'rename', 'flatten']);
    expect(q.post_processing[0].options).toMatchObject({ index: ['ds'], columns: ['region'] });
    // Ordered by the series limit metric when there is one, ascending when asked.
    expect(plan({ timeseries_limit_metric: 'm2', order_desc: false }, 'echarts_area').queryContext.queries[0].orderby).toEqual([
      ['m2', true],
    ]);
    // One metric, no dimension: nothing to truncate; the x-axis sorted by its own values.
    const sorted = plan({ groupby: [], x_axis_sort: 'ds', x_axis_sort_asc: false }, 'echarts_timeseries_bar').queryContext.queries[0];
    expect(sorted.post_processing.map((p: { operation: string }) => p.operation)).toEqual(['pivot', 'sort', 'flatten']);
    expect(sorted.post_processing[1].options).toEqual({ is_sort_index: true, ascending: false });
    for (const refused of [{ time_compare: ['1 year ago'] }, { forecastEnabled: true }, { metrics: [] }, { comparison_type: 'ratio' }])
      expect(plan(refused).method, JSON.stringify(refused)).toBeNull();
  });

  it('builds a histogram from its column and dimensions, binned by the histogram operator', () => {
    const plan = (fd: Record<string, unknown>) => planCheck(chart({ viz_type: 'histogram_v2', form_data: fd }), '4.1.4') as any;
    const q = plan({ column: 'age', groupby: ['g'], bins: '7' }).queryContext.queries[0];
    expect(q.columns).toEqual(['g', 'age']);
    expect(q).not.toHaveProperty('metrics');
    expect(q.post_processing).toEqual([{ operation: 'histogram', options: { column: 'age', groupby: ['g'], bins: 7 } }]);
    expect(plan({ column: 'age', bins: 'many' }).queryContext.queries[0].post_processing[0].options).toEqual({
      column: 'age',
      groupby: [],
      bins: 5,
    });
    expect(plan({ groupby: ['g'] }).method).toBeNull();
  });

  it('builds a heatmap ordered by the axis sorts set, and refuses what its release would not build', () => {
    const fd = { x_axis: 'x', groupby: 'y', metric: 'count', sort_x_axis: 'value_asc', normalize_across: 'y' };
    const plan = (over: Record<string, unknown>, release = '6.1.0') =>
      planCheck(chart({ viz_type: 'heatmap_v2', form_data: { ...fd, ...over } }), release) as any;
    const q = plan({}).queryContext.queries[0];
    expect(q.columns[1]).toBe('y');
    expect(q.columns[0]).toMatchObject({ columnType: 'BASE_AXIS', sqlExpression: 'x' });
    expect(q.orderby).toEqual([['count', true]]);
    expect(q.post_processing).toEqual([{ operation: 'rank', options: { metric: 'count', group_by: 'y' } }]);
    expect(plan({ sort_y_axis: 'alpha_desc' }).queryContext.queries[0].orderby).toEqual([
      ['count', true],
      ['y', false],
    ]);
    // 4.1's build throws without both sorts; a heatmap on the legacy time column asks for __timestamp.
    expect(plan({}, '4.1.4').method).toBeNull();
    expect(plan({ sort_y_axis: 'alpha_asc' }, '4.1.4').method).toBe('form_data');
    expect(plan({ x_axis: undefined, granularity_sqla: 'ds' }).method).toBeNull();
  });
});

describe('charts on one dataset are queried together', () => {
  /** An upstream that answers each query with the number its query context carries as `row_limit`, and records each call's query counts. */
  const counting = () => {
    const calls: number[][] = [];
    const answer = (qc: Record<string, unknown>): ChartAnswer => ({
      ok: true,
      rows: Number((qc.queries as any[])[0].row_limit),
      columns: [],
    });
    const up = {
      runQueryContext: async (qc: Record<string, unknown>) => (calls.push([(qc.queries as unknown[]).length]), answer(qc)),
      runQueryContexts: async (qcs: Array<Record<string, unknown>>) => (
        calls.push(qcs.map((q) => (q.queries as unknown[]).length)),
        qcs.map(answer)
      ),
      runLegacyChart: async () => ({ unverifiable: 'not here' }),
    } as unknown as MigrationUpstream;
    return { up, calls };
  };
  const saved = (n: number, dataset: number) =>
    chart({ id: n, uuid: `u-${n}`, datasource: { id: dataset, type: 'table' }, query_context: { queries: [{ row_limit: n }] } });

  it('whichever dashboard holds them, in calls of at most MAX_QUERIES_PER_CALL queries, each chart with its own answer', async () => {
    // Ten dashboards' two charts on dataset 1, and two charts on dataset 2, in the order the dashboards list them.
    const charts = Array.from({ length: 10 }, (_, d) => [saved(100 + d, 1), saved(200 + d, 1)]).flat();
    charts.splice(5, 0, saved(300, 2), saved(301, 2));
    const { up, calls } = counting();
    const checks = await runChecks(up, charts, '6.1.0', 4);
    expect(checks.map((c) => (c.answer as { rows: number }).rows)).toEqual(charts.map((c) => c.id));
    expect(MAX_QUERIES_PER_CALL).toBe(8);
    expect(calls.map((c) => c.length).sort((a, b) => a - b)).toEqual([2, 4, 8, 8]);
    expect(calls.flat().reduce((a, b) => a + b)).toBe(22);
  });

  it('counts a chart of several queries as that many, and never splits one', async () => {
    const wide = chart({
      id: 9,
      datasource: { id: 1, type: 'table' },
      query_context: { queries: Array.from({ length: 5 }, () => ({ row_limit: 9 })) },
    });
    const { up, calls } = counting();
    await runChecks(up, [saved(1, 1), saved(2, 1), saved(3, 1), saved(4, 1), wide, saved(5, 1)], '6.1.0', 4);
    expect(calls).toEqual(
      expect.arrayContaining([
        [1, 1, 1, 1],
        [5, 1],
      ]),
    );
    expect(calls).toHaveLength(2);
  });

  it("sends a query two charts share once, and gives each its answer (a copied chart, a dashboard's twin)", async () => {
    // Charts 1 and 3 ask the same of dataset 1; chart 4 the same queries of dataset 2 (another dataset: asked apart).
    const same = (id: number, dataset: number) =>
      chart({ id, datasource: { id: dataset, type: 'table' }, query_context: { queries: [{ row_limit: 5 }] } });
    const { up, calls } = counting();
    const checks = await runChecks(up, [same(1, 1), saved(2, 1), same(3, 1), same(4, 2)], '6.1.0', 4);
    expect(calls.flat().reduce((a, b) => a + b)).toBe(3);
    expect(checks.map((c) => (c.answer as { rows: number }).rows)).toEqual([5, 2, 5, 5]);
    expect(checks.map((c) => c.method)).toEqual(Array(4).fill('saved_query_context'));
    // Each chart holds its own answer: one changed does not change its twin's.
    (checks[0]!.answer as { rows: number }).rows = 0;
    expect((checks[2]!.answer as { rows: number }).rows).toBe(5);
  });
});

describe('how a chart is classified', () => {
  const ran = (columns: string[], rows = 0) => ({ ok: true as const, rows, columns: columns.map((name) => ({ name, type: 1 })) });
  const failed = { ok: false as const, error: 'no such column: tz' };
  it('fails a dashboard only for what the migration broke', () => {
    expect(classify(ran(['a']), ran(['a'])).classification).toBe('passes');
    expect(classify(failed, ran(['a'])).classification).toBe('broken_by_migration');
    expect(classify(failed, failed).classification).toBe('failing_in_source');
    expect(classify(ran(['a']), failed).classification).toBe('passes');
    expect(classify(ran(['b']), ran(['a']))).toMatchObject({
      classification: 'broken_by_migration',
      reason: expect.stringMatching(/columns/),
    });
    expect(classify({ unverifiable: 'no build' }, ran(['a']))).toEqual({ classification: 'not_verifiable', reason: 'no build' });
    expect(classify(failed, { unverifiable: 'source down' }).classification).toBe('not_verifiable');
    expect(classify(failed, null).classification).toBe('broken_by_migration');
    // Types are compared only where both had rows to infer them from.
    const typed = (type: number, rows: number) => ({ ok: true as const, rows, columns: [{ name: 'a', type }] });
    expect(classify(typed(2, 0), typed(1, 5)).classification).toBe('passes');
    expect(classify(typed(2, 3), typed(1, 5)).classification).toBe('broken_by_migration');
  });
});

describe('how a chart is classified across releases (issue 50)', () => {
  const ran = (columns: string[], rows = 0) => ({ ok: true as const, rows, columns: columns.map((name) => ({ name, type: 1 })) });
  const at = (release: string | null, method: 'form_data' | 'legacy_api' | 'saved_query_context' = 'form_data') => ({ release, method });
  const sides = (source: string | null, target: string | null) => ({ source: at(source), target: at(target) });
  it('an older release answering an empty result without its columns is not a break, in either direction', () => {
    // 4.1 and 5.0 build an answer's columns from its rows: an empty result comes back with colnames [].
    for (const [s, t] of [
      ['6.1.0', '5.0.0'],
      ['6.1.0', '4.1.4'],
      ['4.1.4', '6.1.0'],
      ['5.0.0', '6.1.0'],
    ] as const) {
      const [src, tgt] = s === '6.1.0' ? [ran(['order_date', 'SUM(Sales)']), ran([])] : [ran([]), ran(['order_date', 'SUM(Sales)'])];
      const judged = classify(tgt, src, sides(s, t));
      expect(judged, `${s} → ${t}`).toMatchObject({
        classification: 'passes',
        reason: expect.stringMatching(/without rows without its columns/),
      });
    }
    // What is comparable still decides: an error against a success.
    expect(classify({ ok: false, error: 'no such column: publisher' }, ran([]), sides('4.1.4', '6.1.0')).classification).toBe(
      'broken_by_migration',
    );
    expect(classify({ ok: false, error: 'x' }, { ok: false, error: 'x' }, sides('6.1.0', '4.1.4')).classification).toBe(
      'failing_in_source',
    );
  });

  it('compares columns only at the same stage and through the same endpoint', () => {
    // Superset post-processes only a result with rows: an empty answer's columns are the query's own.
    expect(classify(ran(['ds', 'region', 'total']), ran(['ds', 'total, east'], 4), sides('6.1.0', '6.1.0'))).toMatchObject({
      classification: 'passes',
      reason: expect.stringMatching(/only the source's answer has rows/),
    });
    // A pivot by series columns or histogram bins names columns by the data's values: with rows, not compared by name, even within one release.
    const pivoted = { source: { ...at('6.1.0'), columnsFromData: true }, target: { ...at('6.1.0'), columnsFromData: true } };
    expect(classify(ran(['ds', 'total, west'], 3), ran(['ds', 'total, east'], 4), pivoted)).toMatchObject({
      classification: 'passes',
      reason: expect.stringMatching(/values of the data/),
    });
    expect(classify(ran(['ds', 'total, west'], 3), ran(['ds', 'total, east'], 4), sides('6.1.0', '6.1.0')).classification).toBe(
      'broken_by_migration',
    );
    const pivot = (columns: string[]) => ({
      queries: [{ post_processing: [{ operation: 'pivot', options: { index: ['ds'], columns } }, { operation: 'flatten' }] }],
    });
    expect(
      [pivot(['region']), pivot([]), { queries: [{ post_processing: [{ operation: 'histogram', options: {} }] }] }].map(columnsFromData),
    ).toEqual([true, false, true]);
    const legacy = { source: at('6.0.0', 'legacy_api'), target: at('6.1.0', 'form_data') };
    expect(classify(ran(['a'], 2), ran(['b'], 2), legacy)).toMatchObject({
      classification: 'passes',
      reason: expect.stringMatching(/legacy explore endpoint/),
    });
  });

  it('within a release line the columns must match; across lines a column missing is not judged, an order or extra column is representation', () => {
    expect(classify(ran(['b'], 1), ran(['a'], 1), sides('6.1.0', '6.1.1')).classification).toBe('broken_by_migration');
    expect(classify(ran(['b', 'a'], 1), ran(['a'], 1), sides('5.0.0', '6.1.0')).classification).toBe('passes');
    expect(classify(ran(['b'], 1), ran(['a'], 1), sides('6.1.0', '5.0.0'))).toMatchObject({
      classification: 'not_verifiable',
      reason: expect.stringMatching(/5\.0\.0.*6\.1\.0/),
    });
    // Types are compared within a release line only.
    const typed = (type: number) => ({ ok: true as const, rows: 3, columns: [{ name: 'a', type }] });
    expect(classify(typed(2), typed(1), sides('6.1.0', '4.1.4')).classification).toBe('passes');
    expect(classify(typed(2), typed(1), sides('6.1.0', '6.1.0')).classification).toBe('broken_by_migration');
  });
});

describe('dropped fields', () => {
  it('are aggregated by kind and field, with counts and a few examples', () => {
    const dropped = Array.from({ length: 328 }, (_, i) => ({
      file: 'datasets/examples/sales.yaml',
      object: 'dataset "sales"',
      field: `columns.${i}.datetime_format`,
    }));
    dropped.push({ file: 'databases/examples.yaml', object: 'database "examples"', field: 'configuration_method' });
    const agg = aggregateFields(dropped);
    expect(agg).toHaveLength(2);
    expect(agg[0]).toMatchObject({ kind: 'dataset', field: 'columns.*.datetime_format', count: 328 });
    expect(agg[0]!.examples).toHaveLength(3);
    expect(agg[1]).toMatchObject({ kind: 'database', field: 'configuration_method', count: 1 });
  });
});
