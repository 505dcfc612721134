// Why the fake: the row-level-security API answering 500, which a real Superset cannot be made to do.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEnvironment } from '../support/environments.ts';
import { startFakeSuperset, type FakeSuperset } from '../support/fake-superset.ts';
import { createHarness, type Harness } from '../support/harness.ts';

/**
 * Row-level security in backups against a fake Superset, for a rule API that fails: the failure
 * stays with the dashboard whose rules could not be read (a backup never silently drops them),
 * and a dashboard without datasets, which has no rules to read, is backed up all the same.
 */
let h: Harness;
let fake: FakeSuperset;
let env: string;
let withRules: number;
let noDatasets: number;

const admin = (m: string, p: string, o: Record<string, unknown> = {}) => h.request(m, p, { ...o, token: h.adminToken });

async function backup(ids: number[]) {
  const r = await admin('POST', '/api/dashboards/backup', { json: { env_id: env, dashboard_ids: ids } });
  expect(r.status, r.text).toBe(202);
  return h.waitForTask(r.body.task_id, undefined, 120_000);
}

beforeAll(async () => {
  [h, fake] = await Promise.all([createHarness({ worker: true }), startFakeSuperset()]);
  const db = fake.addDatabase({ name: 'analytics' });
  const sales = fake.addDataset({ table: 'sales', database: db.id });
  const d1 = fake.addDashboard({ title: 'Filtered sales', slug: 'filtered-sales' });
  fake.addChart({ name: 'Sales rows', dataset: sales.id, dashboards: [d1.id] });
  withRules = d1.id;
  noDatasets = fake.addDashboard({ title: 'Text only' }).id;
  fake.rlsRules.push({
    id: 1,
    name: 'west only',
    filter_type: 'Regular',
    clause: "region = 'West'",
    group_key: null,
    description: 'kept',
    tables: [sales.id],
    roles: [3],
  });
  env = await createEnvironment(h, { baseUrl: fake.baseUrl, username: fake.username, password: fake.password });
}, 120_000);
afterAll(async () => {
  await h?.close();
  await fake?.close();
});

describe('row-level security in backups against a failing rule API', () => {
  it("fails the dashboard whose rules cannot be read, with Superset's message, and backs up its sibling", async () => {
    fake.fail({ method: 'GET', path: '/api/v1/rowlevelsecurity/' }, '500');
    try {
      const task = await backup([withRules, noDatasets]);
      expect(task.status).toBe('FAILED');
      const [failed, fine] = task.result.items;
      expect(failed).toMatchObject({
        id: withRules,
        status: 'failed',
        step: 'rls',
        backup_id: null,
        upstream_error: { status: 500, message: 'Fatal error' },
      });
      expect(fine).toMatchObject({ id: noDatasets, status: 'succeeded', rls_rules: 0 });
    } finally {
      fake.clearFailures();
    }
  });

  it('keeps the rule once the API answers, and a restore creates it again after it was deleted', async () => {
    const task = await backup([withRules]);
    expect(task.status).toBe('SUCCEEDED');
    expect(task.result.items[0]).toMatchObject({ status: 'succeeded', rls_rules: 1 });
    fake.rlsRules.splice(0);
    const r = await admin('POST', `/api/dashboards/backups/${task.result.items[0].backup_id}/restore`, { json: {} });
    expect(r.status, r.text).toBe(202);
    const restore = await h.waitForTask(r.body.task_id, undefined, 120_000);
    expect(restore.status, JSON.stringify(restore.result?.items)).toBe('SUCCEEDED');
    expect(restore.result.items[0].rls.writes).toEqual([expect.objectContaining({ rule: 'west only', action: 'create', done: true })]);
    expect(fake.rlsRules).toEqual([
      expect.objectContaining({ name: 'west only', clause: "region = 'West'", description: 'kept', tables: [1], roles: [3] }),
    ]);
  });
});
