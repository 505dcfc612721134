import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createHarness, type Harness } from '../support/harness.ts';
import { createSqliteDatabase, createUser, userIdOf, type SupersetClient } from '../support/superset/fixtures.ts';
import { buildSource, client, prefixedTables, registerEnvironment, waitTask, type SourceFixture } from './support.ts';

/**
 * What a migration's companions and row-level-security copy may write into a target that already
 * has its own state, through the API against real Superset a (6.1.0, the source) → d (6.1.0,
 * PostgreSQL metadata): an updated report whose recipients change, an owner matched only by full
 * name, a dashboard restricted to a role, an embedded configuration that allows any domain, an
 * alert whose SQL writes, and a same-named rule whose clause changes. Users, reports and rules
 * are created through Superset's own REST API.
 */
const enabled = inject('supersets') !== null;
const P = `w${Date.now().toString(36)}`;

let h: Harness;
let a: SupersetClient;
let d: SupersetClient;
let envA: string;
let envD: string;
let src: SourceFixture;
const viewers = `${P}_viewers`;
const weekly = `${P} weekly rows`;
const writingAlert = `${P} writing alert`;
const tenantRule = `${P} tenant`;
const lastName = `Roe${P}`;

const admin = (m: string, p: string, o: Record<string, unknown> = {}) => h.request(m, p, { ...o, token: h.adminToken });
const get = async <T = any>(s: SupersetClient, p: string): Promise<T> => (await s.request<{ result: T }>('GET', p)).result;
const kind = (o: any, name: string): any => o.companions.find((k: any) => k.kind === name);
const dash = (i: number) => src.dashboards[i]!;

async function migrate(ids: number[], extra: Record<string, unknown> = {}): Promise<any> {
  const r = await admin('POST', '/api/dashboards/migrate', {
    json: { source_env_id: envA, target_env_id: envD, dashboard_ids: ids, ...extra },
  });
  expect(r.status, r.text).toBe(202);
  const task = await waitTask(h, r.body.task_id, 300_000);
  return task.result.items[0];
}

async function createRole(s: SupersetClient, name: string): Promise<number> {
  return (await s.request<{ id: number }>('POST', '/api/v1/security/roles/', { json: { name } })).id;
}

async function reportNamed(s: SupersetClient, name: string): Promise<any | undefined> {
  const rows = await s.request<{ result: any[] }>('GET', '/api/v1/report/', { q: { page_size: 100 } });
  const row = rows.result.find((r) => r.name === name);
  return row ? get(s, `/api/v1/report/${row.id}`) : undefined;
}

async function ruleNamed(s: SupersetClient, name: string): Promise<any | undefined> {
  const rows = await s.request<{ result: any[] }>('GET', '/api/v1/rowlevelsecurity/', { q: { page_size: 100 } });
  return rows.result.find((r) => r.name === name);
}

const targets = (r: any) => r.recipients.map((x: any) => JSON.parse(x.recipient_config_json).target);

