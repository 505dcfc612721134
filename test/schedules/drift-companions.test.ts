import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createHarness, waitFor, type Harness } from '../support/harness.ts';
import { createUser, userIdOf, type SupersetClient } from '../support/superset/fixtures.ts';
import { createSqliteDatabase } from '../support/superset/fixtures.ts';
import { buildSource, client, prefixedTables, registerEnvironment, waitTask, type SourceFixture } from '../dashboard-migration/support.ts';

/**
 * A drift report names companion drift (issues 31 and 36), against real Superset a (6.1.0) → d
 * (6.1.0, PostgreSQL metadata): a dashboard migrated with a tag and a weekly report, then changed
 * in the source only around the dashboard (a second tag, a second owner, the report's schedule,
 * an embedded configuration), none of which its export carries. The report calls it drifted and
 * names each companion with what differs and the migration that brings it in line; once that
 * migration has run, the dashboard is in sync.
 */
const enabled = inject('supersets') !== null;
const P = `dc${Date.now().toString(36)}`;
let h: Harness;
let a: SupersetClient;
let d: SupersetClient;
let envA: string;
let envD: string;
let src: SourceFixture;
let dash: number;
let reportId: number;
const weekly = `${P} weekly`;
const [firstTag, secondTag] = [`${P}-finance`, `${P}-ops`];

const admin = (m: string, p: string, o: Record<string, unknown> = {}) => h.request(m, p, { ...o, token: h.adminToken });

/** One drift report a → d, run now through a paused schedule; its item for our dashboard. */
async function driftOfDashboard(name: string) {
  const s = await admin('POST', '/api/schedules', {
    json: {
      name: `${P} ${name}`,
      kind: 'drift_report',
      params: { source_env_id: envA, target_env_id: envD },
      cron: '0 3 * * *',
      paused: true,
    },
  });
  expect(s.status, s.text).toBe(201);
  expect((await admin('POST', `/api/schedules/${s.body.id}/trigger`)).status).toBe(202);
  const task = await waitFor(
    async () => {
      const r = await admin('GET', '/api/tasks?task_type=drift_report&page_size=100');
      return (r.body.items as any[]).find((t) => t.params?.schedule_id === s.body.id);
    },
    60_000,
    'the drift report task',
  );
  const report = await waitTask(h, task.id, 400_000);
  await admin('DELETE', `/api/schedules/${s.body.id}`);
  const item = (report.result.items as any[]).find((i) => i.id === dash);
  expect(item, JSON.stringify(report.result.items.map((i: any) => [i.id, i.status, i.error]))).toBeDefined();
  return { report, item };
}

beforeAll(async () => {
  h = await createHarness({ worker: true });
  if (!enabled) return;
  [a, d] = await Promise.all([client('a'), client('d')]);
  const dir = path.join(inject('runDir'), P);
  src = await buildSource(a, P, dir, { dashboards: 1 });
  dash = src.dashboards[0]!.id;
  for (const s of [a, d]) await createUser(s, { username: `${P}ann`, password: 'ann-pw', firstName: 'Ann', lastName: P, roles: ['Gamma'] });
  await a.request('POST', '/api/v1/tag/', { json: { name: firstTag, description: 'money', objects_to_tag: [['dashboard', dash]] } });
  const adminId = await userIdOf(a, 'admin');
  reportId = (
    await a.request<{ id: number }>('POST', '/api/v1/report/', {
      json: {
        type: 'Report',
        name: weekly,
        crontab: '0 9 * * 1',
        dashboard: dash,
        active: true,
        timezone: 'UTC',
        owners: [adminId],
        creation_method: 'alerts_reports',
        report_format: 'PNG',
        log_retention: 90,
        working_timeout: 3600,
        recipients: [{ type: 'Email', recipient_config_json: { target: 'team@example.com' } }],
      },
    })
  ).id;
  envA = await registerEnvironment(h, 'a', `${P}-a`);
  envD = await registerEnvironment(h, 'd', `${P}-d`);
  const targetDb = await createSqliteDatabase(d, { name: `${P}_warehouse`, path: path.join(dir, `${P}-d.db`), tables: prefixedTables(P) });
  const m = await admin('PUT', `/api/environments/${envA}/db-mappings/${envD}`, {
    json: { mappings: [{ source_database_id: src.database.id, target_database_id: targetDb.id }] },
  });
  expect(m.status, m.text).toBe(200);
  const mig = await admin('POST', '/api/dashboards/migrate', {
    json: { source_env_id: envA, target_env_id: envD, dashboard_ids: [dash], overwrite: true },
  });
  expect(mig.status, mig.text).toBe(202);
  const done = await waitTask(h, mig.body.task_id, 300_000);
  expect(done.status, JSON.stringify(done.result)).toBe('SUCCEEDED');
}, 420_000);
afterAll(async () => h?.close());

