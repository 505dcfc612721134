// The pure parts of dataset review: link parsing, template variables, filter import, the
// execution snapshot's rules, candidate ranking, and the exports.
import { describe, expect, it } from 'vitest';
import { importFilters, maskFilterValues, type ImportedFilter } from '../../lib/dataset-review/filters.ts';
import { templateVariables } from '../../lib/dataset-review/jinja.ts';
import { LinkError, parseDashboardLink } from '../../lib/dataset-review/link.ts';
import { rankCandidates } from '../../lib/dataset-review/ranking.ts';
import { buildSnapshot, proposeMappings } from '../../lib/dataset-review/snapshot.ts';
import { parseDictionaryCsv } from '../../lib/dictionary/csv.ts';

describe('dashboard links', () => {
  const base = 'https://bi.example.com/analytics';
  it('reads ids, slugs and permalinks, under the base path or not', () => {
    expect(parseDashboardLink('https://bi.example.com/analytics/superset/dashboard/12/', base)).toEqual({
      kind: 'dashboard_id',
      dashboardId: 12,
    });
    expect(parseDashboardLink('/superset/dashboard/sales-q1/?native_filters_key=x', base)).toEqual({
      kind: 'dashboard_slug',
      slug: 'sales-q1',
    });
    expect(parseDashboardLink('https://bi.example.com/analytics/superset/dashboard/p/AbC123xyz_-/', base)).toEqual({
      kind: 'permalink',
      key: 'AbC123xyz_-',
      dashboardRef: null,
    });
    expect(parseDashboardLink('/superset/dashboard/7/?permalink_key=KeY123', base)).toEqual({
      kind: 'permalink',
      key: 'KeY123',
      dashboardRef: '7',
    });
  });
  it('refuses what is not a dashboard link', () => {
    for (const bad of [
      '/explore/?slice_id=1',
      'ftp://x/superset/dashboard/1/',
      '/superset/dashboard/p/',
      '/superset/dashboard/1/extra/',
      '/superset/dashboard/99999999999/',
      '\u0005îmä%',
      '/superset/dashboard/%E4/',
    ]) {
      expect(() => parseDashboardLink(bad, base), bad).toThrow(LinkError);
    }
  });
});

describe('template variables', () => {
  it('finds url_param, filter_values, get_filters and plain variables, not Superset built-ins', () => {
    const sql = `SELECT * FROM t WHERE region IN {{ filter_values('region')|where_in }}
      AND p = '{{ url_param("product", "all") }}' {% for f in get_filters('ds') %}{% endfor %}
      AND y = {{ year }} AND u = '{{ current_username() }}' {% if country %}AND c = '{{ country | upper }}'{% endif %}`;
    const vars = templateVariables(sql, { year: 2025 });
    expect(vars).toEqual(
      expect.arrayContaining([
        { name: 'region', kind: 'filter_values', default: null },
        { name: 'product', kind: 'url_param', default: 'all' },
        { name: 'ds', kind: 'get_filters', default: null },
        { name: 'year', kind: 'plain', default: 2025 },
        { name: 'country', kind: 'plain', default: null },
      ]),
    );
    expect(vars.map((v) => v.name)).not.toContain('current_username');
    expect(vars.map((v) => v.name)).not.toContain('f');
  });
});

const filter = (over: Partial<ImportedFilter>): ImportedFilter => ({
  id: 'F',
  name: 'F',
  filter_type: 'filter_select',
  column: 'c',
  dataset_id: 1,
  raw_value: null,
  normalized: null,
  value_source: 'none',
  column_in_dataset: true,
  ...over,
});

