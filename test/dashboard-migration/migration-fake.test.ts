// Why the fake: an import answering 500 for one dashboard and an export failing until the retries run out.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEnvironment } from '../support/environments.ts';
import { startFakeSuperset, type FakeSuperset } from '../support/fake-superset.ts';
import { createHarness, type Harness } from '../support/harness.ts';

/**
 * Migrations between two fake Supersets, for failures a real one will not produce on demand: one
 * dashboard's import answering 500, and an export that keeps failing until the retries run out.
 * Whatever happens to one dashboard, every dashboard ends with an outcome in the task's result.
 */
let h: Harness;
let source: FakeSuperset;
let target: FakeSuperset;
let sourceEnv: string;
let targetEnv: string;
let mapping: Array<{ source_database_id: number; target_database_id: number }>;
const ids: number[] = [];

const admin = (m: string, p: string, o: Record<string, unknown> = {}) => h.request(m, p, { ...o, token: h.adminToken });

async function migrate(dashboardIds: number[]) {
  const r = await admin('POST', '/api/dashboards/migrate', {
    json: { source_env_id: sourceEnv, target_env_id: targetEnv, dashboard_ids: dashboardIds, db_mappings: mapping },
  });
  expect(r.status, r.text).toBe(202);
  return h.waitForTask(r.body.task_id, undefined, 120_000);
}

beforeAll(async () => {
  // Bundles here are a few KiB; a dashboard carrying 300 KB of CSS goes past this cap.
  [h, source, target] = await Promise.all([
    createHarness({ worker: true, env: { BUNDLE_MAX_MB: '0.1' } }),
    startFakeSuperset(),
    startFakeSuperset(),
  ]);
  const db = source.addDatabase({ name: 'analytics' });
  const sales = source.addDataset({ table: 'sales', database: db.id });
  for (const i of [1, 2, 3]) {
    const d = source.addDashboard({ title: `Sales ${i}`, slug: `sales-${i}` });
    source.addChart({ name: `Sales rows ${i}`, dataset: sales.id, dashboards: [d.id] });
    ids.push(d.id);
  }
  const warehouse = target.addDatabase({ name: 'warehouse' });
  mapping = [{ source_database_id: db.id, target_database_id: warehouse.id }];
  sourceEnv = await createEnvironment(h, { baseUrl: source.baseUrl, username: source.username, password: source.password });
  targetEnv = await createEnvironment(h, { baseUrl: target.baseUrl, username: target.username, password: target.password });
}, 120_000);
afterAll(async () => {
  await h?.close();
  await Promise.all([source?.close(), target?.close()]);
});

describe('one dashboard failing never takes the migration down', () => {
  it("records a 500 on one dashboard's import as that dashboard's failure, once, and migrates its siblings", async () => {
    target.failImport({
      when: (files) => Object.values(files).some((f) => f.dashboard_title === 'Sales 2'),
      status: 500,
      body: { message: 'Import dashboard failed for an unknown reason' },
    });
    const mark = target.mark();
    const task = await migrate(ids);
    target.clearFailures();

    expect(task.status).toBe('FAILED');
    expect(task.error.type).toBe('PartialMigration');
    expect(task.result.totals).toMatchObject({ requested: 3, imported: 2, failed: 1, not_started: 0 });
    const [first, second, third] = task.result.items;
    expect(first).toMatchObject({ id: ids[0], status: 'imported', outcome: 'succeeded' });
    expect(third).toMatchObject({ id: ids[2], status: 'imported', outcome: 'succeeded' });
    expect(second).toMatchObject({
      id: ids[1],
      title: 'Sales 2',
      status: 'failed',
      outcome: 'failed',
      step: 'import',
      upstream_error: { status: 500, message: 'Import dashboard failed for an unknown reason' },
    });
    expect(second.next_actions.map((a: { action: string }) => a.action)).toContain('read_superset_log');
    // A 500 is not an outage: the joint call of the three (refused, changing nothing), then each of
    // them alone once; no retry by the client nor by Temporal.
    const imports = target.requests.slice(mark).filter((r) => r.path === '/api/v1/dashboard/import/');
    expect(imports).toHaveLength(4);
    expect(target.dashboards.map((d) => d.dashboard_title).sort()).toEqual(['Sales 1', 'Sales 3']);

    const report = (await admin('GET', `/api/reports/${task.id}`)).body.report;
    expect(report.diagnostics).toEqual([
      expect.objectContaining({
        where: expect.objectContaining({ item_id: ids[1], step: 'import' }),
        upstream_error: expect.objectContaining({ status: 500, message: 'Import dashboard failed for an unknown reason' }),
      }),
    ]);
    expect(report.next_actions.find((a: { action: string }) => a.action === 'retry_failed').request.body.dashboard_ids).toEqual([ids[1]]);
  });

  it('fails a dashboard whose bundle unpacks past the cap, with a clear reason, before reading it', async () => {
    const big = source.addDashboard({ title: 'Huge', slug: 'huge' });
    big.css = `/* ${'x'.repeat(300_000)} */`;
    const task = await migrate([big.id, ids[0]]);
    expect(task.status).toBe('FAILED');
    const [huge, fine] = task.result.items;
    expect(huge).toMatchObject({ id: big.id, status: 'failed', step: 'export' });
    expect(huge.error).toBe(
      `the bundle of dashboard ${big.id} cannot be used: the bundle unpacks to more than 102 KiB (the most a bundle may hold)`,
    );
    expect(huge.next_actions.map((a: { action: string }) => a.action)).toEqual(['inspect_export']);
    // Migrated by the first test and unchanged since: reported unchanged, a success all the same.
    expect(fine).toMatchObject({ id: ids[0], status: 'unchanged', outcome: 'succeeded' });
  });

  it('turns an activity that fails until its retries run out into that dashboard’s outcome, not a failed task', async () => {
    source.fail({ path: '/api/v1/dashboard/export/' }, 'reset');
    try {
      const task = await migrate([ids[1]]);
      expect(task.status).toBe('FAILED');
      expect(task.error.type).toBe('PartialMigration');
      expect(task.result).not.toBeNull();
      expect(task.result.items).toEqual([
        expect.objectContaining({ id: ids[1], status: 'failed', step: 'export', error: expect.stringMatching(/could not be reached/) }),
      ]);
      expect(task.result.items[0].next_actions.map((a: { action: string }) => a.action)).toContain('test_environment');
    } finally {
      source.clearFailures();
    }
  }, 120_000);
});
