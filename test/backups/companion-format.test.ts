import { describe, expect, it } from 'vitest';
import { ALL, C, D, DB, meta, S } from '../support/companion-recordings.ts';
import { COMPANIONS_FORMAT, keepDocuments, takeCompanions } from '../../activities/backups/companions.ts';
import { COMPANIONS_V1_FILE, replayV1 } from '../../activities/backups/companions-v1.ts';
import { Bundle, type BundleFile } from '../../lib/bundles/bundle.ts';
import { companionDocs } from '../../domain/migration/companions/documents.ts';
import { REPLAYED_DASHBOARD_ID, replayOf } from '../../domain/migration/companions/documents-replay.ts';
import { recordingKey, replayClient, type Recording } from '../../domain/migration/companions/recording.ts';

/**
 * A backup's companions as stored, without Superset: format 2 keeps the documents a repository
 * holds (domain/migration/companions/documents.ts) under `companions/` in the bundle, through the
 * stored zip and back, and a restore takes them out of what Superset imports and replays them;
 * format 1 (`companions.yaml`, a recording keyed by client methods) is still read by its own
 * reader; documents of a format this release does not know are refused, not dropped. The real
 * round trip (a backup, a deletion, a restore; a format-1 backup restored) is
 * test/dashboard-migration/companions.test.ts.
 */

/** What the kinds read of the environment (its own ids): a dashboard with a role, an owner, a tag and a weekly report. */
function recording(): Recording {
  const r: Recording = {};
  const put = (resource: string, method: string, args: unknown[], answer: unknown) =>
    (r[recordingKey(resource, method, args)] = { answer });
  const ann = { id: 17, username: 'ann', display_name: 'Ann A', first_name: 'Ann', last_name: 'A', email: 'ann@a.example', active: true };
  put(
    'meta',
    'get',
    ['dashboard', 12],
    meta({ id: 12, uuid: D, name: 'Sales', owners: [ann], roles: [{ id: 5, name: 'viewers' }], tags: ['finance'] }),
  );
  put('dashboards', 'charts', [12], [{ id: 70 }]);
  put('dashboards', 'datasets', [12], [{ id: 90 }]);
  put('meta', 'get', ['chart', 70], meta({ id: 70, uuid: C, name: 'Rows' }));
  put('meta', 'get', ['dataset', 90], meta({ id: 90, uuid: S, name: 'sales', database_id: 3, table_name: 'sales' }));
  put('users', 'all', [], { accounts: [ann], usernames: true });
  put('tags', 'list', [], [{ id: 1, name: 'finance', description: 'money' }]);
  put('reports', 'get', [41], {
    id: 41,
    name: 'weekly',
    type: 'Report',
    active: true,
    crontab: '0 9 * * 1',
    dashboard_id: 12,
    chart_id: null,
    database_id: null,
    recipients: [{ type: 'Email', recipient_config_json: { target: 'ops@example.com' } }],
    owners: [{ id: 17 }],
  });
  return r;
}

/** The export as Superset gives it: metadata, the dashboard, its chart and dataset. */
function exported(): Bundle {
  const files: BundleFile[] = [
    { path: 'metadata.yaml', kind: 'metadata', content: { version: '1.0.0', type: 'Dashboard' } },
    { path: 'dashboards/Sales_12.yaml', kind: 'dashboards', content: { uuid: D, dashboard_title: 'Sales', css: '' } },
    { path: 'charts/Rows_70.yaml', kind: 'charts', content: { uuid: C, slice_name: 'Rows', params: {} } },
    { path: 'datasets/sales_90.yaml', kind: 'datasets', content: { uuid: S, table_name: 'sales', database_uuid: DB } },
  ];
  return new Bundle('dashboard_export', new Map(files.map((f) => [f.path, f])));
}

const documents = () =>
  companionDocs({ recording: recording(), dashboardId: 12, kinds: ALL, names: new Map(), databases: new Map([[3, DB]]) });
