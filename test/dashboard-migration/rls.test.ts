import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createHarness, type Harness } from '../support/harness.ts';
import {
  createDashboard,
  createDataset,
  createSqliteDatabase,
  createTableChart,
  listAll,
  type SupersetClient,
} from '../support/superset/fixtures.ts';
import { client, prefixedTables, registerEnvironment, waitTask } from './support.ts';
import { uniquePrefix } from '../support/environments.ts';

/**
 * Row-level security across migrations and backups, through the API against real Superset 6.1.0
 * instances: a (source), b (target on SQLite metadata) and d (target on PostgreSQL metadata).
 * Superset keeps its rules beside datasets and no export carries them.
 */
const enabled = inject('supersets') !== null;
const P = uniquePrefix('r');

let h: Harness;
let a: SupersetClient;
let b: SupersetClient;
let d: SupersetClient;
let envA: string;
let envB: string;
let envD: string;
/** D1: a dashboard on a dataset with a rule whose role every instance has; D2: no rules; D3: a rule naming a role only `a` has. */
const dash = {} as Record<'filtered' | 'plain' | 'foreignRole', number>;
const datasetA = {} as Record<'sales' | 'customers' | 'orders', number>;
let westRuleA: number;
const analyst = `${P}_analyst`;
const onlyInA = `${P}_only_in_a`;
const westRule = `${P} west only`;
const ordersRule = `${P} no orders`;

const admin = (m: string, p: string, o: Record<string, unknown> = {}) => h.request(m, p, { ...o, token: h.adminToken });

async function migrate(target: string, ids: number[], extra: Record<string, unknown> = {}) {
  const r = await admin('POST', '/api/dashboards/migrate', {
    json: { source_env_id: envA, target_env_id: target, dashboard_ids: ids, ...extra },
  });
  expect(r.status, r.text).toBe(202);
  return waitTask(h, r.body.task_id, 180_000);
}

interface RuleRow {
  id: number;
  name: string;
  filter_type: string;
  clause: string;
  group_key: string | null;
  tables: Array<{ id: number; table_name: string }>;
  roles: Array<{ id: number; name: string }>;
}

/** The instance's rules as its own API lists them. */
async function rulesIn(c: SupersetClient): Promise<RuleRow[]> {
  const body = await c.request<{ result: RuleRow[] }>('GET', '/api/v1/rowlevelsecurity/', { q: { page: 0, page_size: 100 } });
  return body.result.filter((r) => r.name.startsWith(P));
}

async function createRole(c: SupersetClient, name: string): Promise<number> {
  return (await c.request<{ id: number }>('POST', '/api/v1/security/roles/', { json: { name } })).id;
}

async function roleId(c: SupersetClient, name: string): Promise<number> {
  const body = await c.request<{ result: Array<{ id: number; name: string }> }>('GET', '/api/v1/security/roles/', {
    q: { page_size: 100 },
  });
  return body.result.find((r) => r.name === name)!.id;
}

async function datasetIdIn(c: SupersetClient, table: string): Promise<number | undefined> {
  const all = await listAll<{ id: number; table_name: string }>(c, 'dataset', { columns: ['id', 'table_name'] } as never);
  return all.find((x) => x.table_name === table)?.id;
}

async function dashboardIn(c: SupersetClient, title: string): Promise<boolean> {
  const all = await listAll<{ id: number; dashboard_title: string }>(c, 'dashboard', { columns: ['id', 'dashboard_title'] } as never);
  return all.some((x) => x.dashboard_title === title);
}

function tables() {
  const [sales, customers] = prefixedTables(P);
  return [sales, customers, { ...sales, name: `${P}_orders` }];
}

