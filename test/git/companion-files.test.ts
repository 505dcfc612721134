import { describe, expect, it } from 'vitest';
import { ALL, C, D, DB, meta, S } from '../support/companion-recordings.ts';
import { companionDocs } from '../../domain/migration/companions/documents.ts';
import { REPLAYED_DASHBOARD_ID, replayOf } from '../../domain/migration/companions/documents-replay.ts';
import { recordingKey, replayClient, type Recording } from '../../domain/migration/companions/recording.ts';
import { fileNameOf, toYaml } from '../../lib/git/dashboard-files.ts';

/**
 * The companion files without Superset: what a sync's recording becomes (one YAML each, no
 * environment ids, the same bytes whatever order Superset answered in) and what a deploy replays
 * from them (ids consistent across the answers, databases numbered as the deploy's mappings name
 * them). The real round trip a → files → d is test/git/companions.test.ts.
 */
const ann = {
  id: 17,
  username: 'ann',
  display_name: 'Ann Analyst',
  first_name: 'Ann',
  last_name: 'Analyst',
  email: 'ann@a.example',
  active: true,
};
const bob = {
  id: 23,
  username: 'bob',
  display_name: 'Bob Builder',
  first_name: 'Bob',
  last_name: 'Builder',
  email: 'bob@a.example',
  active: true,
};

/** What the kinds read of environment a (ids are a's own), with the lists in the order given. */
function recordingOf(order: 'asc' | 'desc'): Recording {
  const r: Recording = {};
  const put = (resource: string, method: string, args: unknown[], answer: unknown) =>
    (r[recordingKey(resource, method, args)] = { answer });
  const flip = <T>(xs: T[]) => (order === 'asc' ? xs : [...xs].reverse());
  put(
    'meta',
    'get',
    ['dashboard', 12],
    meta({
      id: 12,
      uuid: D,
      name: 'Sales',
      owners: flip([ann, bob]),
      roles: [{ id: 5, name: 'viewers' }],
      tags: ['finance'],
      theme_id: null,
    }),
  );
  put('dashboards', 'charts', [12], [{ id: 70 }]);
  put('dashboards', 'datasets', [12], [{ id: 90 }]);
  put(
    'meta',
    'get',
    ['chart', 70],
    meta({ id: 70, uuid: C, name: 'Rows', tags: ['finance'], params: '{"annotation_layers":[{"sourceType":"NATIVE","value":8}]}' }),
  );
  put('meta', 'get', ['dataset', 90], meta({ id: 90, uuid: S, name: 'sales', database_id: 3, table_name: 'sales' }));
  put('users', 'all', [], { accounts: flip([ann, bob]), usernames: true });
  put(
    'tags',
    'list',
    [],
    flip([
      { id: 1, name: 'finance', description: 'money' },
      { id: 2, name: 'other', description: null },
    ]),
  );
  put('reports', 'get', [41], {
    id: 41,
    name: 'units alert',
    type: 'Alert',
    active: true,
    crontab: '*/30 * * * *',
    timezone: 'UTC',
    description: null,
    creation_method: 'alerts_reports',
    dashboard_id: null,
    chart_id: 70,
    database_id: 3,
    sql: 'SELECT 1',
    validator_type: 'operator',
    validator_config_json: { op: '>', threshold: 10 },
    grace_period: 3600,
    log_retention: 90,
    working_timeout: 3600,
    report_format: 'PNG',
    force_screenshot: false,
    custom_width: null,
    extra: {},
    email_subject: null,
    recipients: flip([
      { type: 'Email', recipient_config_json: { target: 'ops@example.com' } },
      { type: 'Slack', recipient_config_json: { target: '#ops' } },
    ]),
    owners: flip([{ id: 17 }, { id: 23 }]),
  });
  put('annotationLayers', 'list', [], [{ id: 8, name: 'launches', descr: 'product launches' }]);
  put(
    'annotationLayers',
    'annotations',
    [8],
    flip([
      { id: 100, short_descr: 'v1', long_descr: null, start_dttm: '2024-01-02T00:00:00', end_dttm: null, json_metadata: null },
      { id: 101, short_descr: 'v2', long_descr: null, start_dttm: '2024-03-04T00:00:00', end_dttm: null, json_metadata: null },
    ]),
  );
  put(
    'savedQueries',
    'list',
    [],
    [{ id: 6, label: 'sales', description: null, db_id: 3, schema: 'main', catalog: null, sql: 'SELECT * FROM sales' }],
  );
  return r;
}

