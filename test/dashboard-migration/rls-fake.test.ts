// Why the fake: the row-level-security API answering 500, which a real Superset cannot be made to do.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEnvironment } from '../support/environments.ts';
import { startFakeSuperset, type FakeSuperset } from '../support/fake-superset.ts';
import { createHarness, type Harness } from '../support/harness.ts';

/**
 * Row-level security in migrations between two fake Supersets, for the failures a real one will
 * not produce on demand: the rule API answering 500 on a read or a write. The failure stays with
 * its dashboard (Superset's own message, the step `rls`), and the siblings still run.
 */
let h: Harness;
let source: FakeSuperset;
let target: FakeSuperset;
let sourceEnv: string;
let targetEnv: string;
let mapping: Array<{ source_database_id: number; target_database_id: number }>;
let filtered: number; // a dashboard on a dataset with a rule
let plain: number; // a dashboard on a dataset without rules

const admin = (m: string, p: string, o: Record<string, unknown> = {}) => h.request(m, p, { ...o, token: h.adminToken });

async function migrate(dashboardIds: number[], extra: Record<string, unknown> = {}) {
  const r = await admin('POST', '/api/dashboards/migrate', {
    json: { source_env_id: sourceEnv, target_env_id: targetEnv, dashboard_ids: dashboardIds, db_mappings: mapping, ...extra },
  });
  expect(r.status, r.text).toBe(202);
  return h.waitForTask(r.body.task_id, undefined, 120_000);
}

beforeAll(async () => {
  [h, source, target] = await Promise.all([createHarness({ worker: true }), startFakeSuperset(), startFakeSuperset()]);
  const db = source.addDatabase({ name: 'analytics' });
  const sales = source.addDataset({ table: 'sales', database: db.id });
  const customers = source.addDataset({ table: 'customers', database: db.id });
  const d1 = source.addDashboard({ title: 'Filtered sales', slug: 'filtered-sales' });
  source.addChart({ name: 'Sales rows', dataset: sales.id, dashboards: [d1.id] });
  const d2 = source.addDashboard({ title: 'Customers', slug: 'customers' });
  source.addChart({ name: 'Customer rows', dataset: customers.id, dashboards: [d2.id] });
  [filtered, plain] = [d1.id, d2.id];
  const gamma = source.roles.find((r) => r.name === 'Gamma')!;
  source.rlsRules.push({
    id: 1,
    name: 'west only',
    filter_type: 'Regular',
    clause: "region = 'West'",
    group_key: 'region',
    description: 'analysts see the West',
    tables: [sales.id],
    roles: [gamma.id],
  });
  const warehouse = target.addDatabase({ name: 'warehouse' });
  mapping = [{ source_database_id: db.id, target_database_id: warehouse.id }];
  sourceEnv = await createEnvironment(h, { baseUrl: source.baseUrl, username: source.username, password: source.password });
  targetEnv = await createEnvironment(h, { baseUrl: target.baseUrl, username: target.username, password: target.password });
}, 120_000);
afterAll(async () => {
  await h?.close();
  await Promise.all([source?.close(), target?.close()]);
});