beforeAll(async () => {
  if (!enabled) return;
  h = await createHarness({ worker: true });
  [a, b, d] = await Promise.all([client('a'), client('b'), client('d')]);
  const dir = path.join(inject('runDir'), P);
  const src = await createSqliteDatabase(a, { name: `${P}_src`, path: path.join(dir, `${P}-src.db`), tables: tables() });
  for (const [key, table, columns] of [
    ['sales', `${P}_sales`, ['ds', 'region', 'units']],
    ['customers', `${P}_customers`, ['id', 'name', 'region']],
    ['orders', `${P}_orders`, ['ds', 'region', 'units']],
  ] as const) {
    const ds = await createDataset(a, { database: src.id, tableName: table });
    datasetA[key] = ds.id;
    const chart = await createTableChart(a, { name: `${P} ${key} rows`, datasetId: ds.id, columns: [...columns] });
    const title = `${P} ${key}`;
    const created = await createDashboard(a, { title, slug: `${P}-${key}`, charts: [chart] });
    dash[key === 'sales' ? 'filtered' : key === 'customers' ? 'plain' : 'foreignRole'] = created.id;
  }
  const analystA = await createRole(a, analyst);
  const onlyA = await createRole(a, onlyInA);
  westRuleA = (
    await a.request<{ id: number }>('POST', '/api/v1/rowlevelsecurity/', {
      json: {
        name: westRule,
        filter_type: 'Regular',
        clause: "region = 'NA'",
        group_key: 'region',
        description: 'analysts see North America only',
        tables: [datasetA.sales],
        roles: [analystA],
      },
    })
  ).id;
  await a.request('POST', '/api/v1/rowlevelsecurity/', {
    json: { name: ordersRule, filter_type: 'Base', clause: '1 = 0', tables: [datasetA.orders], roles: [onlyA] },
  });

  envA = await registerEnvironment(h, 'a', `${P}-a`);
  const envs: string[] = [];
  for (const [name, c] of [
    ['b', b],
    ['d', d],
  ] as const) {
    const db = await createSqliteDatabase(c, { name: `${P}_warehouse`, path: path.join(dir, `${P}-${name}.db`), tables: tables() });
    await createRole(c, analyst);
    const env = await registerEnvironment(h, name, `${P}-${name}`);
    const r = await admin('PUT', `/api/environments/${envA}/db-mappings/${env}`, {
      json: { mappings: [{ source_database_id: src.id, target_database_id: db.id }] },
    });
    expect(r.status, r.text).toBe(200);
    envs.push(env);
  }
  [envB, envD] = envs;
}, 300_000);
afterAll(async () => h?.close());

