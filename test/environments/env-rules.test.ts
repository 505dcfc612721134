// Per-environment rules applied to a bundle (lib/bundles/env-rules.ts) and the SQL rewrite under
// them (lib/sql/qualifiers.ts): schema and catalog renames by each dialect's parser, text and URL
// rules in markdown, chart params and dashboard metadata. No Superset needed.
import { describe, expect, it } from 'vitest';
import { Bundle, type BundleFile } from '../../lib/bundles/bundle.ts';
import { applyEnvRules, textReplacer } from '../../lib/bundles/env-rules.ts';
import { dialectOfUri, renameQualifier } from '../../lib/sql/qualifiers.ts';

describe('schema rename in SQL, PostgreSQL', () => {
  it('renames qualified table and column references, not literals, comments or other schemas', () => {
    const sql = `-- reads analytics_dev
      SELECT o.id, analytics_dev.orders.total, 'analytics_dev.orders' AS label
      FROM analytics_dev.orders o JOIN other.customers c ON c.id = o.customer_id
      WHERE o.id IN (SELECT order_id FROM "analytics_dev".refunds)`;
    const r = renameQualifier('postgresql', sql, 'schema', 'analytics_dev', 'analytics');
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.count).toBe(3);
    expect(r.sql).toContain('FROM analytics.orders');
    expect(r.sql).toContain('analytics.orders.total');
    expect(r.sql).toContain('analytics.refunds');
    expect(r.sql).toContain("'analytics_dev.orders' AS label"); // a literal is data, not a reference
    expect(r.sql).toContain('other.customers');
    expect(r.sql).not.toMatch(/\banalytics_dev\.(orders|refunds)\b(?!')/);
  });

  it('renames a catalog in three-part names only at the catalog level', () => {
    const r = renameQualifier('postgresql', 'select * from dev_cat.sales.orders', 'catalog', 'dev_cat', 'prod_cat');
    expect(r).toMatchObject({ ok: true, count: 1 });
    expect(r.ok && r.sql).toMatch(/prod_cat\.sales\.orders/);
    const schemaOnly = renameQualifier('postgresql', 'select * from dev_cat.orders', 'catalog', 'dev_cat', 'prod_cat');
    expect(schemaOnly).toMatchObject({ ok: true, count: 0, sql: 'select * from dev_cat.orders' }); // a schema, not a catalog
  });

  it('leaves a query that does not name the schema exactly as written', () => {
    const sql = 'select  1 /* keep me */ from analytics.orders';
    expect(renameQualifier('postgresql', sql, 'schema', 'analytics_dev', 'analytics')).toEqual({ ok: true, sql, count: 0 });
  });

  it('reports a statement the parser cannot read (Jinja) instead of replacing text in it', () => {
    const r = renameQualifier(
      'postgresql',
      "select * from analytics_dev.orders where ds = '{{ ds }}' {% if x %}and 1=1{% endif %}",
      'schema',
      'analytics_dev',
      'analytics',
    );
    expect(r.ok).toBe(false);
    expect(!r.ok && r.reason).toMatch(/PostgreSQL's parser cannot read it/);
  });

  it('quotes a target name that needs quoting, by the deparser; a name with a space is no identifier', () => {
    const r = renameQualifier('postgresql', 'select * from analytics_dev.orders', 'schema', 'analytics_dev', 'Analytics-Prod');
    expect(r.ok && r.sql).toContain('"Analytics-Prod".orders');
    expect(renameQualifier('postgresql', 'select * from analytics_dev.orders', 'schema', 'analytics_dev', 'Analytics Prod')).toMatchObject({
      ok: false,
      refused: true,
    });
  });
});

describe('schema rename in SQL, MySQL and SQLite', () => {
  it('MySQL: tables and qualified columns, not literals', () => {
    const r = renameQualifier(
      'mysql',
      "select analytics_dev.orders.id, 'analytics_dev.x' from analytics_dev.orders join other.t on 1 = 1",
      'schema',
      'analytics_dev',
      'analytics',
    );
    expect(r).toMatchObject({ ok: true, count: 2 });
    expect(r.ok && r.sql).toBe(
      "SELECT `analytics`.`orders`.`id`, 'analytics_dev.x' FROM `analytics`.`orders` INNER JOIN `other`.`t` ON 1 = 1",
    );
  });

  it('SQLite: an attached database qualifying a table', () => {
    const r = renameQualifier('sqlite', 'select id from analytics_dev.orders where id > 1', 'schema', 'analytics_dev', 'analytics');
    expect(r).toMatchObject({ ok: true, count: 1 });
    expect(r.ok && r.sql).toMatch(/FROM "?analytics"?\."?orders"?/);
  });

  it('a catalog rule finds nothing in a dialect without catalogs; unreadable SQL is reported', () => {
    expect(renameQualifier('mysql', 'select 1 from a.b', 'catalog', 'a', 'c')).toMatchObject({ ok: true, count: 0 });
    expect(renameQualifier('sqlite', 'select from from', 'schema', 'a', 'b').ok).toBe(false);
  });

  it('knows the dialect from a SQLAlchemy URI', () => {
    expect(dialectOfUri('postgresql+psycopg2://u:XXXXXXXXXX@h:5432/db')).toBe('postgresql');
    expect(dialectOfUri('mysql://u@h/db')).toBe('mysql');
    expect(dialectOfUri('sqlite:////tmp/x.db')).toBe('sqlite');
    expect(dialectOfUri('trino://h:8080/hive')).toBeNull();
    expect(dialectOfUri('not a uri')).toBeNull();
  });
});

describe('URL rules match by origin', () => {
  const r = textReplacer({ from: 'https://superset-dev.example.com', to: 'https://superset.example.com' });
  it('rewrites links on the origin, keeping the path, query and fragment', () => {
    const md =
      'See [the board](https://superset-dev.example.com/superset/dashboard/5/?native_filters=x#top) and https://SUPERSET-DEV.example.com:443/a.';
    expect(r(md)).toEqual({
      count: 2,
      text: 'See [the board](https://superset.example.com/superset/dashboard/5/?native_filters=x#top) and https://superset.example.com/a.',
    });
  });
  it('never a host that merely starts with it, another scheme, or plain text', () => {
    const md = 'https://superset-dev.example.com.evil.io/x http://superset-dev.example.com/y superset-dev.example.com';
    expect(r(md)).toEqual({ text: md, count: 0 });
  });
  it('a path prefix narrows the match', () => {
    const p = textReplacer({ from: 'https://h.example.com/superset/', to: 'https://p.example.com/bi/' });
    expect(p('https://h.example.com/superset/dashboard/1 https://h.example.com/other')).toEqual({
      text: 'https://p.example.com/bi/dashboard/1 https://h.example.com/other',
      count: 1,
    });
  });
});

function bundleOf(files: Array<Omit<BundleFile, 'kind'> & { kind?: BundleFile['kind'] }>): Bundle {
  const map = new Map<string, BundleFile>();
  for (const f of files)
    map.set(f.path, { kind: f.kind ?? (f.path.split('/')[0] as BundleFile['kind']), path: f.path, content: f.content });
  map.set('metadata.yaml', { path: 'metadata.yaml', kind: 'metadata', content: { version: '1.0.0', type: 'Dashboard' } });
  return new Bundle('bundle', map);
}

describe('applyEnvRules', () => {
  const bundle = () =>
    bundleOf([
      { path: 'databases/pg.yaml', content: { uuid: 'db-1', database_name: 'pg', sqlalchemy_uri: 'postgresql://u:XXXXXXXXXX@h/db' } },
      { path: 'databases/tr.yaml', content: { uuid: 'db-2', database_name: 'tr', sqlalchemy_uri: 'trino://h/hive' } },
      {
        path: 'datasets/pg/orders_v.yaml',
        content: {
          uuid: 'ds-1',
          database_uuid: 'db-1',
          table_name: 'orders_v',
          schema: 'analytics_dev',
          sql: 'select * from analytics_dev.orders',
        },
      },
      {
        path: 'datasets/pg/phys.yaml',
        content: { uuid: 'ds-2', database_uuid: 'db-1', table_name: 'phys', schema: 'analytics_dev', sql: null },
      },
      {
        path: 'datasets/tr/t.yaml',
        content: { uuid: 'ds-3', database_uuid: 'db-2', table_name: 't', schema: 'x', sql: 'select * from analytics_dev.t' },
      },
      {
        path: 'dashboards/Sales_1.yaml',
        content: {
          uuid: 'd-1',
          dashboard_title: 'Sales',
          position: {
            'MARKDOWN-a': { type: 'MARKDOWN', meta: { code: 'Open [details](https://superset-dev.example.com/superset/dashboard/7/)' } },
            'HEADER-b': { type: 'HEADER', meta: { text: 'https://superset-dev.example.com' } },
          },
          metadata: { label_colors: {}, refresh_frequency: 0, shared_label_colors: ['https://superset-dev.example.com/x'] },
        },
      },
      {
        path: 'charts/Big_2.yaml',
        content: {
          uuid: 'c-1',
          slice_name: 'Big',
          params: { subheader: 'from https://superset-dev.example.com/y', nested: [{ a: 'DEV' }] },
        },
      },
    ]);

  it('applies each rule and answers per rule with the differences, the unreadable and what matched nothing', () => {
    const b = bundle();
    const effects = applyEnvRules(b, [
      { id: 'r1', kind: 'schema', from: 'analytics_dev', to: 'analytics' },
      { id: 'r2', kind: 'text', from: 'https://superset-dev.example.com', to: 'https://superset.example.com' },
      { id: 'r3', kind: 'catalog', from: 'nope', to: 'x' },
    ]);
    const [schema, url, none] = effects;
    expect(schema!.matched).toBe(3);
    expect(schema!.objects).toEqual([
      { object: 'dataset "orders_v"', file: 'datasets/pg/orders_v.yaml', field: 'schema', before: 'analytics_dev', after: 'analytics' },
      {
        object: 'dataset "orders_v"',
        file: 'datasets/pg/orders_v.yaml',
        field: 'sql',
        before: 'select * from analytics_dev.orders',
        after: expect.stringMatching(/FROM analytics\.orders/),
      },
      { object: 'dataset "phys"', file: 'datasets/pg/phys.yaml', field: 'schema', before: 'analytics_dev', after: 'analytics' },
    ]);
    expect(schema!.unreadable).toEqual([
      expect.objectContaining({ file: 'datasets/tr/t.yaml', field: 'sql', reason: expect.stringMatching(/no SQL parser/) }),
    ]);
    expect(schema!.note).toBeUndefined();
    expect(b.files.get('datasets/pg/orders_v.yaml')!.content.sql).toMatch(/FROM analytics\.orders/);
    expect(b.files.get('datasets/tr/t.yaml')!.content.sql).toBe('select * from analytics_dev.t'); // never replaced blindly

    expect(url!.matched).toBe(3);
    expect(url!.objects.map((o) => `${o.file}:${o.field}`)).toEqual([
      'dashboards/Sales_1.yaml:position.MARKDOWN-a.meta.code',
      'dashboards/Sales_1.yaml:metadata.shared_label_colors.0',
      'charts/Big_2.yaml:params.subheader',
    ]);
    const dash = b.files.get('dashboards/Sales_1.yaml')!.content as { position: Record<string, { meta: Record<string, string> }> };
    expect(dash.position['MARKDOWN-a']!.meta.code).toBe('Open [details](https://superset.example.com/superset/dashboard/7/)');
    expect(dash.position['HEADER-b']!.meta.text).toBe('https://superset-dev.example.com'); // only markdown elements of the layout

    expect(none).toMatchObject({ id: 'r3', matched: 0, objects: [], note: expect.stringMatching(/matched nothing/) });
  });

  it('a literal rule replaces text in chart params; running the rules again changes nothing', () => {
    const b = bundle();
    const rules = [
      { id: 'r1', kind: 'schema' as const, from: 'analytics_dev', to: 'analytics' },
      { id: 'r4', kind: 'text' as const, from: 'DEV', to: 'PROD' },
    ];
    const first = applyEnvRules(b, rules);
    expect(first[1]!.objects).toEqual([
      { object: 'chart "Big"', file: 'charts/Big_2.yaml', field: 'params.nested.0.a', before: 'DEV', after: 'PROD' },
    ]);
    const hash = b.contentHash();
    const again = applyEnvRules(b, rules);
    expect(again.every((e) => e.matched === 0)).toBe(true);
    expect(b.contentHash()).toBe(hash);
  });
});
