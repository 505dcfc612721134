/**
 * The impact extraction on hand-made objects: what a chart's form_data and query context refer to,
 * what SQL reads by each dialect's parser, and what a change of a table, dataset, column, metric
 * or database names. Pure: no Superset (the examples-corpus file runs the same on real ones).
 */
import { describe, expect, it } from 'vitest';
import { analyseImpact } from '../../lib/impact/analyse.ts';
import { chartRefs } from '../../lib/impact/form-data.ts';
import { readsOfExpression, readsOfSql } from '../../lib/impact/sql-reads.ts';
import type { Inventory, InventoryChart } from '../../lib/impact/types.ts';

describe('chartRefs', () => {
  it('reads columns, saved metrics and adhoc SQL from form_data wherever the chart keeps them', () => {
    const refs = chartRefs({
      viz_type: 'echarts_timeseries_bar',
      datasource: '7__table',
      x_axis: 'year',
      groupby: ['platform', { expressionType: 'SQL', sqlExpression: 'upper(genre)', label: 'G' }],
      metrics: [
        'count',
        { expressionType: 'SIMPLE', aggregate: 'SUM', column: { column_name: 'global_sales' }, label: 'SUM(global_sales)' },
      ],
      adhoc_filters: [
        { expressionType: 'SIMPLE', subject: 'publisher', operator: 'IN', comparator: ['Nintendo'], clause: 'WHERE' },
        { expressionType: 'SQL', sqlExpression: 'rank < 10', clause: 'WHERE' },
      ],
      order_by_cols: ['["name", true]'],
      spatial: { type: 'latlong', lonCol: 'LON', latCol: 'LAT' },
      temporal_columns_lookup: { release_date: true },
      comparator_text: 'not a column',
    });
    expect(refs.columns.sort()).toEqual(['LAT', 'LON', 'global_sales', 'name', 'platform', 'publisher', 'release_date', 'year'].sort());
    expect(refs.metrics).toEqual(['count']);
    expect(refs.expressions.sort()).toEqual(['rank < 10', 'upper(genre)']);
  });

  it('reads the saved query context too (columns, filters, orderby, extras.where), from JSON strings', () => {
    const qc = JSON.stringify({
      datasource: { id: 7, type: 'table' },
      queries: [
        {
          columns: [{ sqlExpression: 'year', label: 'year', expressionType: 'SQL', isColumnReference: true, columnType: 'BASE_AXIS' }],
          metrics: ['sum__na_sales'],
          filters: [{ col: 'genre', op: 'IN', val: ['Sports'] }],
          orderby: [['sum__na_sales', false]],
          extras: { where: "region = 'EU'", having: '' },
        },
      ],
    });
    const refs = chartRefs(JSON.stringify({ viz_type: 'table' }), qc);
    expect(refs.columns.sort()).toEqual(['genre', 'year']);
    expect(refs.metrics).toEqual(['sum__na_sales']);
    expect(refs.expressions).toEqual(["region = 'EU'"]);
  });

  it('answers nothing for params that are not JSON', () => {
    expect(chartRefs('{not json', null)).toEqual({ columns: [], metrics: [], expressions: [] });
  });
});