describe('filters and the execution snapshot', () => {
  it('imports values from the permalink dataMask, falling back to defaults', () => {
    const meta = {
      native_filter_configuration: [
        { id: 'A', name: 'Region', filterType: 'filter_select', targets: [{ datasetId: 3, column: { name: 'region' } }] },
        {
          id: 'B',
          name: 'Year',
          filterType: 'filter_select',
          targets: [{ datasetId: 3, column: { name: 'year' } }],
          defaultDataMask: { filterState: { value: [2024] } },
        },
        { id: 'D', type: 'DIVIDER', name: 'divider' },
      ],
    };
    const f = importFilters(meta, {
      A: { extraFormData: { filters: [{ col: 'region', op: 'IN', val: ['NA'] }] }, filterState: { value: ['NA'] } },
    });
    expect(f).toHaveLength(2);
    expect(f[0]).toMatchObject({
      id: 'A',
      column: 'region',
      raw_value: ['NA'],
      normalized: [{ col: 'region', op: 'IN', val: ['NA'] }],
      value_source: 'permalink',
    });
    expect(f[1]).toMatchObject({ id: 'B', raw_value: [2024], normalized: null, value_source: 'default' });
    expect(maskFilterValues(f[0]!)).toMatchObject({ raw_value: '***', normalized: [{ col: 'region', op: 'IN', val: '***' }] });
  });

  it('follows the rules: unmapped filters with values filter, mapped ones also fill params, valueless ones add nothing', () => {
    const filters = [
      filter({ id: 'unmapped', column: 'region', normalized: [{ col: 'region', op: 'IN', val: ['NA'] }], raw_value: ['NA'] }),
      filter({ id: 'mapped', column: 'product', raw_value: ['widget'] }),
      filter({ id: 'empty', column: 'year' }),
      filter({ id: 'elsewhere', column: 'nope', raw_value: 'x', column_in_dataset: false }),
      filter({ id: 'manual', column: 'units', raw_value: null }),
    ];
    const snap = buildSnapshot(filters, [
      { filter_id: 'mapped', variable: 'product', variable_kind: 'url_param', value: null },
      { filter_id: 'empty', variable: 'year', variable_kind: 'plain', value: null },
      { filter_id: 'elsewhere', variable: 'v', variable_kind: 'plain', value: null },
      { filter_id: 'manual', variable: null, variable_kind: null, value: [5, 6] },
    ]);
    expect(snap.filters).toEqual([
      { col: 'region', op: 'IN', val: ['NA'] },
      { col: 'product', op: 'IN', val: ['widget'] },
      { col: 'units', op: 'IN', val: [5, 6] },
    ]);
    expect(snap.template_params).toEqual({ product: 'widget', v: 'x' });
    expect(snap.trace.find((t) => t.filter_id === 'empty')).toMatchObject({ active: false });
  });

  it('proposes mappings by column for filter_values and by name for url_param', () => {
    const m = proposeMappings(
      [filter({ id: 'a', column: 'Region' }), filter({ id: 'b', name: 'Product', column: 'prod_code' }), filter({ id: 'c', column: 'z' })],
      [
        { name: 'region', kind: 'filter_values' },
        { name: 'product', kind: 'url_param' },
      ],
    );
    expect(m).toEqual([
      { filter_id: 'a', variable: 'region', variable_kind: 'filter_values' },
      { filter_id: 'b', variable: 'product', variable_kind: 'url_param' },
      { filter_id: 'c', variable: null, variable_kind: null },
    ]);
  });
});

describe('candidate ranking', () => {
  const dictionary = {
    id: 'd',
    version: 3,
    entries: [
      { column_name: 'revenue', verbose_name: 'Revenue', description: 'From the dictionary', table_name: null },
      { column_name: 'revenues', verbose_name: 'Revenues', description: 'A near name', table_name: null },
      { column_name: 'revenue', verbose_name: 'Sales revenue', description: 'For the sales table', table_name: 'sales' },
    ],
  };
  const accepted = new Map([['revenue', { description: 'LLM text', suggestion_ids: ['s1'] }]]);
  it('puts a dictionary exact match (table-specific first) above fuzzy, Superset and LLM candidates', () => {
    const c = rankCandidates(
      { kind: 'column', name: 'revenue', superset: { verbose_name: null, description: 'In Superset' } },
      { table: 'sales', dictionary, accepted },
    );
    expect(c.map((x) => x.provenance)).toEqual(['dictionary', 'fuzzy', 'superset', 'llm']);
    expect(c[0]).toMatchObject({ label: 'Sales revenue', source: { dictionary_version: 3 } });
    expect(c[1]).toMatchObject({ label: 'Revenues' });
  });
  it('leaves a field with no candidate unresolved', () => {
    expect(
      rankCandidates(
        { kind: 'metric', name: 'count', superset: { verbose_name: null, description: null } },
        { table: 't', dictionary, accepted },
      ),
    ).toEqual([]);
  });
});

describe('CSV dictionaries', () => {
  it('reads the header row like a workbook and names a bad row', async () => {
    expect(await parseDictionaryCsv(Buffer.from('\uFEFFColumn,Label,Description\nregion,Region,"Sales region, as booked"\n'))).toEqual([
      { column_name: 'region', verbose_name: 'Region', description: 'Sales region, as booked', table_name: null },
    ]);
    await expect(parseDictionaryCsv(Buffer.from('column_name,description\n,orphan description\n'))).rejects.toThrow(/row 2/);
    await expect(parseDictionaryCsv(Buffer.from('a,b\n1,2\n'))).rejects.toThrow(/header row/);
  });
});
