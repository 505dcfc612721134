import { strToU8, zipSync } from 'fflate';
import { describe, expect, it } from 'vitest';
import { Bundle, BundleError } from '../../lib/bundles/bundle.ts';
import { parseExportYaml } from '../../lib/bundles/export-yaml.ts';
import { filesFromExport, fromYaml, toYaml } from '../../lib/git/dashboard-files.ts';

/**
 * A YAML merge key (`<<`) is read one way by every reader of a bundle: refused. PyYAML (Superset's
 * import) merges a plain `<<`, js-yaml's core schema reads it as a key, and the `yaml` library
 * under YAML 1.1 merges it (security review F7). A quoted '<<', which is how PyYAML writes a key
 * of that name, is an ordinary key everywhere, and is kept.
 */

const META = 'version: 1.0.0\ntype: Dashboard\ntimestamp: 2026-12-01T00:00:00+00:00\n';
const DASHBOARD = 'dashboard_title: Sales\nuuid: 11111111-1111-4111-8111-111111111111\nposition: {}\nmetadata: {}\n';
/** The review's file: a dataset whose merged fields Superset would apply and Switchyard would not see. */
const MERGING = "table_name: orders\n<<: {sql: 'SELECT secret FROM vault', database_uuid: 'aaaa'}\n";
/** What PyYAML 6.0's safe_dump writes for a params key named '<<' (Superset 6.1's venv): quoted. */
const QUOTED = "params:\n  '<<':\n    a: 1\n  x: '<<'\nsql: SELECT 1 << 2\n";

const zip = (files: Record<string, string>) =>
  zipSync(
    Object.fromEntries(
      Object.entries({ 'metadata.yaml': META, 'dashboards/d.yaml': DASHBOARD, ...files }).map(([p, t]) => [`r/${p}`, strToU8(t)]),
    ),
  );

describe('YAML merge keys', () => {
  it('the bundle reader refuses a plain << key at any depth, naming its line', () => {
    expect(() => parseExportYaml(MERGING)).toThrow(/line 2 holds a YAML merge key \(<<\)/);
    expect(() => parseExportYaml('a:\n  b:\n    - c: 1\n      <<: {d: 2}\n')).toThrow(/line 4 holds a YAML merge key/);
    expect(() => parseExportYaml('base: &b {x: 1}\nother:\n  <<: *b\n')).toThrow(/line 3/);
  });

  it('the git reader refuses it too, instead of merging it', () => {
    expect(() => fromYaml(MERGING)).toThrow(/line 2 holds a YAML merge key/);
  });

  it('a quoted << key, a << value and << in SQL are read alike by both readers, as PyYAML reads them', () => {
    const want = { params: { '<<': { a: 1 }, x: '<<' }, sql: 'SELECT 1 << 2' };
    expect(parseExportYaml(QUOTED)).toEqual(want);
    expect(fromYaml(QUOTED)).toEqual(want);
    expect(fromYaml('"<<": 1\n')).toEqual({ '<<': 1 });
  });

  it('an export or a repository file holding one is an unreadable bundle that names the file', () => {
    const bad = zip({ 'datasets/db/orders.yaml': MERGING });
    for (const read of [() => Bundle.fromZip(bad), () => filesFromExport(bad)]) {
      let err: unknown;
      try {
        read();
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(BundleError);
      expect((err as BundleError).problem).toBe('unreadable');
      expect((err as Error).message).toMatch(/datasets\/db\/orders\.yaml .*line 2 holds a YAML merge key/);
    }
  });

  it('the writers refuse a key named << rather than write it plain, where PyYAML would merge it', () => {
    const bundle = Bundle.fromZip(zip({ 'charts/c.yaml': `slice_name: c\n${QUOTED}` }));
    expect(() => bundle.toZip()).toThrow(/charts\/c\.yaml cannot be written as Superset would read it: params\.<< is a key named '<<'/);
    expect(() => toYaml({ params: { '<<': { sql: 'x' } } })).toThrow(/params\.<< is a key named '<<'/);
    expect(() => Bundle.fromZip(zip({})).toZip()).not.toThrow();
  });
});
