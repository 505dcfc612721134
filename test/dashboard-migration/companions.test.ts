import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createHarness, type Harness } from '../support/harness.ts';
import {
  createBigNumberChart,
  createDashboard,
  createDataset,
  createSqliteDatabase,
  createTableChart,
  createUser,
  sqlMetric,
  userIdOf,
  type SupersetClient,
} from '../support/superset/fixtures.ts';
import { client, prefixedTables, registerEnvironment, waitTask } from './support.ts';
import { uniquePrefix } from '../support/environments.ts';
import { createBackupStore } from '../../lib/backup-store/index.ts';
import { Bundle } from '../../lib/bundles/bundle.ts';
import { SupersetForbiddenError, SupersetNotFoundError } from '../../lib/superset/errors.ts';
import { COMPANION_KIND_MODULES, companionContext, type Recording, recordingClient, SameIds } from '../../domain/migration/index.ts';

/**
 * Companion assets across migrations, through the API against real Superset: a (6.1.0, the
 * source), c (6.0.0, SQLite metadata) and d (6.1.0, PostgreSQL metadata). A dashboard with a
 * weekly report, an alert on one of its charts, two owners, a role, two tags, an annotation layer
 * one chart draws, a CSS template and a saved query behind its dataset. b runs without the
 * ALERT_REPORTS flag (test-instances.ts).
 */
const enabled = inject('supersets') !== null;
const P = uniquePrefix('k');

let h: Harness;
let a: SupersetClient;
let c: SupersetClient;
let d: SupersetClient;
let b: SupersetClient;
let envA: string;
let envB: string;
let envC: string;
let envD: string;
const dash = {} as Record<'main' | 'ghost', number>;
const charts = {} as Record<'rows' | 'total' | 'ghost', { id: number; uuid: string }>;
const viewers = `${P}_viewers`;
const onlyInA = `${P}_only_in_a`;
const layerName = `${P} launches`;
const templateName = `${P} brand`;
const css = `.${P}-header { color: #123456; }`;
const weekly = `${P} weekly`;
const alert = `${P} units alert`;
const queryLabel = `${P}_sales`;
const tagNames = [`${P}-finance`, `${P}-weekly`];

const admin = (m: string, p: string, o: Record<string, unknown> = {}) => h.request(m, p, { ...o, token: h.adminToken });

async function migrate(target: string, ids: number[], extra: Record<string, unknown> = {}) {
  const r = await admin('POST', '/api/dashboards/migrate', {
    json: { source_env_id: envA, target_env_id: target, dashboard_ids: ids, ...extra },
  });
  expect(r.status, r.text).toBe(202);
  return waitTask(h, r.body.task_id, 300_000);
}

const get = async <T = any>(s: SupersetClient, p: string, q?: unknown): Promise<T> =>
  (await s.request<{ result: T }>('GET', p, q ? { q } : {})).result;
const list = <T = any>(s: SupersetClient, p: string, extra: Record<string, unknown> = {}) => get<T[]>(s, p, { page_size: 100, ...extra });

async function createRole(s: SupersetClient, name: string): Promise<number> {
  return (await s.request<{ id: number }>('POST', '/api/v1/security/roles/', { json: { name } })).id;
}

/** The kind's report in an outcome. */
function kind(o: any, name: string): any {
  return o.companions.find((k: any) => k.kind === name);
}

async function chartOfUuid(s: SupersetClient, dashboardId: number, uuid: string): Promise<any> {
  for (const ch of await get<any[]>(s, `/api/v1/dashboard/${dashboardId}/charts`)) {
    const detail = await get(s, `/api/v1/chart/${ch.id}`);
    if (detail.uuid === uuid) return detail;
  }
  throw new Error(`no chart ${uuid} on dashboard ${dashboardId}`);
}