const docsOf = (order: 'asc' | 'desc') =>
  companionDocs({
    recording: recordingOf(order),
    dashboardId: 12,
    kinds: ALL,
    names: new Map([['saved_queries', new Set(['sales'])]]),
    databases: new Map([[3, DB]]),
  });

describe('companion files', () => {
  it('one YAML per companion, the same bytes whatever order Superset answered in, no id of the environment', () => {
    const files = docsOf('asc');
    expect(docsOf('desc')).toEqual(files);
    expect(Object.keys(files).sort()).toEqual([
      'companions/annotation_layers/launches.yaml',
      'companions/kinds.yaml',
      'companions/owners/ann.yaml',
      'companions/owners/bob.yaml',
      'companions/reports/units alert.yaml',
      'companions/roles/viewers.yaml',
      'companions/saved_queries/sales.yaml',
      'companions/tags/finance.yaml',
    ]);
    const alert = files['companions/reports/units alert.yaml']!;
    expect(alert).toContain(`chart: ${C}`);
    expect(alert).toContain(`database: ${DB}`);
    expect(alert).toContain('dashboard: false');
    expect(alert).not.toMatch(/^\s*(- )?(id|chart_id|database_id|dashboard_id): /m);
    expect(files['companions/owners/ann.yaml']).toBe(
      toYaml({
        account: { username: 'ann', email: 'ann@a.example', first_name: 'Ann', last_name: 'Analyst', display_name: 'Ann Analyst' },
        dashboard: true,
        charts: [],
        datasets: [],
      }),
    );
    expect(files['companions/saved_queries/sales.yaml']).toContain(`database: ${DB}`);
    // The one id kept: the chart files' params name the layer by it.
    expect(files['companions/annotation_layers/launches.yaml']).toContain('id_in_chart_params: 8');
  });

  it('a deploy replays them with ids of its own, consistent across answers; databases as its mappings number them', async () => {
    const bundle = new Map([
      ['metadata.yaml', 'version: 1.0.0\n'],
      [`dashboards/${D}.yaml`, toYaml({ uuid: D, dashboard_title: 'Sales', css: '' })],
      [`charts/${C}.yaml`, toYaml({ uuid: C, slice_name: 'Rows', params: { annotation_layers: [{ sourceType: 'NATIVE', value: 8 }] } })],
      [`datasets/${S}.yaml`, toYaml({ uuid: S, table_name: 'sales', database_uuid: DB })],
      ...Object.entries(docsOf('asc')),
    ]);
    const replay = replayOf(bundle, [{ id: 2, uuid: DB }])!;
    const source = replayClient(replay.recording);
    const dashboard = await source.meta.get('dashboard', REPLAYED_DASHBOARD_ID);
    expect(dashboard.roles.map((r) => r.name)).toEqual(['viewers']);
    const [chartRef] = await source.dashboards.charts(REPLAYED_DASHBOARD_ID);
    const chart = await source.meta.get('chart', chartRef!.id);
    expect(chart).toMatchObject({ uuid: C, tags: ['finance'] });
    const [row] = await source.reports.list();
    const alert = await source.reports.get(row!.id);
    expect(alert).toMatchObject({ chart_id: chart.id, database_id: 2, dashboard_id: null, sql: 'SELECT 1' });
    const { accounts } = await source.users.all();
    expect(alert.owners.map((o) => accounts.find((a) => a.id === o.id)?.username).sort()).toEqual(['ann', 'bob']);
    expect((await source.savedQueries.list())[0]).toMatchObject({ label: 'sales', db_id: 2 });
    expect((await source.annotationLayers.annotations(8)).map((a) => a.short_descr)).toEqual(['v1', 'v2']);
  });

  it('a commit without companion files replays nothing; a name that is no plain file name gets a digest', () => {
    expect(replayOf(new Map([[`dashboards/${D}.yaml`, toYaml({ uuid: D })]]), [])).toBeNull();
    expect(fileNameOf('weekly sales')).toBe('weekly sales');
    expect(fileNameOf('a/b')).toMatch(/^a_b-[0-9a-f]{8}$/);
    expect(fileNameOf('a/b')).not.toBe(fileNameOf('a:b'));
    expect(fileNameOf('..')).toMatch(/^unnamed-[0-9a-f]{8}$/);
  });
});