describe('row-level security against a failing rule API', () => {
  it('fails, by default, the dashboard whose rules the target lacks, and migrates its sibling', async () => {
    const task = await migrate([filtered, plain]);
    expect(task.status).toBe('FAILED');
    const [f, p] = task.result.items;
    expect(f).toMatchObject({ id: filtered, status: 'failed', step: 'rls', code: 'rls_mismatch' });
    expect(f.rls.differences).toEqual([expect.objectContaining({ rule: 'west only', difference: 'missing_in_target' })]);
    expect(f.rls.source_rules).toEqual([
      expect.objectContaining({
        name: 'west only',
        roles: ['Gamma'],
        clause: "region = 'West'",
        tables: [expect.objectContaining({ table_name: 'sales' })],
      }),
    ]);
    expect(f.next_actions.map((a: { action: string }) => a.action)).toEqual([
      'retry_with_rls_copy',
      'retry_with_rls_ignore',
      'fix_rls_in_superset',
    ]);
    expect(p).toMatchObject({ id: plain, status: 'imported' });
    expect(target.dashboards.map((d) => d.dashboard_title)).toEqual(['Customers']);
  });

  it("keeps a 500 from the rule API's write with its dashboard (imported, rules not written) while the sibling migrates", async () => {
    target.fail({ method: 'POST', path: '/api/v1/rowlevelsecurity/' }, '500');
    try {
      const task = await migrate([filtered, plain], { rls: 'copy' });
      expect(task.status).toBe('FAILED');
      const [f, p] = task.result.items;
      expect(f).toMatchObject({
        id: filtered,
        status: 'imported_with_errors',
        outcome: 'failed',
        step: 'rls',
        upstream_error: { status: 500, message: 'Fatal error' },
      });
      expect(f.error).toMatch(/imported, but its row-level-security rules were not written/);
      expect(p).toMatchObject({ id: plain, status: 'unchanged', outcome: 'succeeded' }); // migrated by the first test
      expect(target.rlsRules).toEqual([]);
    } finally {
      target.clearFailures();
    }
  });

  it("keeps a 500 from the source's rule list with each dashboard: every one ends with Superset's message, nothing is imported", async () => {
    source.fail({ method: 'GET', path: '/api/v1/rowlevelsecurity/' }, '500');
    const mark = target.mark();
    try {
      const task = await migrate([filtered, plain], { rls: 'copy' });
      expect(task.status).toBe('FAILED');
      expect(task.result.items).toHaveLength(2);
      for (const item of task.result.items) {
        expect(item).toMatchObject({ status: 'failed', step: 'rls', upstream_error: { status: 500, message: 'Fatal error' } });
        expect(item.next_actions.map((a: { action: string }) => a.action)).toContain('read_superset_log');
      }
      expect(target.count('/api/v1/dashboard/import/', mark)).toBe(0);
    } finally {
      source.clearFailures();
    }
  });

  it('copies the rule once the API answers, and a rerun in strict mode is clean', async () => {
    const task = await migrate([filtered, plain], { rls: 'copy' });
    expect(task.status, JSON.stringify(task.result?.items?.map((i: any) => i.error))).toBe('SUCCEEDED');
    expect(task.result.items[0].rls.writes).toEqual([expect.objectContaining({ rule: 'west only', action: 'create', done: true })]);
    const ds = target.datasets.find((d) => d.table_name === 'sales')!;
    expect(target.rlsRules).toEqual([
      expect.objectContaining({
        name: 'west only',
        clause: "region = 'West'",
        description: 'analysts see the West',
        tables: [ds.id],
        roles: [3],
      }),
    ]);
    const again = await migrate([filtered, plain]);
    expect(again.status).toBe('SUCCEEDED');
    expect(again.result.items[0].rls.differences).toEqual([]);
  });

  it('names the fields of a rule that differs, leaves it under copy, replaces it by name with rls_overwrite, and never removes a rule only the target has', async () => {
    source.rlsRules[0].clause = "region = 'East'";
    const ds = target.datasets.find((d) => d.table_name === 'sales')!;
    target.rlsRules.push({
      id: 99,
      name: 'target only',
      filter_type: 'Base',
      clause: '1 = 0',
      group_key: null,
      description: null,
      tables: [ds.id],
      roles: [1],
    });

    const strict = await migrate([filtered]);
    expect(strict.result.items[0]).toMatchObject({ status: 'failed', code: 'rls_mismatch' });
    expect(strict.result.items[0].rls.differences).toEqual([
      expect.objectContaining({ rule: 'west only', difference: 'differs', fields: ['clause'] }),
      expect.objectContaining({ rule: 'target only', difference: 'only_in_target' }),
    ]);
    expect(strict.result.items[0].error).toBe(
      "row-level security on the datasets of 'Filtered sales' differs between source and target: rule 'west only' differs in clause; rule 'target only' exists only in the target",
    );

    // A clause change is not provably narrower: named with its next action, not written.
    const kept = await migrate([filtered], { rls: 'copy' });
    expect(kept.result.items[0].rls.writes).toEqual([
      expect.objectContaining({ rule: 'west only', action: 'not_updated', done: false, fields: ['clause'] }),
    ]);
    expect(kept.result.items[0].next_actions.map((n: any) => n.action)).toContain('review_rls_rule');
    expect(target.rlsRules[0].clause).toBe("region = 'West'");

    const copy = await migrate([filtered], { rls: 'copy', rls_overwrite: true });
    expect(copy.status).toBe('SUCCEEDED');
    expect(copy.result.items[0].rls).toMatchObject({
      writes: [{ rule: 'west only', action: 'update', target_rule_id: target.rlsRules[0].id, done: true }],
      left_in_target: ['target only'],
    });
    expect(target.rlsRules.map((r) => [r.name, r.clause])).toEqual([
      ['west only', "region = 'East'"],
      ['target only', '1 = 0'],
    ]);
  });
});