async function buildSource(dir: string): Promise<void> {
  const db = await createSqliteDatabase(a, { name: `${P}_src`, path: path.join(dir, `${P}-src.db`), tables: prefixedTables(P) });
  const ds = await createDataset(a, { database: db.id, tableName: `${P}_sales` });
  const rows = await createTableChart(a, { name: `${P} rows`, datasetId: ds.id, columns: ['ds', 'region', 'units'] });
  const total = await createBigNumberChart(a, { name: `${P} total`, datasetId: ds.id, metric: sqlMetric('SUM(units)', 'total') });
  const ghostChart = await createTableChart(a, { name: `${P} ghost rows`, datasetId: ds.id, columns: ['ds', 'units'] });
  for (const [k, ch] of [
    ['rows', rows],
    ['total', total],
    ['ghost', ghostChart],
  ] as const)
    charts[k] = { id: ch.id, uuid: (await get(a, `/api/v1/chart/${ch.id}`)).uuid };

  // The annotation layer the rows chart draws, by id inside its params.
  const layer = (
    await a.request<{ id: number }>('POST', '/api/v1/annotation_layer/', { json: { name: layerName, descr: 'product launches' } })
  ).id;
  for (const [short, day] of [
    ['v1 launch', '2024-01-02'],
    ['v2 launch', '2024-03-04'],
  ])
    await a.request('POST', `/api/v1/annotation_layer/${layer}/annotation/`, {
      json: { short_descr: short, start_dttm: `${day}T00:00:00`, end_dttm: `${day}T01:00:00`, long_descr: `${short} day` },
    });
  const params = JSON.parse((await get(a, `/api/v1/chart/${rows.id}`)).params);
  params.annotation_layers = [
    { name: 'launches', sourceType: 'NATIVE', annotationType: 'EVENT', value: layer, show: true, showLabel: true, overrides: {} },
  ];
  await a.request('PUT', `/api/v1/chart/${rows.id}`, { json: { params: JSON.stringify(params) } });

  const ann = await createUser(a, { username: `${P}ann`, password: 'ann-pw', firstName: 'Ann', lastName: 'Analyst', roles: ['Gamma'] });
  const ghost = await createUser(a, { username: `${P}ghost`, password: 'ghost-pw', firstName: 'Gus', lastName: 'Ghost', roles: ['Gamma'] });
  const adminId = await userIdOf(a, 'admin');
  const [viewersA, onlyA] = [await createRole(a, viewers), await createRole(a, onlyInA)];
  await a.request('POST', '/api/v1/css_template/', { json: { template_name: templateName, css } });

  const main = await createDashboard(a, { title: `${P} sales`, slug: `${P}-sales`, charts: [rows, total] });
  await a.request('PUT', `/api/v1/dashboard/${main.id}`, {
    json: { owners: [adminId, ann.id], roles: [viewersA], css, certified_by: 'Data team', certification_details: 'checked weekly' },
  });
  const other = await createDashboard(a, { title: `${P} ghost`, slug: `${P}-ghost`, charts: [ghostChart] });
  await a.request('PUT', `/api/v1/dashboard/${other.id}`, { json: { owners: [adminId, ghost.id], roles: [onlyA] } });
  dash.main = main.id;
  dash.ghost = other.id;

  await a.request('POST', '/api/v1/tag/', {
    json: { name: tagNames[0], description: 'money matters', objects_to_tag: [['dashboard', main.id]] },
  });
  await a.request('POST', '/api/v1/tag/', {
    json: {
      name: tagNames[1],
      description: 'looked at weekly',
      objects_to_tag: [
        ['dashboard', main.id],
        ['chart', rows.id],
      ],
    },
  });

  const recipients = (target: string) => [{ type: 'Email', recipient_config_json: { target } }];
  const common = {
    active: true,
    timezone: 'UTC',
    owners: [adminId, ann.id],
    creation_method: 'alerts_reports',
    report_format: 'PNG',
    log_retention: 90,
    working_timeout: 3600,
  };
  await a.request('POST', '/api/v1/report/', {
    json: { ...common, type: 'Report', name: weekly, crontab: '0 9 * * 1', dashboard: main.id, recipients: recipients('team@example.com') },
  });
  await a.request('POST', '/api/v1/report/', {
    json: {
      ...common,
      type: 'Alert',
      name: alert,
      crontab: '*/30 * * * *',
      chart: total.id,
      database: db.id,
      sql: `SELECT SUM(units) FROM ${P}_sales`,
      validator_type: 'operator',
      validator_config_json: { op: '>', threshold: 1000 },
      grace_period: 3600,
      recipients: recipients('ops@example.com'),
    },
  });
  await a.request('POST', '/api/v1/saved_query/', {
    json: { db_id: db.id, label: queryLabel, sql: `SELECT * FROM ${P}_sales`, schema: '', description: 'behind the sales dataset' },
  });

  envA = await registerEnvironment(h, 'a', `${P}-a`);
  const envs: string[] = [];
  for (const [name, s] of [
    ['c', c],
    ['d', d],
    ['b', b],
  ] as const) {
    const target = await createSqliteDatabase(s, {
      name: `${P}_warehouse`,
      path: path.join(dir, `${P}-${name}.db`),
      tables: prefixedTables(P),
    });
    await createRole(s, viewers);
    // The same person under another e-mail: mapped by username first.
    await createUser(s, {
      username: `${P}ann`,
      password: 'ann-pw',
      firstName: 'Ann',
      lastName: 'Analyst',
      email: `ann.${name}@example.org`,
      roles: ['Gamma'],
    });
    const env = await registerEnvironment(h, name, `${P}-${name}`);
    const r = await admin('PUT', `/api/environments/${envA}/db-mappings/${env}`, {
      json: { mappings: [{ source_database_id: db.id, target_database_id: target.id }] },
    });
    expect(r.status, r.text).toBe(200);
    envs.push(env);
  }
  [envC, envD, envB] = envs;
}

