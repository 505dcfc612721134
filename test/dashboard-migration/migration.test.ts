import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createHarness, type Harness } from '../support/harness.ts';
import {
  createDashboard,
  createDataset,
  createSqliteDatabase,
  getDashboard,
  listAll,
  type SupersetClient,
} from '../support/superset/fixtures.ts';
import { buildSource, prefixedTables, client, registerEnvironment, superset, waitTask, type SourceFixture } from './support.ts';

/**
 * Migrations between real Superset instances: a (6.1.0) → b (6.1.0) and a → c (6.0.0), through
 * the API and a real worker on real PostgreSQL and Temporal. The traps (a same-named database and
 * a same-slug dashboard in the target, datasets bound to the mapped database, re-run idempotency)
 * also run against d (6.1.0 keeping its metadata in PostgreSQL, as production deployments do).
 */
let h: Harness;
let a: SupersetClient;
let b: SupersetClient;
let c: SupersetClient;
let envA: string;
let envB: string;
let envC: string;
let src: SourceFixture;
let unmapped: SourceFixture;
const P = `m${Date.now().toString(36)}`;

/** A target of the traps: the database to map onto, a same-named "bait" database, and a dashboard owning the source's slug. */
interface TrapTarget {
  client: SupersetClient;
  env: string;
  targetDb: { id: number; uuid?: string };
  baitDb: { id: number; uuid?: string };
  slugOwner: { id: number; title: string };
}
const TRAP_TARGETS = [
  ['b', 'SQLite'],
  ['d', 'PostgreSQL'],
] as const;
const targets = {} as Record<(typeof TRAP_TARGETS)[number][0], TrapTarget>;

const admin = (m: string, p: string, o: Record<string, unknown> = {}) => h.request(m, p, { ...o, token: h.adminToken });

async function migrate(body: Record<string, unknown>) {
  const r = await admin('POST', '/api/dashboards/migrate', { json: body });
  expect(r.status, r.text).toBe(202);
  return waitTask(h, r.body.task_id);
}

async function countIn(cl: SupersetClient, resource: 'dashboard' | 'chart' | 'dataset' | 'database', titlePrefix: string) {
  const col = { dashboard: 'dashboard_title', chart: 'slice_name', dataset: 'table_name', database: 'database_name' }[resource];
  const all = await listAll<{ id: number; [k: string]: unknown }>(cl, resource, { columns: ['id', col, 'uuid'] } as never);
  return all.filter((x) => String(x[col] ?? '').startsWith(titlePrefix)).length;
}

// Without a real Superset (SWITCHYARD_TEST_SUPERSET=off, refused under CI: test/support/ci.ts) the file is skipped, not failed.
const enabled = inject('supersets') !== null;

beforeAll(async () => {
  if (!enabled) return;
  h = await createHarness({ worker: true });
  [a, b, c] = await Promise.all([client('a'), client('b'), client('c')]);
  const dir = path.join(inject('runDir'), P);
  src = await buildSource(a, P, dir, { dashboards: 2 });
  unmapped = await buildSource(a, `${P}x`, dir, { dashboards: 1, table: 'customers' });
  envA = await registerEnvironment(h, 'a', `${P}-a`);
  for (const [name] of TRAP_TARGETS) {
    const cl = name === 'b' ? b : await client(name);
    const targetDb = await createSqliteDatabase(cl, {
      name: `${P}_warehouse`,
      path: path.join(dir, `${P}-${name}.db`),
      tables: prefixedTables(P),
    });
    const baitDb = await createSqliteDatabase(cl, {
      name: `${P}_src`,
      path: path.join(dir, `${P}-${name}-bait.db`),
      tables: prefixedTables(P),
    });
    const owner = await createDashboard(cl, { title: `${P} owned by the target`, slug: src.dashboards[0].slug });
    const env = await registerEnvironment(h, name, `${P}-${name}`);
    targets[name] = { client: cl, env, targetDb, baitDb, slugOwner: { id: owner.id, title: owner.title } };
  }
  expect(superset('d').metadata).toBe('postgresql');
  const oldDb = await createSqliteDatabase(c, { name: `${P}_old`, path: path.join(dir, `${P}-c.db`), tables: prefixedTables(P) });
  envB = targets.b.env;
  envC = await registerEnvironment(h, 'c', `${P}-c`);
  for (const [target, db] of [...Object.values(targets).map((t) => [t.env, t.targetDb] as const), [envC, oldDb] as const]) {
    const r = await admin('PUT', `/api/environments/${envA}/db-mappings/${target}`, {
      json: { mappings: [{ source_database_id: src.database.id, target_database_id: db.id }] },
    });
    expect(r.status, r.text).toBe(200);
  }
}, 240_000);
afterAll(async () => h?.close());

