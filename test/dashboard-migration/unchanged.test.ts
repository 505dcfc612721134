import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createHarness, type Harness } from '../support/harness.ts';
import {
  createDashboard,
  createDataset,
  createSqliteDataFile,
  createSqliteDatabase,
  createTableChart,
  getDashboard,
  type SupersetClient,
} from '../support/superset/fixtures.ts';
import { buildSource, client, prefixedTables, registerEnvironment, waitTask, type SourceFixture } from './support.ts';

/**
 * A rerun with nothing changed imports nothing, through the API against real Superset 6.1.0
 * instances a → b: the dashboard is reported `unchanged`. An edit on either side since the last
 * run (in the source, or someone's in the target's Superset) is imported again. Its target is
 * verified again by default (a table dropped there since fails that dashboard alone); with
 * `verification: "if_changed"` it carries the last verification, naming its task and time.
 */
const enabled = inject('supersets') !== null;
const P = `u${Date.now().toString(36)}`;

let h: Harness;
let a: SupersetClient;
let b: SupersetClient;
let envA: string;
let envB: string;
let src: SourceFixture;

const admin = (m: string, p: string, o: Record<string, unknown> = {}) => h.request(m, p, { ...o, token: h.adminToken });

async function migrate(extra: Record<string, unknown> = {}, status = 'SUCCEEDED') {
  return (await migrateAll([src.dashboards[0].id], extra, status))[0];
}

async function migrateAll(ids: number[], extra: Record<string, unknown> = {}, status = 'SUCCEEDED') {
  const r = await admin('POST', '/api/dashboards/migrate', {
    json: { source_env_id: envA, target_env_id: envB, dashboard_ids: ids, ...extra },
  });
  expect(r.status, r.text).toBe(202);
  const task = await waitTask(h, r.body.task_id, 180_000);
  expect(task.status, JSON.stringify(task.result?.items?.map((i: any) => i.error))).toBe(status);
  lastTask = task.id;
  return task.result.items;
}

let lastTask = '';
/** Whether the last migration told its dashboards unchanged from both exports alone (a rerun's shortcut, without the target's lists). */
async function toldFromExports(count = ''): Promise<boolean> {
  const logs = (await admin('GET', `/api/tasks/${lastTask}/logs?limit=1000`)).body.items.map((i: any) => String(i.message));
  return logs.some((m: string) => m.includes(`${count ? `${count} ` : ''}unchanged, told from both exports`));
}

async function changedOn(uuid: string): Promise<string> {
  const d = (await getDashboard(b, uuid)).result;
  expect(d.changed_on).toBeTruthy();
  return String(d.changed_on);
}

beforeAll(async () => {
  if (!enabled) return;
  h = await createHarness({ worker: true });
  [a, b] = await Promise.all([client('a'), client('b')]);
  const dir = path.join(inject('runDir'), P);
  src = await buildSource(a, P, dir, { dashboards: 2 });
  const db = await createSqliteDatabase(b, { name: `${P}_warehouse`, path: path.join(dir, `${P}-b.db`), tables: prefixedTables(P) });
  envA = await registerEnvironment(h, 'a', `${P}-a`);
  envB = await registerEnvironment(h, 'b', `${P}-b`);
  const r = await admin('PUT', `/api/environments/${envA}/db-mappings/${envB}`, {
    json: { mappings: [{ source_database_id: src.database.id, target_database_id: db.id }] },
  });
  expect(r.status, r.text).toBe(200);
}, 300_000);
afterAll(async () => h?.close());