beforeAll(async () => {
  if (!enabled) return;
  h = await createHarness({ worker: true });
  [a, c, d, b] = await Promise.all([client('a'), client('c'), client('d'), client('b')]);
  await buildSource(path.join(inject('runDir'), P));
}, 300_000);
afterAll(async () => h?.close());

const reportsIn = async (s: SupersetClient) => (await list(s, '/api/v1/report/')).filter((r: any) => r.name.startsWith(P));
const layersIn = async (s: SupersetClient) => (await list(s, '/api/v1/annotation_layer/')).filter((r: any) => r.name.startsWith(P));

describe.runIf(enabled)('companions a (6.1.0) → c (6.0.0, SQLite metadata)', () => {
  it('a dry run shows each companion and writes nothing; by default a dashboard whose role the target lacks fails before import', async () => {
    // The main dashboard's role is in the target: under the default strict it is planned to arrive restricted to it.
    const byDefault = await migrate(envC, [dash.main], { dry_run: true });
    const [planned] = byDefault.result.items;
    expect(planned.status, JSON.stringify(planned.error)).toBe('planned');
    expect(kind(planned, 'roles')).toMatchObject({
      mode: 'strict',
      items: [expect.objectContaining({ name: viewers, action: 'create', done: false })],
    });
    // The ghost dashboard's role is not.
    const strict = await migrate(envC, [dash.ghost], { dry_run: true });
    const [o] = strict.result.items;
    expect(o).toMatchObject({ status: 'failed', step: 'companions', code: 'companions_mismatch' });
    expect(kind(o, 'roles')).toMatchObject({
      mode: 'strict',
      items: [expect.objectContaining({ name: onlyInA, action: 'missing', done: false })],
    });
    expect(o.next_actions.map((n: any) => n.action)).toEqual(
      expect.arrayContaining(['retry_with_companions_copy', 'retry_with_companions_ignore', 'create_role']),
    );
    expect(o.next_actions.find((n: any) => n.action === 'retry_with_companions_copy').request.body).toMatchObject({
      companions: { roles: 'copy' },
    });

    const dry = await migrate(envC, [dash.main], { dry_run: true, companions: { roles: 'copy' } });
    const [p] = dry.result.items;
    expect(p.status).toBe('planned');
    expect(kind(p, 'reports').items.map((i: any) => [i.name, i.action, i.done])).toEqual(
      expect.arrayContaining([
        [weekly, 'create', false],
        [alert, 'create', false],
      ]),
    );
    expect(kind(p, 'tags').items).toEqual(
      expect.arrayContaining(tagNames.map((name) => expect.objectContaining({ name, action: 'create' }))),
    );
    expect(kind(p, 'annotation_layers').items).toContainEqual(expect.objectContaining({ name: layerName, action: 'create' }));
    expect(kind(p, 'css_templates').items).toEqual([expect.objectContaining({ name: templateName, action: 'create' })]);
    expect(kind(p, 'saved_queries').items).toEqual([expect.objectContaining({ name: queryLabel, action: 'create' })]);
    expect(kind(p, 'owners').items).toContainEqual(expect.objectContaining({ name: `${P}ann`, action: 'create' }));
    expect(await reportsIn(c)).toEqual([]);
    expect(await layersIn(c)).toEqual([]);
  }, 600_000);

  it('copies every companion with the dashboard, ids remapped to the target, reports paused; a rerun changes nothing', async () => {
    const task = await migrate(envC, [dash.main], { companions: { roles: 'copy' } });
    expect(task.status, JSON.stringify(task.result?.items?.map((i: any) => [i.error, i.companions]))).toBe('SUCCEEDED');
    const [o] = task.result.items;
    expect(o.status).toBe('imported');
    const target = o.target_dashboard_id;

    const there = await get(c, `/api/v1/dashboard/${target}`);
    const annC = await userIdOf(c, `${P}ann`);
    expect(there.owners.map((x: any) => x.id)).toEqual(expect.arrayContaining([annC, await userIdOf(c, 'admin')]));
    expect(there.roles.map((x: any) => x.name)).toEqual([viewers]);
    expect(there.tags.map((x: any) => x.name).sort()).toEqual(expect.arrayContaining(tagNames));
    expect(there).toMatchObject({ certified_by: 'Data team', certification_details: 'checked weekly', css });

    const reports = await reportsIn(c);
    expect(reports.map((r: any) => r.name).sort()).toEqual([alert, weekly].sort());
    const report = await get(c, `/api/v1/report/${reports.find((r: any) => r.name === weekly).id}`);
    expect(report).toMatchObject({ type: 'Report', active: false, crontab: '0 9 * * 1', dashboard: { id: target } });
    expect(report.recipients.map((x: any) => JSON.parse(x.recipient_config_json).target)).toEqual(['team@example.com']);
    expect(report.owners.map((x: any) => x.id)).toContain(annC);
    const totalC = await chartOfUuid(c, target, charts.total.uuid);
    const warehouse = (await list(c, '/api/v1/database/')).find((x: any) => x.database_name === `${P}_warehouse`);
    const alertC = await get(c, `/api/v1/report/${reports.find((r: any) => r.name === alert).id}`);
    expect(alertC).toMatchObject({
      type: 'Alert',
      active: false,
      chart: { id: totalC.id },
      database: { id: warehouse.id },
      validator_type: 'operator',
    });

    const [layer] = await layersIn(c);
    expect(layer).toMatchObject({ name: layerName, descr: 'product launches' });
    const annotations = await list(c, `/api/v1/annotation_layer/${layer.id}/annotation/`);
    expect(annotations.map((x: any) => x.short_descr).sort()).toEqual(['v1 launch', 'v2 launch']);
    const rowsC = await chartOfUuid(c, target, charts.rows.uuid);
    expect(JSON.parse(rowsC.params).annotation_layers).toEqual([expect.objectContaining({ sourceType: 'NATIVE', value: layer.id })]);
    expect(rowsC.tags.map((x: any) => x.name)).toContain(tagNames[1]);

    expect((await list(c, '/api/v1/css_template/')).filter((t: any) => t.template_name === templateName)).toEqual([
      expect.objectContaining({ css }),
    ]);
    expect((await list(c, '/api/v1/saved_query/')).filter((q: any) => q.label === queryLabel)).toEqual([
      expect.objectContaining({ sql: `SELECT * FROM ${P}_sales`, db_id: warehouse.id }),
    ]);

    const again = await migrate(envC, [dash.main], { companions: { roles: 'copy' } });
    expect(again.status).toBe('SUCCEEDED');
    const [r] = again.result.items;
    expect(r.status).toBe('unchanged');
    const acted = r.companions.flatMap((k: any) =>
      k.items.filter((i: any) => !['unchanged', 'only_in_target'].includes(i.action)).map((i: any) => [k.kind, i.name, i.action]),
    );
    expect(acted).toEqual([]);
    expect((await reportsIn(c)).length).toBe(2);
    expect((await layersIn(c)).length).toBe(1);
  }, 600_000);

  it('reports an owner or a role the target lacks with the next action under copy, and fails the dashboard under strict', async () => {
    const strict = await migrate(envC, [dash.ghost], { companions: { owners: 'strict', roles: 'copy' } });
    const [s] = strict.result.items;
    expect(s).toMatchObject({ status: 'failed', step: 'companions', code: 'companions_mismatch' });
    expect(kind(s, 'owners').items).toContainEqual(
      expect.objectContaining({ name: `${P}ghost`, action: 'missing', next_action: expect.objectContaining({ action: 'create_user' }) }),
    );
    expect(s.next_actions.map((n: any) => n.action)).toContain('create_user');

    const task = await migrate(envC, [dash.ghost], { companions: { roles: 'copy' } });
    const [o] = task.result.items;
    expect(o.status, JSON.stringify(o.error)).toBe('imported');
    expect(kind(o, 'owners').items).toContainEqual(expect.objectContaining({ name: `${P}ghost`, action: 'missing' }));
    expect(kind(o, 'roles').items).toEqual([
      expect.objectContaining({ name: onlyInA, action: 'missing', next_action: expect.objectContaining({ action: 'create_role' }) }),
    ]);
    expect(o.next_actions.map((n: any) => n.action)).toEqual(expect.arrayContaining(['create_user', 'create_role']));
    const there = await get(c, `/api/v1/dashboard/${o.target_dashboard_id}`);
    expect(there.roles).toEqual([]);
  }, 600_000);
});