describe.runIf(enabled).each(TRAP_TARGETS)('migration a (6.1.0) → %s (6.1.0, %s metadata)', (name) => {
  it('migrates dashboards with charts and datasets onto the mapped database, hijacking nothing; a failing dashboard does not fail its siblings', async () => {
    const { client: b, env: envB, targetDb, baitDb, slugOwner } = targets[name];
    const ids = [...src.dashboards.map((d) => d.id), unmapped.dashboards[0].id];
    const task = await migrate({ source_env_id: envA, target_env_id: envB, dashboard_ids: ids });
    // One dashboard had an unmapped database: the task says so instead of reporting success.
    expect(task.status).toBe('FAILED');
    expect(task.error.type).toBe('PartialMigration');
    const result = task.result;
    expect(result.totals, JSON.stringify(result.items.map((d: any) => [d.error, d.upstream_error]))).toMatchObject({
      requested: 3,
      imported: 2,
      failed: 1,
    });
    const [first, second, third] = result.items;
    expect(third).toMatchObject({ id: unmapped.dashboards[0].id, status: 'failed' });
    expect(third.error).toMatch(/has no mapping/);
    expect(third.next_actions.map((n: any) => n.action)).toEqual(['map_database', 'retry_with_mapping']);
    expect(result.next_actions[0].request.body.dashboard_ids).toEqual([unmapped.dashboards[0].id]);

    for (const o of [first, second]) {
      expect(o.status).toBe('imported');
      expect(o.verification).toMatchObject({ ok: true, dashboard_present: true, charts_expected: 2, charts_linked: 2 });
      expect(o.verification.charts.every((ch: any) => ch.ok && ch.rows > 0)).toBe(true);
      expect(o.database_mappings).toEqual([{ source: `${P}_src`, target: `${P}_warehouse`, target_id: targetDb.id }]);
      const d = (await getDashboard(b, o.dashboard_uuid)).result;
      expect(d.id).toBe(o.target_dashboard_id);
    }
    // The slug belonged to another target dashboard: it was not taken over.
    expect(first.collisions).toEqual([expect.objectContaining({ kind: 'slug', resolution: expect.stringContaining('without a slug') })]);
    const owner = (await getDashboard(b, slugOwner.id)).result;
    expect(owner.dashboard_title).toBe(slugOwner.title);
    expect((await getDashboard(b, first.target_dashboard_id)).result.slug ?? null).toBeNull();
    // The same-named database in the target is untouched, and no database was created.
    const dbs = await listAll<{ id: number; [k: string]: unknown }>(b, 'database', { columns: ['id', 'uuid', 'database_name'] } as never);
    expect(dbs.find((x) => x.id === baitDb.id)!.uuid).toBe(baitDb.uuid);
    expect(dbs.filter((x) => String(x.database_name).startsWith(P))).toHaveLength(2);
    // The datasets live on the mapped database.
    const datasets = await listAll<{ id: number; [k: string]: any }>(b, 'dataset', {
      columns: ['id', 'table_name', 'database.id', 'database.database_name'],
    } as never);
    const sales = datasets.filter((x) => x.table_name === `${P}_sales` && x.database?.id === targetDb.id);
    expect(sales).toHaveLength(1);
    expect(datasets.filter((x) => x.database?.id === baitDb.id)).toHaveLength(0);
    const { metadata, metadataUrl } = superset(name);
    if (metadata === 'postgresql') {
      // The rows really live in PostgreSQL: the imported dashboard, without the slug it did not take.
      const db = new pg.Client({ connectionString: metadataUrl });
      await db.connect();
      try {
        const { rows } = await db.query('select id, slug from dashboards where uuid = $1', [first.dashboard_uuid]);
        expect(rows).toEqual([{ id: first.target_dashboard_id, slug: null }]);
      } finally {
        await db.end();
      }
    }
  });

  it('converges on a re-run: nothing duplicated, everything unchanged', async () => {
    const { client: b, env: envB } = targets[name];
    const before = { d: await countIn(b, 'dashboard', P), c: await countIn(b, 'chart', P) };
    const task = await migrate({ source_env_id: envA, target_env_id: envB, dashboard_ids: src.dashboards.map((d) => d.id) });
    expect(task.status).toBe('SUCCEEDED');
    expect(await countIn(b, 'dashboard', P)).toBe(before.d);
    expect(await countIn(b, 'chart', P)).toBe(before.c);
    for (const o of task.result.items) {
      // Nothing changed on either side since the first run: reported unchanged, not imported again.
      expect(o.status).toBe('unchanged');
      expect(o.outcome).toBe('succeeded');
      const charts = o.objects.filter((x: any) => x.kind === 'chart');
      expect(
        charts.map((x: any) => x.action),
        JSON.stringify(o.objects.map((x: any) => [x.kind, x.action, x.differences])),
      ).toEqual(['unchanged', 'unchanged']);
    }
  });
});