beforeAll(async () => {
  if (!enabled) return;
  h = await createHarness({ worker: true });
  [a, d] = await Promise.all([client('a'), client('d')]);
  const dir = path.join(inject('runDir'), P);
  src = await buildSource(a, P, dir, { dashboards: 4 });
  const adminA = await userIdOf(a, 'admin');

  // 0: an owner the target knows only by a same full name, and a chart report.
  const jane = await createUser(a, {
    username: `${P}_jroe`,
    password: 'jane-pw',
    firstName: 'Jane',
    lastName,
    email: `jroe.${P}@dev.local`,
    roles: ['Gamma'],
  });
  await a.request('PUT', `/api/v1/dashboard/${dash(0).id}`, { json: { owners: [adminA, jane.id] } });
  await a.request('POST', '/api/v1/report/', {
    json: {
      type: 'Report',
      name: weekly,
      active: true,
      crontab: '0 9 * * 1',
      timezone: 'UTC',
      chart: dash(0).chartIds[0],
      owners: [adminA],
      creation_method: 'alerts_reports',
      report_format: 'PNG',
      recipients: [{ type: 'Email', recipient_config_json: { target: 'team@example.com' } }],
    },
  });
  // 1: restricted to a role both instances have.
  await a.request('PUT', `/api/v1/dashboard/${dash(1).id}`, { json: { roles: [await createRole(a, viewers)] } });
  // 2: embeddable from any domain.
  await a.request('PUT', `/api/v1/dashboard/${dash(2).id}/embedded`, { json: { allowed_domains: [] } });
  // 3: an alert whose SQL writes.
  await a.request('POST', '/api/v1/report/', {
    json: {
      type: 'Alert',
      name: writingAlert,
      active: true,
      crontab: '*/30 * * * *',
      timezone: 'UTC',
      chart: dash(3).chartIds[1],
      database: src.database.id,
      sql: `DELETE FROM ${P}_sales`,
      validator_type: 'not null',
      validator_config_json: {},
      owners: [adminA],
      creation_method: 'alerts_reports',
      report_format: 'PNG',
      recipients: [{ type: 'Email', recipient_config_json: { target: 'ops@example.com' } }],
    },
  });

  envA = await registerEnvironment(h, 'a', `${P}-a`);
  envD = await registerEnvironment(h, 'd', `${P}-d`);
  const target = await createSqliteDatabase(d, { name: `${P}_warehouse`, path: path.join(dir, `${P}-d.db`), tables: prefixedTables(P) });
  const m = await admin('PUT', `/api/environments/${envA}/db-mappings/${envD}`, {
    json: { mappings: [{ source_database_id: src.database.id, target_database_id: target.id }] },
  });
  expect(m.status, m.text).toBe(200);
  await createRole(d, viewers);
  // Someone in the target who took the source owner's full name, under another username and e-mail.
  await createUser(d, {
    username: `${P}_mallory`,
    password: 'm-pw',
    firstName: 'Jane',
    lastName,
    email: `m.${P}@prod.local`,
    roles: ['Gamma'],
  });
}, 300_000);
afterAll(async () => h?.close());