describe.runIf(enabled)('companions a (6.1.0) → d (6.1.0, PostgreSQL metadata)', () => {
  it('records ignored kinds without writing them, then copies them', async () => {
    const ignored = await migrate(envD, [dash.main], { companions: { roles: 'ignore', reports: 'ignore', annotation_layers: 'ignore' } });
    expect(ignored.status, JSON.stringify(ignored.result?.items?.map((i: any) => i.error))).toBe('SUCCEEDED');
    const [o] = ignored.result.items;
    expect(kind(o, 'reports')).toMatchObject({ mode: 'ignore', ignored_by_request: true });
    expect(kind(o, 'roles')).toMatchObject({ mode: 'ignore', ignored_by_request: true });
    // The task's report says so, per kind, as it does for row-level security.
    const report = (await admin('GET', `/api/reports/${ignored.id}`)).body.report;
    expect(report.diagnostics).toContainEqual(
      expect.objectContaining({
        severity: 'warning',
        where: expect.objectContaining({ step: 'companions', object: 'reports' }),
        message: expect.stringContaining('chose to ignore'),
      }),
    );
    expect(await reportsIn(d)).toEqual([]);
    expect(await layersIn(d)).toEqual([]);
    expect((await get(d, `/api/v1/dashboard/${o.target_dashboard_id}`)).roles).toEqual([]);

    const copied = await migrate(envD, [dash.main], { companions: { roles: 'copy' } });
    expect(copied.status, JSON.stringify(copied.result?.items?.map((i: any) => [i.error, i.companions]))).toBe('SUCCEEDED');
    const target = copied.result.items[0].target_dashboard_id;
    expect((await reportsIn(d)).map((r: any) => r.name).sort()).toEqual([alert, weekly].sort());
    const [layer] = await layersIn(d);
    const rowsD = await chartOfUuid(d, target, charts.rows.uuid);
    expect(JSON.parse(rowsD.params).annotation_layers[0].value).toBe(layer.id);
    expect((await get(d, `/api/v1/dashboard/${target}`)).roles.map((x: any) => x.name)).toEqual([viewers]);
  }, 600_000);
});

