import { describe, expect, it } from 'vitest';
import { planOnRecordedCopy, rulesMayTouch } from '../../domain/migration/recorded-copy.ts';
import { Bundle, type BundleFile } from '../../lib/bundles/bundle.ts';
import { remapDatabases } from '../../lib/bundles/rewrite.ts';
import { idOfNamedFile, secureFilename } from '../../lib/bundles/split.ts';
import type { RlsRule } from '../../lib/superset/types.ts';

/**
 * A rerun's shortcut plans a dashboard against the target's export of its recorded copy instead
 * of the target's lists. These are the cases where it must give no answer (null: the full plan
 * decides) and the shape of the answer it gives; that it is taken against real Superset, and
 * gives the full plan's hash there, is in unchanged.test.ts.
 */
const DB_SRC = '11111111-1111-4111-8111-111111111111';
const DB_DST = '22222222-2222-4222-8222-222222222222';
const DASH = '33333333-3333-4333-8333-333333333333';
const CHART = '44444444-4444-4444-8444-444444444444';
const DATASET = '55555555-5555-4555-8555-555555555555';

function bundleOf(files: Array<[string, Record<string, unknown>]>): Bundle {
  const map = new Map<string, BundleFile>();
  for (const [path, content] of [
    ['metadata.yaml', { version: '1.0.0', type: 'Dashboard' }] as [string, Record<string, unknown>],
    ...files,
  ]) {
    const kind = path === 'metadata.yaml' ? 'metadata' : (path.split('/')[0] as BundleFile['kind']);
    map.set(path, { path, kind, content: structuredClone(content) });
  }
  return new Bundle('export', map);
}

/** A dashboard export as Superset 6.x names it, with ids `ids` and database `db`. */
function exportOf(
  ids: { dashboard: number; chart: number; dataset: number },
  db: { uuid: string; name: string },
  slug: string | null = 'sales',
) {
  return bundleOf([
    [
      `dashboards/Sales_${ids.dashboard}.yaml`,
      { dashboard_title: 'Sales', slug, uuid: DASH, position: { 'CHART-1': { type: 'CHART', meta: { uuid: CHART, chartId: ids.chart } } } },
    ],
    [`charts/Units_by_region_${ids.chart}.yaml`, { slice_name: 'Units by region', uuid: CHART, dataset_uuid: DATASET, params: { x: 1 } }],
    [`datasets/${db.name}/sales_${ids.dataset}.yaml`, { table_name: 'sales', schema: null, uuid: DATASET, database_uuid: db.uuid }],
    [`databases/${db.name}.yaml`, { database_name: db.name, uuid: db.uuid }],
  ]);
}

const source = () => exportOf({ dashboard: 1, chart: 2, dataset: 3 }, { uuid: DB_SRC, name: 'warehouse' });
/** The target's copy: the source's bundle as the migration imported it (database remapped), with the target's ids. */
const copy = (edit?: (b: Bundle) => void) => {
  const b = exportOf({ dashboard: 10, chart: 20, dataset: 30 }, { uuid: DB_DST, name: 'dwh' });
  edit?.(b);
  return b;
};
const sourceDbs = [{ id: 1, uuid: DB_SRC, database_name: 'warehouse', backend: 'sqlite' }];
const targetDbs = [{ id: 7, uuid: DB_DST, database_name: 'dwh', backend: 'sqlite' }];
const request = { sourceEnvId: 'a', targetEnvId: 'b', dashboardId: 1 };
const plan = (over: Partial<Parameters<typeof planOnRecordedCopy>[0]> = {}) =>
  planOnRecordedCopy({ bundle: source(), copy: copy(), copyId: 10, sourceDbs, targetDbs, mappings: new Map([[1, 7]]), request, ...over });

