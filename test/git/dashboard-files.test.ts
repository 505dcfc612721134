import { strToU8, zipSync } from 'fflate';
import { describe, expect, it } from 'vitest';
import { Bundle } from '../../lib/bundles/bundle.ts';
import { exportFromFiles, filesFromExport } from '../../lib/git/dashboard-files.ts';

const D = '11111111-1111-4111-8111-111111111111';
const C = '22222222-2222-4222-8222-222222222222';

function exportZip(root: string, timestamp: string, chart: string) {
  return zipSync({
    [`${root}/metadata.yaml`]: strToU8(`version: 1.0.0\ntype: Dashboard\ntimestamp: '${timestamp}'\n`),
    [`${root}/dashboards/Sales_12.yaml`]: strToU8(
      `uuid: ${D}\ndashboard_title: Sales\nposition:\n  CHART-1:\n    meta: {uuid: ${C}, chartId: 7}\n`,
    ),
    [`${root}/charts/Revenue_7.yaml`]: strToU8(chart),
  });
}

describe('dashboard files', () => {
  it('an unchanged dashboard gives the same files whatever the export time, root folder or key order', () => {
    const a = filesFromExport(
      exportZip(
        'dashboard_export_20261122T101010',
        '2026-11-22T10:10:10+00:00',
        `slice_name: Revenue\nuuid: ${C}\nparams: {b: 1, a: 2}\nquery_context: '{"z": 1, "a": {"y": 2, "b": 3}}'\n`,
      ),
    );
    const b = filesFromExport(
      exportZip(
        'dashboard_export_20261123T090000',
        '2026-11-23T09:00:00+00:00',
        `uuid: ${C}\nparams: {a: 2, b: 1}\nquery_context: '{"a": {"b": 3, "y": 2}, "z": 1}'\nslice_name: Revenue\n`,
      ),
    );
    expect([...a.files.keys()].sort()).toEqual(['charts/' + C + '.yaml', 'dashboards/' + D + '.yaml', 'metadata.yaml']);
    expect(a.files).toEqual(b.files);
    expect(a.dashboardUuid).toBe(D);
    expect(a.files.get('metadata.yaml')).not.toContain('timestamp');
    expect(a.files.get(`charts/${C}.yaml`)).toBe(
      `params:\n  a: 2\n  b: 1\nquery_context: '{"a":{"b":3,"y":2},"z":1}'\nslice_name: Revenue\nuuid: ${C}\n`,
    );
  });

  it('a changed chart changes one line of one file', () => {
    const a = filesFromExport(exportZip('r', 't', `slice_name: Revenue\nuuid: ${C}\n`));
    const b = filesFromExport(exportZip('r', 't', `slice_name: Revenue by region\nuuid: ${C}\n`));
    const changed = [...a.files.keys()].filter((k) => a.files.get(k) !== b.files.get(k));
    expect(changed).toEqual([`charts/${C}.yaml`]);
  });

  it('the files make a bundle Superset reads again (root folder, metadata with a timestamp)', () => {
    const a = filesFromExport(exportZip('r', 't', `slice_name: Revenue\nuuid: ${C}\n`));
    a.files.set('README.md', '# not part of the bundle\n');
    const bundle = Bundle.fromZip(exportFromFiles(a.files, new Date('2026-01-02T03:04:05Z')));
    expect(bundle.of('dashboards')[0].content.uuid).toBe(D);
    expect(bundle.of('charts')[0].content.slice_name).toBe('Revenue');
    expect(bundle.files.get('metadata.yaml')!.content.timestamp).toBe('2026-01-02T03:04:05.000+00:00');
    expect([...bundle.files.keys()]).not.toContain('README.md');
  });

  it('refuses an object whose uuid could name a path outside the repository', () => {
    expect(() => filesFromExport(exportZip('r', 't', 'slice_name: x\nuuid: ../../../etc/evil\n'))).toThrow(/no valid uuid/);
  });

  it('refuses an export with no dashboard or two', () => {
    expect(() => filesFromExport(zipSync({ 'r/metadata.yaml': strToU8('version: 1.0.0\n') }))).toThrow(/no dashboard/);
  });
});
