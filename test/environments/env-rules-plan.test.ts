// The rerun's shortcut (domain/migration/recorded-copy.ts) plans with the pair's
// per-environment rules as the full plan does: a target copy that holds the rewritten dataset is
// unchanged under the rules, and the bundle it would send is the rewritten one (so its hash is the
// one the last migration recorded). Without them, the same copy looks changed. A release publish
// holds the target's re-export to the artifact with the rules applied.
import { describe, expect, it } from 'vitest';
import { filesUnderRules } from '../../db/clean-release/written.ts';
import { planOnRecordedCopy } from '../../domain/migration/recorded-copy.ts';
import type { ArtifactRow } from '../../db/clean-release/store.ts';
import { portableDigest } from '../../lib/clean-release/digest.ts';
import { filesFromExport } from '../../lib/git/dashboard-files.ts';
import { Bundle, type BundleFile } from '../../lib/bundles/bundle.ts';
import { applyEnvRules } from '../../lib/bundles/env-rules.ts';
import { remapDatabases } from '../../lib/bundles/rewrite.ts';
import { renameQualifier } from '../../lib/sql/qualifiers.ts';

const DB_SRC = '11111111-1111-4111-8111-111111111111';
const DB_DST = '22222222-2222-4222-8222-222222222222';
const DASH = '33333333-3333-4333-8333-333333333333';
const CHART = '44444444-4444-4444-8444-444444444444';
const DATASET = '55555555-5555-4555-8555-555555555555';

function exportOf(
  ids: { dashboard: number; chart: number; dataset: number },
  db: { uuid: string; name: string },
  schema: string,
  link: string,
): Bundle {
  const files: Array<[string, Record<string, unknown>]> = [
    ['metadata.yaml', { version: '1.0.0', type: 'Dashboard' }],
    [
      `dashboards/Sales_${ids.dashboard}.yaml`,
      {
        dashboard_title: 'Sales',
        slug: 'sales',
        uuid: DASH,
        position: {
          'CHART-1': { type: 'CHART', meta: { uuid: CHART, chartId: ids.chart } },
          'MARKDOWN-1': { type: 'MARKDOWN', meta: { code: `[more](${link}/x)` } },
        },
      },
    ],
    [`charts/Revenue_${ids.chart}.yaml`, { slice_name: 'Revenue', uuid: CHART, dataset_uuid: DATASET, params: { subheader: '' } }],
    [
      `datasets/${db.name}/orders_v_${ids.dataset}.yaml`,
      { table_name: 'orders_v', schema, sql: `select id from ${schema}.orders`, uuid: DATASET, database_uuid: db.uuid },
    ],
    [`databases/${db.name}.yaml`, { database_name: db.name, uuid: db.uuid, sqlalchemy_uri: 'postgresql://u:XXXXXXXXXX@h/db' }],
  ];
  const map = new Map<string, BundleFile>();
  for (const [path, content] of files)
    map.set(path, { path, kind: path === 'metadata.yaml' ? 'metadata' : (path.split('/')[0] as BundleFile['kind']), content });
  return new Bundle('export', map);
}

const rules = [
  { id: 'r1', kind: 'schema' as const, from: 'analytics_dev', to: 'analytics' },
  { id: 'r2', kind: 'text' as const, from: 'https://dev.example.com', to: 'https://prod.example.com' },
];
const source = () =>
  exportOf({ dashboard: 1, chart: 2, dataset: 3 }, { uuid: DB_SRC, name: 'dev' }, 'analytics_dev', 'https://dev.example.com');
/** The target's copy as a migration under the rules left it: the rewritten SQL is the deparser's rendering. */
const copy = () => {
  const b = exportOf({ dashboard: 10, chart: 20, dataset: 30 }, { uuid: DB_DST, name: 'prod' }, 'analytics', 'https://prod.example.com');
  const rendered = renameQualifier('postgresql', 'select id from analytics_dev.orders', 'schema', 'analytics_dev', 'analytics');
  b.files.get('datasets/prod/orders_v_30.yaml')!.content.sql = rendered.ok ? rendered.sql : '';
  return b;
};
const plan = (envRules?: typeof rules) =>
  planOnRecordedCopy({
    bundle: source(),
    copy: copy(),
    copyId: 10,
    sourceDbs: [{ id: 1, uuid: DB_SRC, database_name: 'dev', backend: 'postgresql' }],
    targetDbs: [{ id: 7, uuid: DB_DST, database_name: 'prod', backend: 'postgresql' }],
    mappings: new Map([[1, 7]]),
    request: { sourceEnvId: 'a', targetEnvId: 'b', dashboardId: 1 },
    envRules,
  })!;

describe("the rerun's shortcut under per-environment rules", () => {
  it('plans the rewritten bundle: every object unchanged, the hash the full plan records', () => {
    const p = plan(rules);
    expect(p.objects.map((o) => [o.kind, o.action])).toEqual([
      ['dashboard', 'unchanged'],
      ['chart', 'unchanged'],
      ['dataset', 'unchanged'],
      ['database', 'reuse'],
    ]);
    expect(p.envRules.map((e) => e.matched)).toEqual([2, 1]);
    const expected = source();
    remapDatabases(expected, () => ({ id: 7, uuid: DB_DST, database_name: 'prod' }));
    applyEnvRules(expected, rules);
    expect(p.bundle.contentHash()).toBe(expected.contentHash());
  });

  it('without the rules the same copy differs, so a shortcut that skipped them would never say unchanged', () => {
    const p = plan();
    expect(p.objects.find((o) => o.kind === 'dataset')).toMatchObject({ action: 'update' });
    expect(p.objects.find((o) => o.kind === 'dashboard')).toMatchObject({ action: 'update' });
    expect(p.envRules).toEqual([]);
  });
});

describe('a clean-release publish under per-environment rules', () => {
  it("holds the target's re-export to the artifact with the rules applied, not to the artifact as approved", () => {
    const artifactFiles = filesFromExport(source().toZip()).files;
    const artifact = { files: Object.fromEntries(artifactFiles) } as unknown as ArtifactRow;
    const under = filesUnderRules(artifact, rules);
    const dataset = [...under.entries()].find(([p]) => p.startsWith('datasets/'))![1];
    expect(dataset).toContain('FROM analytics.orders');
    expect(dataset).toContain('schema: analytics\n');
    // What the target holds after an import under the rules (here: the source rewritten the same way).
    const imported = source();
    applyEnvRules(imported, rules);
    const back = filesFromExport(imported.toZip()).files;
    expect(portableDigest(under)).toBe(portableDigest(back));
    expect(portableDigest(artifactFiles)).not.toBe(portableDigest(back));
  });
});