describe.runIf(enabled)('migration a (6.1.0) → b (6.1.0)', () => {
  it('dry-runs a change with field-level differences and imports nothing, then applies it', async () => {
    const { targetDb } = targets.b;
    const d = src.dashboards[1];
    await a.request('PUT', `/api/v1/dashboard/${d.id}`, { json: { dashboard_title: `${d.title} (renamed)` } });
    await a.request('PUT', `/api/v1/chart/${d.chartIds[0]}`, { json: { slice_name: `${P} rows 2 (renamed)` } });
    const dry = await migrate({ source_env_id: envA, target_env_id: envB, dashboard_ids: [d.id], dry_run: true });
    expect(dry.status).toBe('SUCCEEDED');
    const plan = dry.result.items[0];
    expect(plan.status).toBe('planned');
    const dash = plan.objects.find((o: any) => o.kind === 'dashboard');
    expect(dash.action).toBe('update');
    expect(dash.differences).toContainEqual({ field: 'dashboard_title', source: `${d.title} (renamed)`, target: d.title });
    const chart = plan.objects.find((o: any) => o.kind === 'chart' && o.action === 'update');
    expect(chart.differences).toContainEqual(expect.objectContaining({ field: 'slice_name', source: `${P} rows 2 (renamed)` }));
    expect(plan.objects.find((o: any) => o.kind === 'database')).toMatchObject({ action: 'reuse', target_id: targetDb.id });
    const target = (await getDashboard(b, plan.dashboard_uuid)).result;
    expect(target.dashboard_title).toBe(d.title); // untouched

    const applied = await migrate({ source_env_id: envA, target_env_id: envB, dashboard_ids: [d.id] });
    expect(applied.status).toBe('SUCCEEDED');
    expect((await getDashboard(b, plan.dashboard_uuid)).result.dashboard_title).toBe(`${d.title} (renamed)`);
    const charts = await b.getDashboardCharts(plan.dashboard_uuid);
    expect(charts.map((x) => x.slice_name)).toContain(`${P} rows 2 (renamed)`);
  });

  it('skips a dashboard that exists when overwrite is false, and says how to update it', async () => {
    const task = await migrate({ source_env_id: envA, target_env_id: envB, dashboard_ids: [src.dashboards[0].id], overwrite: false });
    expect(task.status).toBe('SUCCEEDED');
    expect(task.result.items[0]).toMatchObject({ status: 'skipped' });
    expect(task.result.items[0].next_actions[0].action).toBe('overwrite');
  });
});