describe.runIf(enabled)('a drift report names companion drift, a (6.1.0) → d (6.1.0)', () => {
  it('companions changed in the source only: drifted, each named with what differs and the migration that brings it in line; in sync after it', async () => {
    const ann = await userIdOf(a, `${P}ann`);
    await a.request('POST', '/api/v1/tag/', { json: { name: secondTag, description: 'ops', objects_to_tag: [['dashboard', dash]] } });
    await a.request('PUT', `/api/v1/dashboard/${dash}`, { json: { owners: [await userIdOf(a, 'admin'), ann] } });
    await a.request('PUT', `/api/v1/report/${reportId}`, { json: { crontab: '0 7 * * 1' } });
    await a.request('POST', `/api/v1/dashboard/${dash}/embedded`, { json: { allowed_domains: ['https://app.example.com'] } });

    const { report, item } = await driftOfDashboard('after source edits');
    expect(item).toMatchObject({ status: 'drifted', outcome: 'succeeded' });
    const named = (kind: string, name: string) => item.companions.find((c: any) => c.kind === kind && c.name === name);
    expect(named('tags', secondTag)).toMatchObject({ action: 'create', difference: expect.stringContaining('not in the target') });
    expect(named('tags', firstTag)).toBeUndefined(); // carried by the migration, the same on both sides
    expect(named('owners', `${P}ann`)).toMatchObject({ action: 'create' });
    expect(named('reports', weekly)).toMatchObject({ action: 'update', fields: ['crontab'], difference: 'differs in the target: crontab' });
    expect(named('embedded', 'embedded')).toMatchObject({ action: 'create' });
    // Each names the migration that brings it in line, its kinds copied.
    const again = named('reports', weekly).next_action;
    expect(again).toMatchObject({ action: 'migrate_again', request: { method: 'POST', path: '/api/dashboards/migrate' } });
    expect(again.request.body).toMatchObject({ dashboard_ids: [dash], overwrite: true });
    expect(Object.keys(again.request.body.companions).sort()).toEqual(['embedded', 'owners', 'reports', 'tags']);
    expect(item.next_actions).toContainEqual(again);
    expect(item.companions_not_compared).toEqual([]);
    const bulk = report.result.next_actions.find((x: any) => x.action === 'migrate_drifted');
    expect(bulk.request.body.dashboard_ids).toContain(dash);
    expect(bulk.request.body.companions).toMatchObject({ tags: 'copy', owners: 'copy', reports: 'copy', embedded: 'copy' });
    // The report's diagnostics name it too.
    const r = await admin('GET', `/api/reports/${report.id}`);
    expect(r.body.report.diagnostics).toContainEqual(
      expect.objectContaining({
        where: expect.objectContaining({ item_id: dash, step: 'companions', object: 'reports' }),
        message: expect.stringContaining(`drift: reports '${weekly}' update`),
      }),
    );
    // Nothing was written to the target.
    const tagged = await d.request<{ result: Array<{ name: string }> }>('GET', '/api/v1/tag/', {
      q: { page_size: 100, filters: [{ col: 'name', opr: 'ct', value: P }] },
    });
    expect(tagged.result.map((t) => t.name)).not.toContain(secondTag);

    // The named next action, sent as it is, brings the dashboard in line.
    const mig = await admin(again.request.method, again.request.path, { json: again.request.body });
    expect(mig.status, mig.text).toBe(202);
    expect((await waitTask(h, mig.body.task_id, 300_000)).status).toBe('SUCCEEDED');
    const after = await driftOfDashboard('after the migration');
    expect(after.item, JSON.stringify(after.item.companions)).toMatchObject({ status: 'in_sync', differences: [], companions: [] });
  }, 1_200_000);
});