describe("a rerun's plan against the target's recorded copy", () => {
  it("plans every object with the target's ids from the copy's file names, and the remapped bundle the import would send", () => {
    const p = plan()!;
    expect(p).not.toBeNull();
    expect(p.targetDashboardId).toBe(10);
    expect(p.targetHash).toBe(copy().contentHash());
    expect(p.collisions).toEqual([]);
    expect(p.databaseMappings).toEqual([{ source: 'warehouse', target: 'dwh', target_id: 7 }]);
    expect(p.objects.map((o) => [o.kind, o.action, o.target_id])).toEqual([
      ['dashboard', 'unchanged', 10],
      ['chart', 'unchanged', 20],
      ['dataset', 'unchanged', 30],
      ['database', 'reuse', 7],
    ]);
    // The bundle is the source's with its database remapped, as the full plan rewrites it.
    const expected = source();
    remapDatabases(expected, () => ({ id: 7, uuid: DB_DST, database_name: 'dwh' }));
    expect(p.bundle.contentHash()).toBe(expected.contentHash());
    expect(p.datasets).toEqual([
      { sourceUuid: DATASET, sourceDatabaseUuid: DB_SRC, schema: null, table_name: 'sales', targetUuid: DATASET },
    ]);
  });

  it("lists the target's differences per object, as the full plan does", () => {
    const p = plan({ copy: copy((b) => (b.files.get('charts/Units_by_region_20.yaml')!.content.params = { x: 2 })) })!;
    expect(p.objects.find((o) => o.kind === 'chart')).toMatchObject({ action: 'update', target_id: 20 });
  });

  it('gives no answer where only the full plan can tell', () => {
    // An unmapped database: the full plan reports it with its next actions.
    expect(plan({ mappings: new Map() })).toBeNull();
    // The mapped target database is gone.
    expect(plan({ targetDbs: [] })).toBeNull();
    // The copy lost its slug (imported without it after a collision) or holds another.
    expect(plan({ copy: copy((b) => (b.files.get('dashboards/Sales_10.yaml')!.content.slug = null)) })).toBeNull();
    // A chart of the source's dashboard is not in the copy (added in the source since).
    expect(plan({ copy: copy((b) => b.files.delete('charts/Units_by_region_20.yaml')) })).toBeNull();
    // The copy is another dashboard.
    expect(plan({ copy: copy((b) => (b.files.get('dashboards/Sales_10.yaml')!.content.uuid = CHART)) })).toBeNull();
    // A release that names dataset files without the id: no id to report, so no answer.
    expect(
      plan({
        copy: copy((b) => {
          const f = b.files.get('datasets/dwh/sales_30.yaml')!;
          b.files.delete(f.path);
          b.files.set('datasets/dwh/sales.yaml', { ...f, path: 'datasets/dwh/sales.yaml' });
        }),
      }),
    ).toBeNull();
  });

  it('says whether a row-level-security rule of either side names one of the tables', () => {
    const rule = (table: string): RlsRule => ({
      id: 1,
      name: 'r',
      filter_type: 'Regular',
      clause: '1=1',
      group_key: null,
      tables: [{ id: 3, table_name: table }],
      roles: [],
    });
    expect(rulesMayTouch([], ['sales'])).toBe(false);
    expect(rulesMayTouch([rule('orders')], ['sales'])).toBe(false);
    expect(rulesMayTouch([rule('orders'), rule('sales')], ['sales'])).toBe(true);
  });
});

describe("the ids in Superset's export file names", () => {
  it("builds names as Werkzeug's secure_filename does (values printed by Superset 6.1.0's own Werkzeug)", () => {
    const werkzeug: Array<[string, string]> = [
      ['sales', 'sales'],
      ['bench rows 0', 'bench_rows_0'],
      ['Ünïcode täble', 'Unicode_table'],
      ['../etc/passwd', 'etc_passwd'],
      ['  _x_ ', 'x'],
      ['a/b c', 'a_b_c'],
      ['日本', ''],
      ['weird!@#name.v2', 'weirdname.v2'],
    ];
    for (const [name, safe] of werkzeug) expect(secureFilename(name), name).toBe(safe);
  });

  it('reads the id only from a name Superset would give the object', () => {
    expect(idOfNamedFile('datasets/dwh/sales_30.yaml', 'sales')).toBe(30);
    expect(idOfNamedFile('charts/bench_rows_0_12.yaml', 'bench rows 0')).toBe(12);
    expect(idOfNamedFile('charts/12.yaml', '日本')).toBe(12);
    // A table named with a number at its end, exported without an id: not an id.
    expect(idOfNamedFile('datasets/dwh/sales_2024.yaml', 'sales_2024')).toBeNull();
    expect(idOfNamedFile('datasets/dwh/sales.yaml', 'sales')).toBeNull();
    expect(idOfNamedFile('charts/other_12.yaml', 'bench rows 0')).toBeNull();
  });
});
