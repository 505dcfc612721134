// Why the fake: lists without uuid and imports requiring fields, as releases before 4.1.4 answer (no such release runs here).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEnvironment } from '../support/environments.ts';
import { startFakeSuperset, type FakeSuperset } from '../support/fake-superset.ts';
import { createHarness, type Harness } from '../support/harness.ts';

/**
 * Migrations onto targets that behave like older releases, for what the real 4.1.4 and 5.0.0 do
 * not show on demand: lists without uuids (Superset before 4.1.4: lookups go through exports),
 * list filters refused on `uuid` (every release before 6.0), and an importer that requires a
 * field the source does not export (filled with the target's default and reported).
 */
let h: Harness;
let source: FakeSuperset;
let target: FakeSuperset;
let sourceEnv: string;
let targetEnv: string;
let mapping: Array<{ source_database_id: number; target_database_id: number }>;
const ids: number[] = [];

const admin = (m: string, p: string, o: Record<string, unknown> = {}) => h.request(m, p, { ...o, token: h.adminToken });

async function migrate(dashboardIds: number[], extra: Record<string, unknown> = {}) {
  const r = await admin('POST', '/api/dashboards/migrate', {
    json: { source_env_id: sourceEnv, target_env_id: targetEnv, dashboard_ids: dashboardIds, db_mappings: mapping, ...extra },
  });
  expect(r.status, r.text).toBe(202);
  return h.waitForTask(r.body.task_id, undefined, 120_000);
}

beforeAll(async () => {
  [h, source, target] = await Promise.all([
    createHarness({ worker: true }),
    startFakeSuperset(),
    // Lists carry no uuid and refuse a uuid filter; `id` filters work (incremental index refresh).
    startFakeSuperset({
      version: '4.1.0',
      listsWithoutUuid: true,
      filterColumns: { dashboard: ['id', 'slug'], chart: ['id'], dataset: ['id', 'table_name', 'database'] },
    }),
  ]);
  const db = source.addDatabase({ name: 'analytics' });
  const sales = source.addDataset({ table: 'sales', database: db.id });
  for (const i of [1, 2]) {
    const d = source.addDashboard({ title: `Old ${i}`, slug: `old-${i}` });
    source.addChart({ name: `Old rows ${i}`, dataset: sales.id, dashboards: [d.id] });
    ids.push(d.id);
  }
  const warehouse = target.addDatabase({ name: 'warehouse' });
  // A dataset on the same table (with another uuid) already in the mapped target database: reused, never merged into.
  target.addDataset({ table: 'customers', database: warehouse.id });
  target.addDataset({ table: 'sales', database: warehouse.id });
  mapping = [{ source_database_id: db.id, target_database_id: warehouse.id }];
  sourceEnv = await createEnvironment(h, { baseUrl: source.baseUrl, username: source.username, password: source.password });
  targetEnv = await createEnvironment(h, { baseUrl: target.baseUrl, username: target.username, password: target.password });
}, 120_000);
afterAll(async () => {
  await h?.close();
  await Promise.all([source?.close(), target?.close()]);
});