const SUPERSET_FILES = ['charts/Rows_70.yaml', 'dashboards/Sales_12.yaml', 'datasets/sales_90.yaml', 'metadata.yaml'];

describe('companions in a backup', () => {
  it('are kept as format 2 documents in the stored zip, none keyed by a client method, and a restore replays them', async () => {
    const made = exported();
    keepDocuments(made, documents());
    const stored = Bundle.fromZip(made.toZip());
    const paths = [...stored.files.keys()].filter((p) => p.startsWith('companions/')).sort();
    expect(paths).toEqual([
      'companions/kinds.yaml',
      'companions/owners/ann.yaml',
      'companions/reports/weekly.yaml',
      'companions/roles/viewers.yaml',
      'companions/tags/finance.yaml',
    ]);
    expect(stored.files.get('companions/kinds.yaml')!.content).toMatchObject({ version: COMPANIONS_FORMAT, kinds: ALL });
    expect(stored.files.has(COMPANIONS_V1_FILE)).toBe(false);
    expect(JSON.stringify([...stored.files.values()].map((f) => f.content))).not.toMatch(/recording|\w+\.\w+\(\[/);

    const kept = takeCompanions(stored);
    expect([...stored.files.keys()].sort()).toEqual(SUPERSET_FILES); // what Superset imports: its own files alone
    if (!kept || !('format' in kept) || kept.format !== 2) throw new Error(`expected format 2, got ${JSON.stringify(kept)}`);
    const replay = replayOf(kept.files, [{ id: 7, uuid: DB }])!;
    const source = replayClient(replay.recording);
    const dashboard = await source.meta.get('dashboard', REPLAYED_DASHBOARD_ID);
    expect(dashboard).toMatchObject({ uuid: D, roles: [{ name: 'viewers' }], tags: ['finance'] });
    const [row] = await source.reports.list();
    expect(await source.reports.get(row!.id)).toMatchObject({ name: 'weekly', active: true, dashboard_id: REPLAYED_DASHBOARD_ID });
    const [dataset] = await source.dashboards.datasets(REPLAYED_DASHBOARD_ID);
    expect((await source.meta.get('dataset', dataset!.id)).database_id).toBe(7); // numbered as the environment numbers it
  });

  it('made before (format 1: companions.yaml, a recording) are read by the old format reader', async () => {
    const stored = exported();
    const content = { version: 1, dashboard_id: 12, recording: recording() };
    stored.files.set(COMPANIONS_V1_FILE, { path: COMPANIONS_V1_FILE, kind: 'other', content });
    const kept = takeCompanions(Bundle.fromZip(stored.toZip()));
    if (!kept || !('format' in kept) || kept.format !== 1) throw new Error(`expected format 1, got ${JSON.stringify(kept)}`);
    const { source, dashboardId } = replayV1(kept.v1);
    expect(dashboardId).toBe(12);
    expect((await source.meta.get('dashboard', 12)).roles).toEqual([{ id: 5, name: 'viewers' }]);

    const bad = exported();
    bad.files.set(COMPANIONS_V1_FILE, { path: COMPANIONS_V1_FILE, kind: 'other', content: { version: 1 } });
    expect(takeCompanions(bad)).toBeNull(); // unreadable as format 1: as before, restored without companions
    expect(bad.files.has(COMPANIONS_V1_FILE)).toBe(false);
    expect(takeCompanions(exported())).toBeNull(); // a backup made before companions were kept
  });

  it('of a format this release does not read are refused, and still kept out of what Superset imports', () => {
    for (const version of [3, undefined]) {
      const stored = exported();
      keepDocuments(stored, documents());
      if (version === undefined) delete stored.files.get('companions/kinds.yaml')!.content.version;
      else stored.files.get('companions/kinds.yaml')!.content.version = version;
      const kept = takeCompanions(stored);
      expect(kept).toMatchObject({ unreadable: expect.stringContaining(`format ${version ?? 'null'}`) });
      expect([...stored.files.keys()].sort()).toEqual(SUPERSET_FILES);
    }
  });
});
