import { describe, expect, it } from 'vitest';
import { preparedOf, remapOnto } from '../../domain/migration/plan.ts';
import { Bundle, type BundleFile } from '../../lib/bundles/bundle.ts';
import { defaultCatalogOfUri, remapCatalog, type TargetCatalogs } from '../../lib/bundles/catalogs.ts';

/**
 * The catalog decider's cases the real-Superset test (catalog-remap.test.ts, one PostgreSQL
 * database per environment) does not reach: another catalog of a multi-catalog database, kept when
 * the target lists it and reported (with its next action) when not, unless a catalog rule renames it.
 */
const DB_SRC = '11111111-1111-4111-8111-111111111111';
const DB_DST = '22222222-2222-4222-8222-222222222222';

function bundle(catalogs: string[]): Bundle {
  const files: Array<[string, Record<string, unknown>]> = [
    ['dashboards/Sales_1.yaml', { dashboard_title: 'Sales', uuid: 'd0000000-0000-4000-8000-000000000000', position: {} }],
    ['databases/dev.yaml', { database_name: 'dev', uuid: DB_SRC, sqlalchemy_uri: 'postgresql+psycopg2://u:XXXXXXXXXX@db:5432/dev_db' }],
    ...catalogs.map((catalog, i): [string, Record<string, unknown>] => [
      `datasets/dev/t${i}.yaml`,
      { table_name: `t${i}`, schema: 'public', catalog, uuid: `e000000${i}-0000-4000-8000-000000000000`, database_uuid: DB_SRC },
    ]),
  ];
  const map = new Map<string, BundleFile>();
  for (const [path, content] of files) map.set(path, { path, kind: path.split('/')[0] as BundleFile['kind'], content });
  return new Bundle('export', map);
}

function plan(catalogs: string[], target: TargetCatalogs | undefined, envRules: Array<{ kind: 'catalog'; from: string; to: string }> = []) {
  const { prepared } = preparedOf(bundle(catalogs), 1);
  remapOnto(prepared, {
    sourceDbs: [{ id: 1, uuid: DB_SRC, database_name: 'dev' }],
    targetDbs: [{ id: 7, uuid: DB_DST, database_name: 'prod' }],
    mappings: new Map([[1, 7]]),
    request: { sourceEnvId: 'src', targetEnvId: 'dst', dashboardId: 1 },
    catalogs: { known: (id) => (id === 7 ? target : undefined) },
    envRules: envRules.map((r, i) => ({ id: `r${i}`, ...r })),
  });
  return { prepared, catalogOf: (i: number) => prepared.bundle.files.get(`datasets/dev/t${i}.yaml`)!.content.catalog };
}

describe('a dataset catalog when its database is remapped', () => {
  it('reads a PostgreSQL connection default catalog from its URI, and nothing from other engines', () => {
    expect(defaultCatalogOfUri('postgresql+psycopg2://u:XXXXXXXXXX@db:5432/prod%20db')).toBe('prod db');
    expect(defaultCatalogOfUri('postgresql://u@db')).toBeNull();
    expect(defaultCatalogOfUri('sqlite:////tmp/x.db')).toBeUndefined();
    expect(defaultCatalogOfUri('not a uri')).toBeUndefined();
    expect(remapCatalog('dev_db', undefined, { default: 'prod_db' })).toBeNull();
  });

  it('the source default becomes the target default; another catalog the target lists is kept', () => {
    const { prepared, catalogOf } = plan(['dev_db', 'shared'], { default: 'prod_db', names: ['prod_db', 'shared'] });
    expect([catalogOf(0), catalogOf(1)]).toEqual(['prod_db', 'shared']);
    expect(prepared.collisions).toEqual([]);
    expect(prepared.objects[0]!.note).toContain(`catalog 'dev_db' becomes 'prod_db'`);
  });

  it('another catalog the target does not list is kept as exported and reported with add_catalog_rule', () => {
    const { prepared, catalogOf } = plan(['dev_only'], { default: 'prod_db', names: ['prod_db'] });
    expect(catalogOf(0)).toBe('dev_only');
    expect(prepared.collisions).toEqual([expect.objectContaining({ kind: 'catalog', detail: expect.stringContaining(`'dev_only'`) })]);
    expect(prepared.nextActions).toEqual([
      expect.objectContaining({
        action: 'add_catalog_rule',
        request: { method: 'POST', path: '/api/environments/src/rules/dst', body: { kind: 'catalog', from: 'dev_only', to: 'prod_db' } },
      }),
    ]);
    // A catalog rule from it applies after the remap: nothing to report.
    expect(
      plan(['dev_only'], { default: 'prod_db', names: ['prod_db'] }, [{ kind: 'catalog', from: 'dev_only', to: 'x' }]).prepared.collisions,
    ).toEqual([]);
  });

  it('an unknown target (not read, another engine) leaves the catalog as exported', () => {
    expect(plan(['dev_db'], undefined).catalogOf(0)).toBe('dev_db');
  });
});