describe.runIf(enabled)('migration across versions: a (6.1.0) → c (6.0.0)', () => {
  it('succeeds where Superset’s own import fails whole, and reports the fields it dropped per object', async () => {
    const zip = await a.exportDashboards([src.dashboards[0].id]);
    const native = await h.knex.transaction(async () => {
      const { SupersetClient: Client } = await import('../../lib/superset/client.ts');
      const target = new Client({ baseUrl: superset('c').baseUrl, username: superset('c').username, password: superset('c').password });
      try {
        await target.importBundle('dashboard', Buffer.from(zip), { overwrite: true });
        return null;
      } catch (err) {
        return err as { upstreamStatus: number; files: Record<string, unknown> };
      } finally {
        target.close();
      }
    });
    // Superset's own import of a 6.1.0 bundle into 6.0.0 fails whole, naming the unknown fields.
    expect(native?.upstreamStatus).toBe(422);
    expect(JSON.stringify(native?.files)).toContain('Unknown field');

    const task = await migrate({ source_env_id: envA, target_env_id: envC, dashboard_ids: src.dashboards.map((d) => d.id) });
    expect(task.status, JSON.stringify(task.error)).toBe('SUCCEEDED');
    const [first, second] = task.result.items;
    expect(first.status).toBe('imported');
    expect(first.import_attempts).toBeGreaterThan(1);
    const fields = first.dropped_fields.map((f: any) => `${f.kind}:${f.field}`);
    expect(fields).toEqual(expect.arrayContaining(['database:configuration_method', 'dataset:columns.*.datetime_format']));
    // One entry per field, counted over the objects it was dropped from, with examples.
    expect(new Set(fields).size).toBe(fields.length);
    const datetimeFormat = first.dropped_fields.find((f: any) => f.field === 'columns.*.datetime_format');
    expect(datetimeFormat.count).toBeGreaterThan(1);
    expect(datetimeFormat.examples[0]).toHaveProperty('object');
    // Both went in one import call: what Superset's refusal of the lot taught was stripped from each, and the lot sent again.
    expect(second.import_attempts).toBe(first.import_attempts);
    expect(second.dropped_fields.map((f: any) => `${f.kind}:${f.field}`)).toEqual(
      expect.arrayContaining(['dataset:columns.*.datetime_format']),
    );
    expect(second.verification.ok).toBe(true);
  });
});

describe.runIf(enabled)('a dashboard Superset fails to import: c (6.0.0) keeps one dataset per table name', () => {
  // c's metadata database is SQLite, whose `tables` keeps a legacy UNIQUE (table_name): importing
  // a dataset on a table name another database's dataset already uses fails with a bare 500.
  const Q = `${P}q`;
  let collides: SourceFixture;
  let siblings: SourceFixture;
  let devDb: { id: number };
  let taken: { id: number };
  let mappings: Array<{ source_database_id: number; target_database_id: number }>;

  beforeAll(async () => {
    const dir = path.join(inject('runDir'), Q);
    collides = await buildSource(a, Q, dir, { dashboards: 1 });
    siblings = await buildSource(a, `${Q}y`, dir, { dashboards: 2, table: 'customers' });
    devDb = await createSqliteDatabase(c, { name: `${Q}_analytics_dev`, path: path.join(dir, `${Q}-c-dev.db`), tables: prefixedTables(Q) });
    taken = await createDataset(c, { database: devDb.id, tableName: `${Q}_sales` });
    const warehouse = await createSqliteDatabase(c, {
      name: `${Q}_warehouse`,
      path: path.join(dir, `${Q}-c.db`),
      tables: prefixedTables(Q),
    });
    const other = await createSqliteDatabase(c, {
      name: `${Q}y_warehouse`,
      path: path.join(dir, `${Q}y-c.db`),
      tables: prefixedTables(`${Q}y`),
    });
    mappings = [
      { source_database_id: collides.database.id, target_database_id: warehouse.id },
      { source_database_id: siblings.database.id, target_database_id: other.id },
    ];
  }, 240_000);

  it("records the 500 as that dashboard's failure with the cause in words, tries it once, and migrates the siblings", async () => {
    const ids = [collides.dashboards[0].id, ...siblings.dashboards.map((d) => d.id)];
    const task = await migrate({ source_env_id: envA, target_env_id: envC, dashboard_ids: ids, db_mappings: mappings });
    expect(task.status).toBe('FAILED');
    expect(task.error.type).toBe('PartialMigration');
    expect(task.result, JSON.stringify(task.error)).not.toBeNull();
    expect(task.result.totals).toMatchObject({ requested: 3, imported: 2, failed: 1, not_started: 0 });
    const [failed, ...rest] = task.result.items;
    expect(failed).toMatchObject({
      id: collides.dashboards[0].id,
      status: 'failed',
      step: 'import',
      upstream_error: { status: 500, message: expect.stringMatching(/Import dashboard failed/) },
    });
    expect(failed.error).toContain(
      `this Superset keeps one dataset per table name; dataset \`${Q}_sales\` (id ${taken.id}) already exists on database \`${Q}_analytics_dev\` (id ${devDb.id})`,
    );
    const remap = failed.next_actions.find((n: any) => n.action === 'retry_with_mapping');
    expect(remap.request.body.db_mappings).toEqual([{ source_database_id: collides.database.id, target_database_id: devDb.id }]);
    expect(failed.next_actions.map((n: any) => n.action)).toContain('resolve_table_name_collision');
    for (const o of rest) {
      expect(o.status, JSON.stringify([o.error, o.upstream_error])).toBe('imported');
      expect(o.verification.ok).toBe(true);
    }
    // The 500 is this dashboard's answer, not an outage: its activity ran once.
    const logs = (await admin('GET', `/api/tasks/${task.id}/logs?limit=1000`)).body.items.map((i: any) => i.message);
    expect(logs.filter((m: string) => /activity migrateDashboard started, attempt [2-9]/.test(m))).toEqual([]);
    const report = (await admin('GET', `/api/reports/${task.id}`)).body.report;
    expect(report.diagnostics[0]).toMatchObject({
      where: { item_id: collides.dashboards[0].id, step: 'import' },
      upstream_error: { status: 500 },
    });
  });
});