describe.runIf(enabled)('row-level security in migrations a (6.1.0) → b (6.1.0, SQLite metadata)', () => {
  it('a dry run reports the difference per dashboard and writes nothing', async () => {
    const task = await migrate(envB, [dash.filtered, dash.plain], { dry_run: true });
    const [filtered, plain] = task.result.items;
    expect(filtered).toMatchObject({ status: 'failed', step: 'rls', code: 'rls_mismatch' });
    expect(filtered.rls.differences).toEqual([
      expect.objectContaining({
        rule: westRule,
        difference: 'missing_in_target',
        source: expect.objectContaining({ clause: "region = 'NA'", group_key: 'region', roles: [analyst], filter_type: 'Regular' }),
      }),
    ]);
    expect(plain).toMatchObject({ status: 'planned' });
    expect(plain.rls).toMatchObject({ mode: 'strict', source_rules: [], differences: [] });
    expect(await rulesIn(b)).toEqual([]);
    expect(await dashboardIn(b, `${P} customers`)).toBe(false);
  });

  it('fails, by default, the dashboard whose rules the target lacks, with the rules on each side, while a sibling without rules migrates', async () => {
    const task = await migrate(envB, [dash.filtered, dash.plain]);
    expect(task.status).toBe('FAILED');
    const [filtered, plain] = task.result.items;
    expect(filtered).toMatchObject({ status: 'failed', outcome: 'failed', step: 'rls', code: 'rls_mismatch' });
    expect(filtered.error).toContain(`rule '${westRule}' is missing in the target`);
    expect(filtered.rls.source_rules).toEqual([
      expect.objectContaining({ name: westRule, tables: [expect.objectContaining({ table_name: `${P}_sales` })] }),
    ]);
    expect(filtered.rls.target_rules).toEqual([]);
    expect(filtered.next_actions.map((n: any) => n.action)).toEqual([
      'retry_with_rls_copy',
      'retry_with_rls_ignore',
      'fix_rls_in_superset',
    ]);
    expect(filtered.next_actions[0].request.body).toMatchObject({ dashboard_ids: [dash.filtered], rls: 'copy' });
    expect(await dashboardIn(b, `${P} sales`)).toBe(false);
    expect(plain).toMatchObject({ status: 'imported', outcome: 'succeeded' });
    expect(await rulesIn(b)).toEqual([]);
  });

  it('copies the rules with rls "copy" (a dry run first writes nothing); a role missing in the target fails its dashboard before import; a rerun is clean', async () => {
    const dry = await migrate(envB, [dash.filtered], { dry_run: true, rls: 'copy' });
    expect(dry.result.items[0]).toMatchObject({
      status: 'planned',
      rls: { mode: 'copy', writes: [{ rule: westRule, action: 'create', done: false }] },
    });
    expect(await rulesIn(b)).toEqual([]);

    const task = await migrate(envB, [dash.filtered, dash.foreignRole], { rls: 'copy' });
    const [filtered, foreign] = task.result.items;
    expect(filtered).toMatchObject({
      status: 'imported',
      rls: { mode: 'copy', writes: [expect.objectContaining({ rule: westRule, action: 'create', done: true })] },
    });
    expect(foreign).toMatchObject({ status: 'failed', step: 'rls', code: 'rls_role_missing', rls: { missing_roles: [onlyInA] } });
    expect(foreign.next_actions.map((n: any) => n.action)).toEqual(['create_role', 'retry_with_rls_ignore']);
    expect(await dashboardIn(b, `${P} orders`)).toBe(false);

    const [rule] = await rulesIn(b);
    expect(rule).toMatchObject({ name: westRule, filter_type: 'Regular', clause: "region = 'NA'", group_key: 'region' });
    expect(rule.tables.map((t) => t.id)).toEqual([await datasetIdIn(b, `${P}_sales`)]);
    expect(rule.roles).toEqual([{ id: await roleId(b, analyst), name: analyst }]);
    const detail = await b.request<{ result: { description: string } }>('GET', `/api/v1/rowlevelsecurity/${rule.id}`);
    expect(detail.result.description).toBe('analysts see North America only');

    const again = await migrate(envB, [dash.filtered]);
    expect(again.status).toBe('SUCCEEDED');
    expect(again.result.items[0].rls).toMatchObject({
      mode: 'strict',
      differences: [],
      target_rules: [expect.objectContaining({ name: westRule })],
    });
    expect(await rulesIn(b)).toHaveLength(1);
  });

  it('imports despite a difference with rls "ignore", and records that the requester chose to', async () => {
    const task = await migrate(envB, [dash.foreignRole], { rls: 'ignore' });
    expect(task.status).toBe('SUCCEEDED');
    expect(task.result.items[0]).toMatchObject({
      status: 'imported',
      rls: {
        mode: 'ignore',
        ignored_by_request: true,
        differences: [expect.objectContaining({ rule: ordersRule, difference: 'missing_in_target' })],
      },
    });
    const report = (await admin('GET', `/api/reports/${task.id}`)).body.report;
    expect(report.diagnostics).toContainEqual(
      expect.objectContaining({
        severity: 'warning',
        where: expect.objectContaining({ step: 'rls' }),
        message: expect.stringContaining('chose to ignore'),
      }),
    );
    expect((await rulesIn(b)).map((r) => r.name)).toEqual([westRule]);
  });
});

describe.runIf(enabled)('row-level security a (6.1.0) → d (6.1.0, PostgreSQL metadata)', () => {
  it('copies the rules onto the imported datasets', async () => {
    const task = await migrate(envD, [dash.filtered], { rls: 'copy' });
    expect(task.status, JSON.stringify(task.result?.items?.map((i: any) => i.error))).toBe('SUCCEEDED');
    const [rule] = await rulesIn(d);
    expect(rule).toMatchObject({ name: westRule, clause: "region = 'NA'", group_key: 'region' });
    expect(rule.tables.map((t) => t.id)).toEqual([await datasetIdIn(d, `${P}_sales`)]);
    expect(rule.roles.map((r) => r.name)).toEqual([analyst]);
    const again = await migrate(envD, [dash.filtered]);
    expect(again.status).toBe('SUCCEEDED');
  });
});