describe.runIf(enabled)('a rerun with nothing changed: a (6.1.0) → b (6.1.0)', () => {
  it(
    'is reported unchanged and not imported; an edit in the target or in the source since is imported again',
    { timeout: 600_000 },
    async () => {
      const first = await migrate();
      expect(first.status).toBe('imported');
      const uuid = first.dashboard_uuid;
      const stamp = await changedOn(uuid);

      expect(first.verification_state).toMatchObject({ state: 'verified', task_id: lastTask, checked: 'imported' });
      const rerun = await migrate();
      expect(rerun).toMatchObject({ status: 'unchanged', outcome: 'succeeded', target_dashboard_id: first.target_dashboard_id });
      // Its target side checked again (the default), without importing it.
      expect(rerun.verification).toMatchObject({ ok: true, dashboard_present: true, charts_linked: 2 });
      expect(rerun.verification_state).toMatchObject({ state: 'verified', task_id: lastTask, checked: 'unchanged_target' });
      expect(await changedOn(uuid)).toBe(stamp); // not imported: Superset did not touch the dashboard
      // Told without the target's lists, and reported as the full plan reports it: every object there, with its id.
      expect(await toldFromExports()).toBe(true);
      expect(rerun.rls).toEqual({ mode: 'strict', source_rules: [], target_rules: [], differences: [] });
      expect(rerun.objects.map((o: any) => [o.kind, o.action])).toEqual(
        first.objects.map((o: any) => [o.kind, o.kind === 'database' ? 'reuse' : 'unchanged']),
      );
      expect(rerun.objects.every((o: any) => Number.isInteger(o.target_id))).toBe(true);
      expect(rerun.objects.find((o: any) => o.kind === 'dashboard').target_id).toBe(first.target_dashboard_id);

      // A row-level-security rule on its dataset in the source since: nothing in either export changed,
      // but the rules now differ, and the default (strict) refuses to migrate it as unchanged.
      const rule = await a.request<{ id: number }>('POST', '/api/v1/rowlevelsecurity/', {
        json: { name: `${P} west`, filter_type: 'Regular', clause: "region = 'west'", tables: [src.sales.id], roles: [] },
      });
      const blocked = await migrate({}, 'FAILED');
      expect(blocked).toMatchObject({ status: 'failed', step: 'rls', code: 'rls_mismatch' });
      await a.request('DELETE', `/api/v1/rowlevelsecurity/${rule.id}`);
      expect((await migrate()).status).toBe('unchanged');
      expect(await toldFromExports()).toBe(true);

      // Someone renames a chart in the target's Superset: not mistaken for unchanged, the source's version comes back.
      const charts = await b.getDashboardCharts(uuid);
      const chart = charts.find((c) => c.slice_name === `${P} rows 1`)!;
      await b.request('PUT', `/api/v1/chart/${chart.id}`, { json: { slice_name: `${P} edited in the target` } });
      const afterTargetEdit = await migrate();
      expect(afterTargetEdit.status).toBe('imported');
      expect((await b.getDashboardCharts(uuid)).map((c) => c.slice_name).sort()).toEqual([`${P} rows 1`, `${P} total 1`]);
      expect((await migrate()).status).toBe('unchanged');

      // A change in the source is imported.
      await a.request('PUT', `/api/v1/dashboard/${src.dashboards[0].id}`, { json: { dashboard_title: `${P} renamed in the source` } });
      const afterSourceEdit = await migrate();
      expect(afterSourceEdit.status).toBe('imported');
      expect((await getDashboard(b, uuid)).result.dashboard_title).toBe(`${P} renamed in the source`);

      // overwrite: false keeps its meaning: an existing dashboard is skipped, whatever its state.
      expect((await migrate({ overwrite: false })).status).toBe('skipped');
    },
  );

  it(
    'tells the unchanged dashboards of a rerun from both exports and plans the changed one against the whole target',
    { timeout: 600_000 },
    async () => {
      const ids = src.dashboards.map((d) => d.id);
      const [, first] = await migrateAll(ids); // the second one's first migration
      expect(first.status).toBe('imported');
      expect((await migrateAll(ids)).map((i: any) => i.status)).toEqual(['unchanged', 'unchanged']);
      expect(await toldFromExports('all 2')).toBe(true);

      // The second one changes in the source: the first is still told from the exports, the second
      // planned in full against the target's lists (read after the shortcut's look), as an update.
      await a.request('PUT', `/api/v1/dashboard/${ids[1]}`, { json: { dashboard_title: `${P} second, renamed` } });
      const [same, changed] = await migrateAll(ids);
      expect(same.status).toBe('unchanged');
      expect(changed).toMatchObject({ status: 'imported', target_dashboard_id: first.target_dashboard_id });
      expect(changed.objects.find((o: any) => o.kind === 'dashboard')).toMatchObject({
        action: 'update',
        target_id: first.target_dashboard_id,
      });
      expect(
        changed.objects.filter((o: any) => o.kind === 'chart').every((o: any) => o.action === 'unchanged' && Number.isInteger(o.target_id)),
      ).toBe(true);
      expect(await toldFromExports('1')).toBe(true);
      expect((await getDashboard(b, changed.dashboard_uuid)).result.dashboard_title).toBe(`${P} second, renamed`);
    },
  );

  it('never takes the shortcut past a failed verification: the rerun imports and verifies again', { timeout: 600_000 }, async () => {
    // The target's database lacks the tables, so every chart query fails there: verification fails.
    const V = `${P}v`;
    const dir = path.join(inject('runDir'), V);
    const source = await buildSource(a, V, dir, { dashboards: 1 });
    const empty = await createSqliteDatabase(b, { name: `${V}_wh`, path: path.join(dir, `${V}-b.db`), tables: [] });
    const body = { db_mappings: [{ source_database_id: source.database.id, target_database_id: empty.id }] };
    const [failed] = await migrateAll([source.dashboards[0].id], body, 'FAILED');
    expect(failed.status).toBe('imported_with_errors');
    expect(failed.verification.ok).toBe(false);

    // The tables are created meanwhile; nothing changed in either Superset, but the last check failed.
    createSqliteDataFile(empty.path, prefixedTables(V));
    const [again] = await migrateAll([source.dashboards[0].id], body);
    expect(again).toMatchObject({ status: 'imported', reverified_after_failure: true });
    expect(again.verification.ok).toBe(true);
    expect(await toldFromExports()).toBe(false);

    // Passed now: the next rerun may call it unchanged.
    const [settled] = await migrateAll([source.dashboards[0].id], body);
    expect(settled.status).toBe('unchanged');
  });

  it(
    'checks an unchanged target again: a table dropped there after a passed migration fails that dashboard alone; if_changed carries the last verification',
    { timeout: 600_000 },
    async () => {
      const T = `${P}t`;
      const dir = path.join(inject('runDir'), T);
      const source = await buildSource(a, T, dir, { dashboards: 1 }); // its charts read T_sales
      // A sibling on the other table of the same database.
      const customers = await createDataset(a, { database: source.database.id, tableName: `${T}_customers` });
      const names = await createTableChart(a, { name: `${T} names`, datasetId: customers.id, columns: ['name', 'region'] });
      const sibling = await createDashboard(a, { title: `${T} customers`, slug: `${T}-customers`, charts: [names] });
      const wh = await createSqliteDatabase(b, { name: `${T}_wh`, path: path.join(dir, `${T}-b.db`), tables: prefixedTables(T) });
      const body = { db_mappings: [{ source_database_id: source.database.id, target_database_id: wh.id }] };
      const ids = [source.dashboards[0].id, sibling.id];
      const first = await migrateAll(ids, body);
      expect(first.map((i: any) => [i.status, i.verification.ok])).toEqual([
        ['imported', true],
        ['imported', true],
      ]);

      // Nothing changed: both unchanged, told from the exports, their targets verified again.
      const again = await migrateAll(ids, body);
      expect(await toldFromExports('all 2')).toBe(true);
      const passed = lastTask;
      for (const i of again) {
        expect(i).toMatchObject({ status: 'unchanged', outcome: 'succeeded', verification: { ok: true } });
        expect(i.verification_state).toMatchObject({ state: 'verified', task_id: passed, checked: 'unchanged_target' });
      }

      // The charts' table is dropped in the target: neither export shows it.
      const sqlite = new DatabaseSync(wh.path);
      sqlite.exec(`DROP TABLE "${T}_sales"`);
      sqlite.close();

      // if_changed: not checked again; each item says whose verification it carries, and when.
      const carried = await migrateAll(ids, { ...body, verification: 'if_changed' });
      for (const [at, i] of carried.entries()) {
        expect(i).toMatchObject({
          status: 'unchanged',
          outcome: 'succeeded',
          verification_state: { state: 'carried', from_task_id: passed },
        });
        expect(i.verification).toBeUndefined();
        expect(i.verification_state.at).toBe(again[at].verification_state.at);
        expect(i.verification_state.reason).toMatch(/if_changed/);
      }

      // The default rerun checks the targets again: that dashboard fails, and only it; nothing is imported.
      const broken = await migrateAll(ids, body, 'FAILED');
      expect(await toldFromExports('all 2')).toBe(true);
      expect(broken[0]).toMatchObject({
        status: 'unchanged_with_errors',
        outcome: 'failed',
        step: 'verify',
        verification: { ok: false, dashboard_present: true },
        verification_state: { state: 'verified', task_id: lastTask, checked: 'unchanged_target' },
      });
      expect(broken[0].error).toMatch(/changed under it/);
      expect(broken[0].verification.charts.filter((c: any) => c.classification === 'broken_by_migration').length).toBe(2);
      expect(broken[0].verification.charts.map((c: any) => c.error).join(' ')).toMatch(new RegExp(`${T}_sales`));
      expect(broken[0].next_actions.map((n: any) => n.action)).toContain('fix_target');
      expect(broken[1]).toMatchObject({
        status: 'unchanged',
        outcome: 'succeeded',
        verification: { ok: true },
        verification_state: { state: 'verified' },
      });

      // The table back: the failed verification sends it to the full plan (imported and verified again); the sibling stays unchanged.
      createSqliteDataFile(wh.path, prefixedTables(T));
      const restored = await migrateAll(ids, body);
      expect(restored.map((i: any) => [i.status, i.verification.ok])).toEqual([
        ['imported', true],
        ['unchanged', true],
      ]);
      expect(restored[0].reverified_after_failure).toBe(true);
    },
  );
});