describe.runIf(enabled)('what companions write into a target that has its own state, a (6.1.0) → d (6.1.0)', () => {
  it('never makes an account an owner by its full name alone: named with map_user', async () => {
    const o = await migrate([dash(0).id]);
    expect(o.status, JSON.stringify(o.error)).toBe('imported');
    expect(kind(o, 'owners').items).toContainEqual(
      expect.objectContaining({ name: `${P}_jroe`, action: 'missing', next_action: expect.objectContaining({ action: 'map_user' }) }),
    );
    expect(o.next_actions.map((n: any) => n.action)).toContain('map_user');
    const there = await get(d, `/api/v1/dashboard/${o.target_dashboard_id}`);
    expect(there.owners.map((x: any) => x.id)).not.toContain(await userIdOf(d, `${P}_mallory`));
  }, 600_000);

  it('pauses an active target report whose recipients or format change, and names it; the dry run says so first', async () => {
    const created = await reportNamed(d, weekly);
    expect(created).toMatchObject({ active: false });
    await d.request('PUT', `/api/v1/report/${created.id}`, { json: { active: true } });
    const source = await reportNamed(a, weekly);
    await a.request('PUT', `/api/v1/report/${source.id}`, {
      json: { report_format: 'CSV', recipients: [{ type: 'Email', recipient_config_json: { target: 'attacker@example.net' } }] },
    });

    const dry = await migrate([dash(0).id], { dry_run: true });
    const planned = kind(dry, 'reports').items.find((i: any) => i.name === weekly);
    expect(planned).toMatchObject({ action: 'update', done: false, next_action: expect.objectContaining({ action: 'turn_on_report' }) });
    expect(planned.fields).toEqual(expect.arrayContaining(['recipients', 'report_format', 'active']));
    expect(await reportNamed(d, weekly)).toMatchObject({ active: true });

    const o = await migrate([dash(0).id]);
    const item = kind(o, 'reports').items.find((i: any) => i.name === weekly);
    expect(item, JSON.stringify(o.companions)).toMatchObject({ action: 'update', done: true });
    expect(item.note).toMatch(/recipients/);
    expect(o.next_actions.map((n: any) => n.action)).toContain('turn_on_report');
    const after = await reportNamed(d, weekly);
    expect(after).toMatchObject({ active: false, report_format: 'CSV' });
    expect(targets(after)).toEqual(['attacker@example.net']);
  }, 600_000);

  it('carries a dashboard restricted to a role the target has by default; stops when the target dashboard has other roles', async () => {
    const o = await migrate([dash(1).id]);
    expect(o.status, JSON.stringify([o.error, o.companions])).toBe('imported');
    expect(kind(o, 'roles')).toMatchObject({ mode: 'strict', items: [expect.objectContaining({ name: viewers, done: true })] });
    const there = await get(d, `/api/v1/dashboard/${o.target_dashboard_id}`);
    expect(there.roles.map((r: any) => r.name)).toEqual([viewers]);

    const other = `${P}_other`;
    const ids = [there.roles[0].id, await createRole(d, other)];
    await d.request('PUT', `/api/v1/dashboard/${o.target_dashboard_id}`, { json: { roles: ids } });
    const again = await migrate([dash(1).id]);
    expect(again).toMatchObject({ status: 'failed', step: 'companions', code: 'companions_mismatch' });
    expect(again.error).toContain(other);
    expect(again.next_actions.map((n: any) => n.action)).toEqual(expect.arrayContaining(['retry_with_companions_copy']));
  }, 600_000);

  it("keeps a target's allowed domains over a source that allows any, unless the request says embedded_any_domain", async () => {
    const first = await migrate([dash(2).id]);
    expect(first.status, JSON.stringify(first.error)).toBe('imported');
    const id = first.target_dashboard_id;
    await d.request('PUT', `/api/v1/dashboard/${id}/embedded`, { json: { allowed_domains: ['https://app.example.com'] } });

    const o = await migrate([dash(2).id]);
    expect(kind(o, 'embedded').items).toEqual([
      expect.objectContaining({ action: 'update', done: false, next_action: expect.objectContaining({ action: 'allow_any_domain' }) }),
    ]);
    expect((await get(d, `/api/v1/dashboard/${id}/embedded`)).allowed_domains).toEqual(['https://app.example.com']);

    const open = await migrate([dash(2).id], { companions: { embedded_any_domain: true } });
    expect(kind(open, 'embedded').items).toEqual([expect.objectContaining({ action: 'update', done: true })]);
    expect((await get(d, `/api/v1/dashboard/${id}/embedded`)).allowed_domains).toEqual([]);
  }, 600_000);

  it("fails an alert whose SQL the read-only decider refuses, with the decider's reason, and writes nothing of it", async () => {
    const o = await migrate([dash(3).id]);
    expect(o).toMatchObject({ status: 'imported_with_errors', step: 'companions' });
    const item = kind(o, 'reports').items.find((i: any) => i.name === writingAlert);
    expect(item).toMatchObject({ done: false, next_action: expect.objectContaining({ action: 'fix_alert_sql' }) });
    expect(item.error).toMatch(/SQL/);
    expect(await reportNamed(d, writingAlert)).toBeUndefined();
  }, 600_000);

  it('never changes a same-named target rule silently under rls copy: named, replaced only with rls_overwrite', async () => {
    const viewersA = (await a.request<{ result: any[] }>('GET', '/api/v1/security/roles/', { q: { page_size: 100 } })).result.find(
      (r) => r.name === viewers,
    ).id;
    const rule = await a.request<{ id: number }>('POST', '/api/v1/rowlevelsecurity/', {
      json: { name: tenantRule, filter_type: 'Regular', clause: "region = 'west'", tables: [src.sales.id], roles: [viewersA] },
    });
    const first = await migrate([dash(0).id], { rls: 'copy' });
    expect(first.status, JSON.stringify(first.error)).toMatch(/imported|unchanged/);
    expect((await ruleNamed(d, tenantRule))?.clause).toBe("region = 'west'");

    // Superset's rule update takes the whole rule (tables and roles left out are emptied).
    await a.request('PUT', `/api/v1/rowlevelsecurity/${rule.id}`, {
      json: { name: tenantRule, filter_type: 'Regular', clause: '1=1', tables: [src.sales.id], roles: [viewersA] },
    });
    const dry = await migrate([dash(0).id], { rls: 'copy', dry_run: true });
    expect(dry.rls.writes).toEqual([expect.objectContaining({ rule: tenantRule, action: 'not_updated', done: false })]);
    const o = await migrate([dash(0).id], { rls: 'copy' });
    expect(o.rls.writes).toEqual([expect.objectContaining({ rule: tenantRule, action: 'not_updated', done: false, fields: ['clause'] })]);
    expect(o.next_actions.map((n: any) => n.action)).toContain('review_rls_rule');
    expect((await ruleNamed(d, tenantRule)).clause).toBe("region = 'west'");

    const replaced = await migrate([dash(0).id], { rls: 'copy', rls_overwrite: true });
    expect(replaced.rls.writes).toEqual([expect.objectContaining({ rule: tenantRule, action: 'update', done: true })]);
    expect((await ruleNamed(d, tenantRule)).clause).toBe('1=1');
  }, 600_000);
});