describe.runIf(enabled)('row-level security in backups of a', () => {
  it('keeps the rules on the backed-up datasets, and a restore puts a deleted rule back', async () => {
    const r = await admin('POST', '/api/dashboards/backup', { json: { env_id: envA, dashboard_ids: [dash.filtered] } });
    expect(r.status, r.text).toBe(202);
    const backup = await waitTask(h, r.body.task_id);
    expect(backup.status).toBe('SUCCEEDED');
    const item = backup.result.items[0];
    expect(item).toMatchObject({ status: 'succeeded', rls_rules: 1 });

    await a.request('DELETE', `/api/v1/rowlevelsecurity/${westRuleA}`);
    expect((await rulesIn(a)).map((x) => x.name)).toEqual([ordersRule]);

    const rr = await admin('POST', `/api/dashboards/backups/${item.backup_id}/restore`, { json: {} });
    expect(rr.status, rr.text).toBe(202);
    const restore = await waitTask(h, rr.body.task_id);
    expect(restore.status, JSON.stringify(restore.result?.items)).toBe('SUCCEEDED');
    expect(restore.result.items[0].rls).toMatchObject({
      rules: 1,
      writes: [expect.objectContaining({ rule: westRule, action: 'create' })],
    });
    const back = (await rulesIn(a)).find((x) => x.name === westRule)!;
    expect(back).toMatchObject({ filter_type: 'Regular', clause: "region = 'NA'", group_key: 'region' });
    expect(back.tables.map((t) => t.id)).toEqual([datasetA.sales]);
    expect(back.roles.map((x) => x.name)).toEqual([analyst]);

    // A same-named rule whose clause changed since is never changed by a restore (not provably narrower): named, left as it is.
    await a.request('PUT', `/api/v1/rowlevelsecurity/${back.id}`, {
      json: {
        name: westRule,
        filter_type: 'Regular',
        clause: "region = 'EU'",
        group_key: 'region',
        tables: [datasetA.sales],
        roles: [await roleId(a, analyst)],
      },
    });
    const rr2 = await admin('POST', `/api/dashboards/backups/${item.backup_id}/restore`, { json: {} });
    const again = await waitTask(h, rr2.body.task_id);
    expect(again.status, JSON.stringify(again.result?.items)).toBe('SUCCEEDED');
    expect(again.result.items[0].rls.writes).toEqual([
      expect.objectContaining({ rule: westRule, action: 'not_updated', done: false, fields: ['clause'] }),
    ]);
    expect(again.result.items[0].next_actions.map((n: any) => n.action)).toContain('review_rls_rule');
    expect((await rulesIn(a)).find((x) => x.name === westRule)!.clause).toBe("region = 'EU'");
  });

  it('fails a restore whose rules name a role the environment no longer has, before importing anything', async () => {
    const r = await admin('POST', '/api/dashboards/backup', { json: { env_id: envA, dashboard_ids: [dash.filtered] } });
    const backup = await waitTask(h, r.body.task_id);
    const item = backup.result.items[0];
    expect(item.rls_rules).toBe(1);
    const rule = (await rulesIn(a)).find((x) => x.name === westRule)!;
    await a.request('DELETE', `/api/v1/rowlevelsecurity/${rule.id}`);
    await a.request('DELETE', `/api/v1/security/roles/${await roleId(a, analyst)}`);

    const rr = await admin('POST', `/api/dashboards/backups/${item.backup_id}/restore`, { json: {} });
    const restore = await waitTask(h, rr.body.task_id);
    expect(restore.status).toBe('FAILED');
    expect(restore.result.items[0]).toMatchObject({ status: 'failed', step: 'check', code: 'rls_role_missing' });
    expect(restore.result.items[0].error).toContain(`'${analyst}'`);
    expect(restore.result.items[0].next_actions.map((n: any) => n.action)).toEqual(['create_role']);
    expect((await rulesIn(a)).map((x) => x.name)).toEqual([ordersRule]);
  });
});