describe('a target whose lists carry no uuid', () => {
  it('shows what the release can do in the environment test', async () => {
    const r = await admin('POST', `/api/environments/${targetEnv}/test`);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      ok: true,
      version: '4.1.0',
      capabilities: {
        version: '4.1.0',
        lists: { dataset: { filters: ['database', 'id', 'table_name'] }, chart: { filters: ['id'] } },
        security_api: true,
        thumbnails: null, // no dashboard to ask about yet
      },
    });
  });

  it('plans and migrates with uuids learned from exports, never sending a uuid filter, and converges on a re-run', async () => {
    const mark = target.mark();
    const task = await migrate(ids);
    expect(task.status, JSON.stringify(task.result?.items?.map((i: any) => [i.error, i.upstream_error]))).toBe('SUCCEEDED');
    for (const o of task.result.items) {
      expect(o.status).toBe('imported');
      expect(o.verification.ok).toBe(true);
    }
    // The first dashboard reused the dataset already on the table; the second found it by uuid.
    expect(task.result.items[0].collisions).toEqual([expect.objectContaining({ kind: 'dataset' })]);
    expect(target.datasets.filter((d) => d.table_name === 'sales')).toHaveLength(1);
    const uuidFilters = target.requests.slice(mark).filter((r) => JSON.stringify(r.q ?? '').includes('"col":"uuid"'));
    expect(uuidFilters).toEqual([]);
    // Uuids of existing datasets came from dataset exports; the target's index was built once for the task.
    expect(target.count('/api/v1/dataset/export/', mark)).toBeGreaterThan(0);
    expect(target.count('/api/v1/database/', mark)).toBe(1);
    // Charts were listed in full once for the task; any later read asks only for what is new (ids above
    // the highest known), and only when a later dashboard holds a chart an earlier import wrote (none here).
    // (The verification's list of each dashboard's charts, filtered by dashboard, and its checks' read of the imported
    // charts' uuids by id, are not the index's.)
    const chartLists = target.requests
      .slice(mark)
      .filter(
        (r) =>
          r.path === '/api/v1/chart/' &&
          JSON.stringify(r.q).includes('"columns"') &&
          !JSON.stringify(r.q).includes('"col":"dashboards"') &&
          !JSON.stringify(r.q).includes('"opr":"in"'),
      );
    expect(chartLists).toHaveLength(1);
    expect(JSON.stringify(chartLists[0].q)).not.toContain('"opr":"gt"');

    const again = await migrate(ids);
    expect(again.status).toBe('SUCCEEDED');
    expect(target.dashboards.filter((d) => d.dashboard_title.startsWith('Old'))).toHaveLength(2);
    for (const o of again.result.items) {
      expect(o.objects.map((x: any) => [x.kind, x.action])).toEqual([
        ['dashboard', 'unchanged'],
        ['chart', 'unchanged'],
        ['dataset', 'reuse'],
        ['database', 'reuse'],
      ]);
    }
  });

  it('fills a field the importer requires and the source does not export with its default, and reports it per object', async () => {
    const d = source.addDashboard({ title: 'Old 3', slug: 'old-3' });
    source.addChart({ name: 'Old rows 3', dataset: source.datasets[0].id, dashboards: [d.id] });
    const chartFile = (files: Record<string, Record<string, unknown>>) =>
      Object.keys(files).find((p) => p.startsWith('charts/') && files[p].slice_name === 'Old rows 3');
    target.failImport({
      when: (files) => {
        const f = chartFile(files as never);
        return !!f && !('cache_timeout' in (files as never as Record<string, Record<string, unknown>>)[f]);
      },
      status: 422,
      body: {
        errors: [
          {
            message: 'Error importing dashboard',
            error_type: 'GENERIC_COMMAND_ERROR',
            level: 'warning',
            extra: { [`charts/Old_rows_3_${source.charts.at(-1)!.id}.yaml`]: { cache_timeout: ['Missing data for required field.'] } },
          },
        ],
      },
    });
    // The source does not export the field, as an older release would not.
    source.omitFromExports(['cache_timeout']);
    try {
      const task = await migrate([d.id]);
      expect(task.status, JSON.stringify(task.result?.items)).toBe('SUCCEEDED');
      const o = task.result.items[0];
      const example = {
        file: `charts/Old_rows_3_${source.charts.at(-1)!.id}.yaml`,
        object: 'chart "Old rows 3"',
        field: 'cache_timeout',
        value: null,
      };
      expect(o.defaulted_fields).toEqual([{ kind: 'chart', field: 'cache_timeout', count: 1, value: null, examples: [example] }]);
      expect(o.import_attempts).toBe(2);
      const report = (await admin('GET', `/api/reports/${task.id}`)).body.report;
      expect(JSON.stringify(report.diagnostics)).toContain('set to its defaults');
      // One line per field, counted over its objects, with an example.
      expect(JSON.stringify(report.diagnostics)).toContain(
        'field `cache_timeout` of charts set on 1 chart (e.g. chart \\"Old rows 3\\") = null',
      );
    } finally {
      target.clearFailures();
      source.omitFromExports([]);
    }
  });
});
