// Why the fake: a 403 on catalogs (a narrowed real account could give it: not yet moved).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakePair, type FakePair } from './fake-pair.ts';

/**
 * A dataset's catalog follows its database's mapping (lib/bundles/catalogs.ts), decided from
 * what the target says of the mapped database. When the target refuses to say (its /connection
 * or catalogs read answering 403: the service account lacks can_write or can_read on Database),
 * the catalog goes as exported, and the outcome says so: a warning with the step and what to do,
 * never a silent skip and never a failed dashboard. Two fake Supersets, for the 403 a real one
 * gives only to a narrowed service account.
 */
let pair: FakePair;
let mapping: Array<{ source_database_id: number; target_database_id: number }>;
const ids = {} as Record<'ownDefault' | 'otherCatalog', number>;

const CONNECTION = /^\/api\/v1\/database\/\d+\/connection$/;
const CATALOGS = /^\/api\/v1\/database\/\d+\/catalogs\/$/;

async function migrate(dashboardId: number, extra: Record<string, unknown> = {}) {
  const r = await pair.admin('POST', '/api/dashboards/migrate', {
    json: { source_env_id: pair.sourceEnv, target_env_id: pair.targetEnv, dashboard_ids: [dashboardId], db_mappings: mapping, ...extra },
  });
  expect(r.status, r.text).toBe(202);
  const task = await pair.h.waitForTask(r.body.task_id, undefined, 120_000);
  return { task, item: task.result.items[0] };
}

beforeAll(async () => {
  // One try per call: an outage reaches the plan at once instead of the client's own retries.
  pair = await startFakePair({ SUPERSET_RETRY_ATTEMPTS: '1' });
  const { source, target } = pair;
  // The fake's connection URI names the database by its name: dev_wh is the source's default catalog.
  const db = source.addDatabase({ name: 'dev_wh' });
  const orders = source.addDataset({ table: 'orders', database: db.id, catalog: 'dev_wh' });
  const events = source.addDataset({ table: 'events', database: db.id, catalog: 'lake' });
  const d1 = source.addDashboard({ title: 'Orders', slug: 'orders' });
  source.addChart({ name: 'Order rows', dataset: orders.id, dashboards: [d1.id] });
  const d2 = source.addDashboard({ title: 'Events', slug: 'events' });
  source.addChart({ name: 'Event rows', dataset: events.id, dashboards: [d2.id] });
  ids.ownDefault = d1.id;
  ids.otherCatalog = d2.id;
  const warehouse = target.addDatabase({ name: 'prod_wh' });
  mapping = [{ source_database_id: db.id, target_database_id: warehouse.id }];
}, 120_000);
afterAll(async () => pair?.close());

describe('a target database whose catalogs Superset will not show', () => {
  it('answered: the catalog follows the mapping, nothing to warn about', async () => {
    const { task, item } = await migrate(ids.ownDefault, { dry_run: true });
    expect(task.status, JSON.stringify(task.result)).toBe('SUCCEEDED');
    expect(item.objects.find((o: any) => o.kind === 'database').note).toContain("catalog 'dev_wh' becomes 'prod_wh'");
    expect(item.warnings).toBeUndefined();
  });

  it('its /connection refused (403): migrated as exported, with a warning at step plan naming the catalog and what to do', async () => {
    pair.target.fail({ method: 'GET', path: CONNECTION }, '403');
    try {
      const { task, item } = await migrate(ids.ownDefault, { overwrite: true });
      expect(task.status, JSON.stringify(task.result)).toBe('SUCCEEDED');
      expect(item.status).toBe('imported');
      expect(item.warnings).toHaveLength(1);
      const [w] = item.warnings;
      expect(w).toMatchObject({ step: 'plan', code: 'catalog_not_checked' });
      expect(w.message).toContain("target database 'prod_wh''s connection");
      expect(w.message).toContain("(catalog 'dev_wh') was not checked");
      expect(w.next_actions.map((a: any) => a.action)).toEqual(['grant_database_write', 'add_catalog_rule']);
      expect(w.next_actions[1].request.body).toEqual({ kind: 'catalog', from: 'dev_wh', to: '<target catalog>' });
      expect(item.next_actions.map((a: any) => a.action)).toEqual(expect.arrayContaining(['grant_database_write', 'add_catalog_rule']));
      // Nothing claims the catalog was decided.
      expect(item.objects.find((o: any) => o.kind === 'database').note).not.toContain('becomes');

      const report = await pair.admin('GET', `/api/reports/${task.id}`);
      expect(report.status, report.text).toBe(200);
      const diagnostics = report.body.report.diagnostics as any[];
      expect(diagnostics).toContainEqual(
        expect.objectContaining({ severity: 'warning', where: expect.objectContaining({ step: 'plan' }), message: w.message }),
      );
    } finally {
      pair.target.clearFailures();
    }
  });

  it('a catalog rule names the target catalog itself: no warning', async () => {
    pair.target.fail({ method: 'GET', path: CONNECTION }, '403');
    const rule = await pair.admin('POST', `/api/environments/${pair.sourceEnv}/rules/${pair.targetEnv}`, {
      json: { kind: 'catalog', from: 'dev_wh', to: 'prod_wh' },
    });
    try {
      expect(rule.status, rule.text).toBe(201);
      const { task, item } = await migrate(ids.ownDefault, { dry_run: true, overwrite: true });
      expect(task.status, JSON.stringify(task.result)).toBe('SUCCEEDED');
      expect(item.warnings).toBeUndefined();
    } finally {
      pair.target.clearFailures();
      await pair.admin('DELETE', `/api/environments/${pair.sourceEnv}/rules/${pair.targetEnv}/${rule.body.id}`);
    }
  });

  it('its catalog list refused (403): another catalog is not checked, never called missing', async () => {
    pair.target.fail({ method: 'GET', path: CATALOGS }, '403');
    try {
      const { task, item } = await migrate(ids.otherCatalog, { dry_run: true });
      expect(task.status, JSON.stringify(task.result)).toBe('SUCCEEDED');
      expect(item.status).toBe('planned');
      expect(item.collisions).toEqual([]);
      expect(item.warnings).toHaveLength(1);
      expect(item.warnings[0].message).toContain("list target database 'prod_wh''s catalogs");
      expect(item.warnings[0].message).toContain("(catalog 'lake')");
      expect(item.warnings[0].next_actions.map((a: any) => a.action)).toEqual(['grant_database_read', 'add_catalog_rule']);
    } finally {
      pair.target.clearFailures();
    }
  });

  it('an outage is no refusal: the plan is tried again and the catalog follows the mapping', async () => {
    pair.target.fail({ method: 'GET', path: CONNECTION }, '503', 1);
    try {
      const { task, item } = await migrate(ids.ownDefault, { dry_run: true, overwrite: true });
      expect(task.status, JSON.stringify(task.result)).toBe('SUCCEEDED');
      expect(item.warnings).toBeUndefined();
      expect(item.objects.find((o: any) => o.kind === 'database').note).toContain("catalog 'dev_wh' becomes 'prod_wh'");
    } finally {
      pair.target.clearFailures();
    }
  });

  it('Superset failing on the read (500) fails the dashboard at plan with its answer, never imports an unchecked catalog', async () => {
    pair.target.fail({ method: 'GET', path: CONNECTION }, '500');
    try {
      const { item } = await migrate(ids.ownDefault, { overwrite: true });
      expect(item).toMatchObject({ status: 'failed', step: 'plan', upstream_error: { status: 500 } });
      expect(item.error).toContain('/connection');
    } finally {
      pair.target.clearFailures();
    }
  });
});