describe.runIf(enabled)('companions a (6.1.0) → b (6.1.0 without ALERT_REPORTS)', () => {
  it('reports alerts and reports as unavailable in the target, and migrates the dashboard with the rest', async () => {
    const task = await migrate(envB, [dash.main], { companions: { roles: 'copy' } });
    expect(task.status, JSON.stringify(task.result?.items?.map((i: any) => [i.error, i.companions]))).toBe('SUCCEEDED');
    const [o] = task.result.items;
    expect(o.status).toBe('imported');
    expect(kind(o, 'reports')).toMatchObject({ mode: 'copy', available: false, items: [] });
    expect(kind(o, 'reports').unavailable).toContain('ALERT_REPORTS');
    expect(kind(o, 'annotation_layers')).toMatchObject({
      available: true,
      items: expect.arrayContaining([expect.objectContaining({ name: layerName, done: true })]),
    });
    expect(await b.request('GET', '/api/v1/report/').catch((e: any) => e.upstreamStatus ?? e.status)).toBe(404);
  }, 600_000);
});

describe.runIf(enabled)('companions in backups of a', () => {
  let backupId: string;
  let restoreTask: string;

  it('keeps the companions beside the bundle as documents (format 2), and a restore puts back what was deleted in Superset since', async () => {
    const r = await admin('POST', '/api/dashboards/backup', { json: { env_id: envA, dashboard_ids: [dash.main] } });
    expect(r.status, r.text).toBe(202);
    const backup = await waitTask(h, r.body.task_id, 300_000);
    expect(backup.status, JSON.stringify(backup.result?.items)).toBe('SUCCEEDED');
    const item = backup.result.items[0];
    expect(item.companions).toBeGreaterThan(0);
    backupId = item.backup_id;

    // The stored bundle holds one document per companion, as a repository does, and no recording keyed by client methods.
    const stored = await storedBundle(backupId);
    expect(stored.files.has('companions.yaml')).toBe(false);
    expect(stored.files.get('companions/kinds.yaml')?.content).toMatchObject({
      version: 2,
      kinds: { reports: 'captured', owners: 'captured' },
    });
    for (const doc of [
      `reports/${weekly}`,
      `reports/${alert}`,
      `owners/${P}ann`,
      `tags/${tagNames[0]}`,
      `roles/${viewers}`,
      `saved_queries/${queryLabel}`,
    ])
      expect(stored.files.has(`companions/${doc}.yaml`), doc).toBe(true);
    expect(JSON.stringify([...stored.files.values()].map((f) => f.content))).not.toMatch(/"recording"|\w+\.\w+\(\[/);

    await deleteSome();
    const restore = await restoreOf(backupId);
    restoreTask = restore.taskId;
    const [o] = restore.result.items;
    expect(kind(o, 'reports').items).toContainEqual(expect.objectContaining({ name: weekly, action: 'create', done: true }));
    expect(kind(o, 'saved_queries').items).toContainEqual(expect.objectContaining({ name: queryLabel, action: 'create', done: true }));
    await expectPutBack();
  }, 600_000);

  it('still restores a backup made before (format 1: companions.yaml, a recording of the client calls)', async () => {
    // The backup above as the release before format 2 stored it: its documents replaced by the recording, as it wrote it.
    const bundle = await storedBundle(backupId);
    for (const p of [...bundle.files.keys()]) if (p.startsWith('companions/')) bundle.files.delete(p);
    const title = `${P} sales`;
    bundle.files.set('companions.yaml', {
      path: 'companions.yaml',
      kind: 'other',
      content: await formatOneCompanions(a, dash.main, bundle, title),
    });
    const dashboardFile = bundle.of('dashboards')[0]!;
    // A backup row of its own (a task of this file's that backed nothing up), its blob in the store the worker reads.
    const { row } = await h.boot.context.stores.backups.record(createBackupStore(h.config), {
      taskId: restoreTask,
      envId: envA,
      dashboardId: dash.main,
      dashboardUuid: String(dashboardFile.content.uuid),
      title,
      slug: null,
      contentHash: bundle.contentHash(),
      chartCount: 2,
      bytes: bundle.toZip(),
    });

    await deleteSome();
    const restore = await restoreOf(row.id);
    const [o] = restore.result.items;
    expect(kind(o, 'reports').items).toContainEqual(expect.objectContaining({ name: weekly, action: 'create', done: true }));
    await expectPutBack();
  }, 600_000);

  it('fails a restore whose documents name a dashboard role the environment no longer has, before importing anything', async () => {
    // Last in this file: the role is gone from a for good.
    const role = (await a.roles.all()).find((r) => r.name === viewers)!;
    await a.request('DELETE', `/api/v1/security/roles/${role.id}`);
    const rr = await admin('POST', `/api/dashboards/backups/${backupId}/restore`, { json: {} });
    expect(rr.status, rr.text).toBe(202);
    const restore = await waitTask(h, rr.body.task_id, 300_000);
    expect(restore.status).toBe('FAILED');
    const [o] = restore.result.items;
    expect(o).toMatchObject({ status: 'failed', step: 'check', code: 'companion_role_missing' });
    expect(o.error).toContain(`'${viewers}'`);
    expect(o.next_actions.map((n: any) => n.action)).toEqual(['create_role']);
  }, 600_000);
});

/** The stored zip of a backup, as the restore reads it. */
async function storedBundle(backupId: string): Promise<Bundle> {
  const row = await h.boot.context.stores.backups.get(backupId);
  return Bundle.fromZip(await createBackupStore(h.config).get(row!.content_hash));
}

/** Deleted in Superset since the backup: the weekly report, an owner, a tag, the saved query behind the dataset. */
async function deleteSome(): Promise<void> {
  const weeklyA = (await reportsIn(a)).find((x: any) => x.name === weekly);
  await a.request('DELETE', `/api/v1/report/${weeklyA.id}`);
  await a.request('PUT', `/api/v1/dashboard/${dash.main}`, { json: { owners: [await userIdOf(a, 'admin')] } });
  await a.request('DELETE', `/api/v1/tag/3/${dash.main}/${tagNames[0]}/`);
  const query = (await list(a, '/api/v1/saved_query/')).find((q: any) => q.label === queryLabel);
  await a.request('DELETE', `/api/v1/saved_query/${query.id}`);
  expect((await reportsIn(a)).map((x: any) => x.name)).toEqual([alert]);
}

async function restoreOf(backupId: string) {
  const rr = await admin('POST', `/api/dashboards/backups/${backupId}/restore`, { json: {} });
  expect(rr.status, rr.text).toBe(202);
  const restore = await waitTask(h, rr.body.task_id, 300_000);
  expect(restore.status, JSON.stringify(restore.result?.items)).toBe('SUCCEEDED');
  return { ...restore, taskId: rr.body.task_id as string };
}

async function expectPutBack(): Promise<void> {
  const back = await get(a, `/api/v1/report/${(await reportsIn(a)).find((x: any) => x.name === weekly).id}`);
  // Put back as it was in its own environment: active, on the same dashboard.
  expect(back).toMatchObject({ active: true, crontab: '0 9 * * 1', dashboard: { id: dash.main } });
  const there = await get(a, `/api/v1/dashboard/${dash.main}`);
  expect(there.owners.map((x: any) => x.id)).toContain(await userIdOf(a, `${P}ann`));
  expect(there.tags.map((x: any) => x.name)).toEqual(expect.arrayContaining(tagNames));
  expect((await list(a, '/api/v1/saved_query/')).map((q: any) => q.label)).toContain(queryLabel);
}

/** `companions.yaml` as a backup wrote it before format 2 (activities/backups/companions.ts, attachCompanions, until format 2). */
async function formatOneCompanions(
  s: SupersetClient,
  dashboardId: number,
  bundle: Bundle,
  title: string,
): Promise<Record<string, unknown>> {
  const recording: Recording = {};
  const ctx = companionContext({
    source: recordingClient(s, recording),
    target: s,
    sourceDashboardId: dashboardId,
    dashboardUuid: String(bundle.of('dashboards')[0]?.content.uuid ?? ''),
    title,
    datasetUuids: new Map(),
    mappings: new SameIds(),
    pauseReports: false,
    activity: {},
  });
  for (const k of COMPANION_KIND_MODULES) {
    try {
      await k.run(ctx, false);
    } catch (err) {
      if (!(err instanceof SupersetNotFoundError || err instanceof SupersetForbiddenError)) throw err;
    }
  }
  return { version: 1, dashboard_id: dashboardId, recording };
}