describe.runIf(enabled)('migration requests', () => {
  it.each([
    [{ dashboard_ids: [] }, 400, 'body.dashboard_ids'],
    [{ dashboard_ids: 'all' }, 400, 'body.dashboard_ids'],
    [{ dashboard_ids: [1], db_mappings: [{ source_database_id: 1 }] }, 400, 'body.db_mappings.0.target_database_id'],
  ])('rejects %j with %i', async (patch, status, field) => {
    const before = await h.knex('tasks').count({ n: '*' });
    const r = await admin('POST', '/api/dashboards/migrate', { json: { source_env_id: envA, target_env_id: envB, ...patch } });
    expect(r.status).toBe(status);
    expect(r.body.errors.map((e: any) => e.field)).toContain(field);
    expect(await h.knex('tasks').count({ n: '*' })).toEqual(before);
  });

  it('answers 404 when either environment does not exist, 400 for the same one twice', async () => {
    const missing = '00000000-0000-4000-8000-000000000000';
    const r1 = await admin('POST', '/api/dashboards/migrate', {
      json: { source_env_id: missing, target_env_id: envB, dashboard_ids: [1] },
    });
    expect(r1.status).toBe(404);
    expect(r1.body.code).toBe('not_found');
    expect(
      (await admin('POST', '/api/dashboards/migrate', { json: { source_env_id: envA, target_env_id: missing, dashboard_ids: [1] } }))
        .status,
    ).toBe(404);
    expect(
      (await admin('POST', '/api/dashboards/migrate', { json: { source_env_id: envA, target_env_id: envA, dashboard_ids: [1] } })).status,
    ).toBe(400);
  });

  it('needs dashboards:MIGRATE', async () => {
    await admin('POST', '/api/admin/users', { json: { username: 'mig-viewer', password: 'viewer-password-1', roles: ['Viewer'] } });
    const token = await h.login('mig-viewer', 'viewer-password-1');
    const r = await h.request('POST', '/api/dashboards/migrate', {
      token,
      json: { source_env_id: envA, target_env_id: envB, dashboard_ids: [1] },
    });
    expect(r.status).toBe(403);
    expect((await h.request('POST', '/api/dashboards/migrate', { json: {} })).status).toBe(401);
  });
});