describe('readsOfSql', () => {
  it("names the tables a query reads, not its WITH names, with each dialect's parser", () => {
    const sql = 'WITH t AS (SELECT name, score FROM main.video_game_sales) SELECT t.name FROM t JOIN other o ON o.id = t.score';
    for (const dialect of ['postgresql', 'sqlite', 'mysql'] as const) {
      const r = readsOfSql(dialect, sql);
      expect(r.ok, dialect).toBe(true);
      if (!r.ok) continue;
      expect(r.reads.tables.map((t) => `${t.schema ?? ''}.${t.table}`).sort(), dialect).toEqual(['.other', 'main.video_game_sales']);
      expect(r.reads.columns, dialect).toContain('score');
      expect(r.reads.star, dialect).toBe(false);
    }
  });

  it('tells a star apart and says why it cannot read Jinja', () => {
    const star = readsOfSql('postgresql', 'SELECT * FROM public.sales');
    expect(star.ok && star.reads.star).toBe(true);
    const jinja = readsOfSql('postgresql', "SELECT * FROM sales WHERE ds = '{{ ds }}' {% if x %}AND 1=1{% endif %}");
    expect(jinja).toMatchObject({ ok: false, reason: expect.stringMatching(/PostgreSQL's parser cannot read it/) });
  });

  it("reads an expression's columns, and a string literal is not one (PostgreSQL)", () => {
    const r = readsOfExpression('postgresql', "SUM(CASE WHEN genre = 'publisher' THEN na_sales END)");
    expect(r.ok && r.reads.columns.sort()).toEqual(['genre', 'na_sales']);
  });
});

const chart = (
  id: number,
  datasource_id: number,
  params: Record<string, unknown>,
  dashboards = [{ id: 1, title: 'Games' }],
): InventoryChart => ({
  id,
  uuid: null,
  name: `chart ${id}`,
  viz_type: String(params.viz_type ?? 'table'),
  datasource_id,
  datasource_type: 'table',
  params: JSON.stringify(params),
  query_context: null,
  dashboards,
});

function inventory(): Inventory {
  return {
    databases: [
      { id: 1, name: 'examples', backend: 'sqlite' },
      { id: 2, name: 'warehouse', backend: 'postgresql' },
      { id: 3, name: 'lake', backend: 'trino' },
    ],
    datasets: [
      { id: 10, uuid: null, table_name: 'video_game_sales', schema: null, catalog: null, sql: null, database_id: 1 },
      {
        id: 11,
        uuid: null,
        table_name: 'top_games',
        schema: null,
        catalog: null,
        sql: 'SELECT name, rank FROM video_game_sales WHERE rank < 10',
        database_id: 1,
      },
      {
        id: 12,
        uuid: null,
        table_name: 'all_games',
        schema: null,
        catalog: null,
        sql: 'SELECT * FROM main.video_game_sales',
        database_id: 1,
      },
      { id: 13, uuid: null, table_name: 'other', schema: null, catalog: null, sql: 'SELECT id FROM birth_names', database_id: 1 },
      { id: 14, uuid: null, table_name: 'video_game_sales', schema: 'public', catalog: null, sql: null, database_id: 2 },
      { id: 15, uuid: null, table_name: 'lake_games', schema: null, catalog: null, sql: 'SELECT * FROM video_game_sales', database_id: 3 },
    ],
    charts: [
      chart(100, 10, { groupby: ['platform'], metrics: ['count'] }),
      chart(101, 10, { groupby: ['genre'], metrics: ['total_na'] }),
      chart(102, 10, { metrics: [{ expressionType: 'SQL', sqlExpression: 'SUM(publisher_rank)' }] }, [{ id: 2, title: 'Other' }]),
      chart(103, 11, { all_columns: ['name'] }, []),
      chart(104, 13, { all_columns: ['id'] }),
      chart(105, 14, { groupby: ['platform'] }, [{ id: 3, title: 'Warehouse' }]),
    ],
    saved_queries: [
      {
        id: 200,
        label: 'sales by year',
        db_id: 1,
        schema: null,
        sql: 'SELECT year, SUM(global_sales) FROM video_game_sales GROUP BY year',
      },
      { id: 201, label: 'names', db_id: 1, schema: null, sql: 'SELECT name FROM birth_names' },
    ],
    reports: [
      { id: 300, name: 'Games weekly', type: 'Report', dashboard_id: 1, chart_id: null, database_id: null, sql: null },
      {
        id: 301,
        name: 'No sales',
        type: 'Alert',
        dashboard_id: null,
        chart_id: null,
        database_id: 1,
        sql: 'SELECT COUNT(*) FROM video_game_sales',
      },
      { id: 302, name: 'Warehouse', type: 'Report', dashboard_id: 3, chart_id: null, database_id: null, sql: null },
    ],
    definitions: [{ dataset_id: 10, metrics: [{ metric_name: 'total_na', expression: 'SUM(na_sales)' }], calculated: [] }],
    unreadable: [],
    truncated: [],
  };
}

const ids = (xs: Array<{ id: number }>) => xs.map((x) => x.id).sort((a, b) => a - b);

describe('analyseImpact', () => {
  it("a table on a database: its physical dataset's charts, the virtual datasets reading it and theirs, their dashboards, saved queries and reports", () => {
    const r = analyseImpact(inventory(), { table: 'video_game_sales', database: 'examples' });
    expect(ids(r.datasets)).toEqual([10, 11, 12]);
    expect(ids(r.charts)).toEqual([100, 101, 102, 103]);
    expect(ids(r.dashboards)).toEqual([1, 2]);
    expect(r.dashboards.find((d) => d.id === 1)!.name).toBe('Games');
    expect(ids(r.saved_queries)).toEqual([200]);
    expect(ids(r.reports)).toEqual([300, 301]);
    expect(r.unparsed).toEqual([]);
  });

  it('a table on any database: the PostgreSQL one too, and SQL no parser here reads is named as unparsed, not dropped', () => {
    const r = analyseImpact(inventory(), { table: 'video_game_sales' });
    expect(ids(r.charts)).toEqual([100, 101, 102, 103, 105]);
    expect(ids(r.reports)).toEqual([300, 301, 302]);
    expect(r.unparsed).toEqual([expect.objectContaining({ kind: 'dataset', id: 15, reason: expect.stringMatching(/no SQL parser/) })]);
  });

  it('a column: only the charts using it (directly, in SQL, through a saved metric), virtual datasets naming it or reading *', () => {
    const platform = analyseImpact(inventory(), { dataset: 10, column: 'platform' });
    expect(ids(platform.charts)).toEqual([100]);
    expect(platform.charts[0]!.via).toEqual(['column platform']);
    expect(ids(platform.datasets)).toEqual([12]);
    const na = analyseImpact(inventory(), { dataset: 10, column: 'na_sales' });
    expect(ids(na.charts)).toEqual([101]);
    expect(na.charts[0]!.via).toEqual(['saved metric total_na']);
    expect(na.dataset_fields).toEqual([{ dataset_id: 10, kind: 'metric', name: 'total_na' }]);
    const rank = analyseImpact(inventory(), { dataset: 10, column: 'rank' });
    expect(ids(rank.charts)).toEqual([103]);
    expect(ids(rank.datasets)).toEqual([11, 12]);
    expect(ids(analyseImpact(inventory(), { dataset: 10, column: 'publisher_rank' }).charts)).toEqual([102]);
  });

  it('a metric: the charts using it by name; a dataset: its charts; a database: everything on it', () => {
    expect(ids(analyseImpact(inventory(), { dataset: 10, metric: 'total_na' }).charts)).toEqual([101]);
    const ds = analyseImpact(inventory(), { dataset: 11 });
    expect(ids(ds.charts)).toEqual([103]);
    expect(ds.saved_queries).toEqual([]);
    const db = analyseImpact(inventory(), { database: '2' });
    expect(ids(db.charts)).toEqual([105]);
    expect(ids(db.reports)).toEqual([302]);
    expect(db.resolved.databases).toEqual([{ id: 2, name: 'warehouse' }]);
  });
});
