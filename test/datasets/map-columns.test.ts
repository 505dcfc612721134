// Column mapping against real Superset instances: 6.1.0 and 6.0.0 with SQLite metadata, and 6.1.0
// with PostgreSQL metadata (writes proven on both backends). From a SQL Lab query (dry run, then
// the reviewed plan applied), from an uploaded workbook, from the catalog's column comments; the
// dataset's other columns, metrics and fields unchanged after each write; undo; the conflict when
// the dataset changed since the reviewed dry run; every 400/404 of the spec.
import { randomBytes } from 'node:crypto';
import knexFactory from 'knex';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DatasetChangeStore } from '../../db/datasets/changes.ts';
import { writeDataset } from '../../domain/datasets/safe-write.ts';
import { withDatabase } from '../../lib/embedded/postgres.ts';
import {
  comparable,
  createCuratedDataset,
  DICTIONARY,
  dictionaryWorkbook,
  editDataset,
  expectedAfter,
  HUMAN,
  readDataset,
  type CuratedDataset,
} from '../support/datasets.ts';
import { createEnvironment, createUserWithRoles, superset, supersets, uniquePrefix, UNKNOWN_ENV } from '../support/environments.ts';
import { createHarness, type Harness } from '../support/harness.ts';
import { createDatabase, createDataset, login, type SupersetClient } from '../support/superset/fixtures.ts';

const S = supersets();
if (!S) console.warn('test/datasets/map-columns.test.ts skipped: no real Superset (SWITCHYARD_TEST_SUPERSET=off)');

const DICTIONARY_SQL = 'SELECT column_name, verbose_name, description FROM column_dictionary';

describe.runIf(S)('map-columns against real Superset', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await createHarness({ worker: true });
  });
  afterAll(async () => {
    await h?.close();
  });

  const post = (body: unknown, token = h.adminToken) => h.request('POST', '/api/datasets/map-columns', { token, json: body });
  const run = async (body: unknown) => {
    const r = await post(body);
    expect(r.status, r.text).toBe(202);
    return h.waitForTask(r.body.task_id);
  };

  describe.each(['a', 'c', 'd'] as const)('Superset %s', (name) => {
    let client: SupersetClient;
    let envId: string;
    let ds: CuratedDataset;

    beforeAll(async () => {
      const inst = superset(name);
      client = await login(inst.baseUrl, inst.username, inst.password);
      envId = await createEnvironment(h, { baseUrl: inst.baseUrl, username: inst.username, password: inst.password, timeoutSeconds: 60 });
      ds = await createCuratedDataset(client, { prefix: uniquePrefix(`mc${name}`), dataDir: inst.dataDir });
    });
    afterAll(() => client?.close());

    it(`maps from a SQL Lab query (${name}): the dry run writes nothing, the reviewed plan lands with nothing else moved, undo restores it`, async () => {
      const before = await readDataset(client, ds.id);
      const dry = await run({
        env_id: envId,
        dataset_ids: [ds.id],
        source_type: 'sqllab',
        database_id: ds.databaseId,
        sql: DICTIONARY_SQL,
        dry_run: true,
      });
      expect(dry.status, JSON.stringify(dry.error)).toBe('SUCCEEDED');
      const planned = dry.result.items[0];
      expect(planned).toMatchObject({
        kind: 'dataset',
        id: ds.id,
        title: ds.tableName,
        status: 'planned',
        outcome: 'planned',
        change_id: null,
      });
      expect(planned.changes.map((c: any) => [c.column_name, c.field, c.before, c.after])).toEqual([
        ['region', 'verbose_name', null, 'Region'],
        ['region', 'description', null, DICTIONARY[0]!.description],
        ['units', 'verbose_name', null, 'Units sold'],
        ['units', 'description', null, DICTIONARY[1]!.description],
        ['revenue', 'verbose_name', null, 'Revenue'],
      ]);
      // The description a person wrote is kept (overwrite is off), and reported.
      expect(planned.kept).toEqual([
        expect.objectContaining({
          column_name: 'revenue',
          field: 'description',
          before: HUMAN.revenueDescription,
          after: DICTIONARY[2]!.description,
        }),
      ]);
      expect(planned.unmatched).toEqual({ dictionary: ['discount'], dataset: ['ds', 'product'] });
      expect(dry.result.totals).toMatchObject({ requested: 1, planned: 1, fields_changed: 5 });
      expect(comparable(await readDataset(client, ds.id))).toEqual(comparable(before));
      // The dataset's dashboard sees the task in its history filter.
      expect(dry.dashboard_ids).toEqual([String(ds.dashboardId)]);

      const applied = await run({
        env_id: envId,
        dataset_ids: [ds.id],
        source_type: 'sqllab',
        database_id: ds.databaseId,
        sql: DICTIONARY_SQL,
        reviewed_task_id: dry.id,
      });
      expect(applied.status, JSON.stringify(applied.error)).toBe('SUCCEEDED');
      const item = applied.result.items[0];
      expect(item).toMatchObject({ status: 'updated', outcome: 'succeeded', unexpected: [] });
      expect(item.changes).toEqual(planned.changes);
      const after = await readDataset(client, ds.id);
      // Only the five intended fields moved: every other column, metric and dataset field is as it was.
      expect(comparable(after)).toEqual(
        expectedAfter(before, {
          region: { verbose_name: 'Region', description: DICTIONARY[0]!.description },
          units: { verbose_name: 'Units sold', description: DICTIONARY[1]!.description },
          revenue: { verbose_name: 'Revenue' },
        }),
      );
      expect(after.metrics.map((m: any) => m.metric_name).sort()).toEqual(['count', 'total_revenue']);
      expect(after.description).toBe(HUMAN.datasetDescription);

      const changes = await h.request('GET', `/api/datasets/${ds.id}/changes?env_id=${envId}`, { token: h.adminToken });
      expect(changes.status).toBe(200);
      expect(changes.body.items[0]).toMatchObject({
        id: item.change_id,
        source: 'map_columns',
        status: 'applied',
        task_id: applied.id,
        actor: { username: 'admin' },
        verify_problems: [],
      });
      expect(changes.body.items[0].fields).toHaveLength(5);

      const undo = await h.request('POST', `/api/datasets/changes/${item.change_id}/undo`, { token: h.adminToken, json: {} });
      expect(undo.status, undo.text).toBe(200);
      expect(undo.body.undone).toMatchObject({ id: item.change_id, status: 'undone', undone_by: 'admin' });
      expect(undo.body.undo).toMatchObject({ source: 'undo', status: 'applied', undo_of: item.change_id, verify_problems: [] });
      expect(comparable(await readDataset(client, ds.id))).toEqual(comparable(before));
      const again = await h.request('POST', `/api/datasets/changes/${item.change_id}/undo`, { token: h.adminToken, json: {} });
      expect(again.status).toBe(409);
      expect(again.body.code).toBe('not_undoable');
    });

    it(`maps from an uploaded workbook with overwrite (${name}); undo brings back what a person wrote`, async () => {
      const before = await readDataset(client, ds.id);
      const form = new FormData();
      form.set('env_id', envId);
      form.set('dataset_ids', String(ds.id));
      form.set('source_type', 'xlsx');
      form.set('overwrite', 'true');
      const rows = [
        {
          column_name: 'Revenue',
          verbose_name: 'Revenue (EUR)',
          description: 'Revenue in EUR from the workbook',
          table_name: ds.tableName,
        },
        { column_name: 'revenue', verbose_name: 'Generic', description: 'for any table', table_name: null },
        { column_name: 'units', verbose_name: 'Units', description: null, table_name: 'another_table' },
      ];
      form.set(
        'file',
        new Blob([await dictionaryWorkbook(rows, ['column_name', 'verbose_name', 'description', 'table_name'])]),
        'dictionary.xlsx',
      );
      const r = await h.request('POST', '/api/datasets/map-columns', { token: h.adminToken, multipart: form });
      expect(r.status, r.text).toBe(202);
      const task = await h.waitForTask(r.body.task_id);
      expect(task.status, JSON.stringify(task.error)).toBe('SUCCEEDED');
      expect(task.params).toMatchObject({ source_type: 'xlsx', overwrite: true, dataset_ids: [ds.id], upload_id: expect.any(String) });
      const item = task.result.items[0];
      expect(item.changes.map((c: any) => [c.column_name, c.field, c.before, c.after])).toEqual([
        ['revenue', 'verbose_name', null, 'Revenue (EUR)'],
        ['revenue', 'description', HUMAN.revenueDescription, 'Revenue in EUR from the workbook'],
      ]);
      expect(item.unmatched.dictionary).toEqual([]);
      expect(comparable(await readDataset(client, ds.id))).toEqual(
        expectedAfter(before, { revenue: { verbose_name: 'Revenue (EUR)', description: 'Revenue in EUR from the workbook' } }),
      );

      // The same upload again, as JSON: nothing left to change.
      const rerun = await run({
        env_id: envId,
        dataset_ids: [ds.id],
        source_type: 'xlsx',
        upload_id: task.params.upload_id,
        overwrite: true,
      });
      expect(rerun.result.items[0]).toMatchObject({ status: 'unchanged', outcome: 'succeeded' });

      const undo = await h.request('POST', `/api/datasets/changes/${item.change_id}/undo`, { token: h.adminToken, json: {} });
      expect(undo.status, undo.text).toBe(200);
      const restored = await readDataset(client, ds.id);
      expect(restored.columns.find((c: any) => c.column_name === 'revenue').description).toBe(HUMAN.revenueDescription);
      expect(comparable(restored)).toEqual(comparable(before));
    });

    it(`reports the conflict when the dataset changed after the reviewed dry run (${name}), and writes nothing`, async () => {
      const dry = await run({
        env_id: envId,
        dataset_ids: [ds.id],
        source_type: 'sqllab',
        database_id: ds.databaseId,
        sql: DICTIONARY_SQL,
        dry_run: true,
      });
      expect(dry.result.items[0].status).toBe('planned');
      // A person edits the dataset in Superset meanwhile (a field the plan does not even touch).
      await editDataset(client, ds.id, ({ columns }) => {
        columns.find((c) => c.column_name === 'product')!.description = 'Edited in Superset after the dry run';
      });
      const edited = await readDataset(client, ds.id);
      const changesBefore = (await h.request('GET', `/api/datasets/${ds.id}/changes?env_id=${envId}`, { token: h.adminToken })).body.total;

      const applied = await run({
        env_id: envId,
        dataset_ids: [ds.id],
        source_type: 'sqllab',
        database_id: ds.databaseId,
        sql: DICTIONARY_SQL,
        reviewed_task_id: dry.id,
      });
      expect(applied.status).toBe('FAILED');
      expect(applied.result.items[0]).toMatchObject({ status: 'conflict', outcome: 'skipped', step: 'review', change_id: null });
      expect(applied.result.items[0].error).toMatch(/changed in Superset after the dry run/);
      expect(applied.result.items[0].next_actions.map((a: any) => a.action)).toEqual(['review_again']);
      expect(comparable(await readDataset(client, ds.id))).toEqual(comparable(edited));
      expect((await h.request('GET', `/api/datasets/${ds.id}/changes?env_id=${envId}`, { token: h.adminToken })).body.total).toBe(
        changesBefore,
      );
    });
  });

  it('the writer refuses a dataset changed since it was read, and finishes a write an earlier attempt recorded but did not confirm', async () => {
    const inst = superset('d');
    const client = await login(inst.baseUrl, inst.username, inst.password);
    const store = new DatasetChangeStore(h.knex);
    const actor = { id: null, username: 'test' };
    try {
      const ds = await createCuratedDataset(client, { prefix: uniquePrefix('sw'), dataDir: inst.dataDir });
      const base = await client.getDataset(ds.id);
      await editDataset(client, ds.id, ({ metrics }) => {
        metrics.find((m) => m.metric_name === 'total_revenue')!.d3format = ',.0f';
      });
      const edited = await readDataset(client, ds.id);
      const edits = [{ target: 'column' as const, column_name: 'units', field: 'verbose_name' as const, value: 'Units' }];
      const stale = await writeDataset(client, store, { envId: 'sw', datasetId: ds.id, base, edits, source: 'map_columns', actor });
      expect(stale.status).toBe('conflict');
      expect(stale.status === 'conflict' && stale.differences).toEqual([`metric 'total_revenue' d3format: ",.2f" → ",.0f"`]);
      expect(comparable(await readDataset(client, ds.id))).toEqual(comparable(edited));

      // An attempt that wrote and died before confirming: the retry confirms instead of writing again.
      const fresh = await client.getDataset(ds.id);
      const first = await writeDataset(client, store, {
        envId: 'sw',
        datasetId: ds.id,
        base: fresh,
        edits,
        source: 'map_columns',
        idempotencyKey: 'sw:1',
        actor,
      });
      expect(first.status).toBe('applied');
      await h.knex('dataset_changes').where({ idempotency_key: 'sw:1' }).update({ status: 'pending', applied_at: null });
      const retried = await writeDataset(client, store, {
        envId: 'sw',
        datasetId: ds.id,
        base: fresh,
        edits,
        source: 'map_columns',
        idempotencyKey: 'sw:1',
        actor,
      });
      expect(retried.status).toBe('applied');
      expect(retried.status === 'applied' && retried.change.id).toBe(first.status === 'applied' && first.change.id);
      expect(await h.knex('dataset_changes').where({ env_id: 'sw' }).count<{ count: string }[]>({ count: '*' })).toEqual([{ count: '1' }]);
    } finally {
      client.close();
    }
  });

  it('reads column comments from the catalog of a PostgreSQL database by default; a dataset that does not exist fails alone', async () => {
    const inst = superset('a');
    const client = await login(inst.baseUrl, inst.username, inst.password);
    const envId = await createEnvironment(h, {
      baseUrl: inst.baseUrl,
      username: inst.username,
      password: inst.password,
      timeoutSeconds: 60,
    });
    const dbName = `cc_${randomBytes(4).toString('hex')}`;
    const adminUrl = inject('pgAdminUrl');
    const admin = knexFactory({ client: 'pg', connection: adminUrl, pool: { min: 0, max: 1 } });
    await admin.raw(`create database ${dbName}`);
    await admin.destroy();
    const dataUrl = withDatabase(adminUrl, dbName);
    const data = knexFactory({ client: 'pg', connection: dataUrl, pool: { min: 0, max: 1 } });
    try {
      const table = `orders_${randomBytes(3).toString('hex')}`;
      await data.raw(`create table public.${table} (id integer, amount numeric, placed_at date, note text)`);
      const db = await createDatabase(client, { name: dbName, sqlalchemyUri: dataUrl.replace(/^postgres(ql)?:/, 'postgresql:') });
      const dataset = await createDataset(client, { database: db.id, tableName: table, schema: 'public' });
      // Comments written after the dataset was created: Superset copies comments into descriptions only when it reads the table.
      await data.raw(`comment on column public.${table}.amount is 'Order amount in EUR, taxes included'`);
      await data.raw(`comment on column public.${table}.placed_at is 'Day the order was placed'`);
      expect((await readDataset(client, dataset.id)).columns.map((c: any) => c.description)).toEqual([null, null, null, null]);

      const task = await run({ env_id: envId, dataset_ids: [dataset.id, 987654], source_type: 'sqllab', database_id: db.id });
      expect(task.status).toBe('FAILED'); // one of two datasets does not exist
      const [ok, missing] = task.result.items;
      expect(ok).toMatchObject({ id: dataset.id, status: 'updated', outcome: 'succeeded' });
      expect(ok.changes.map((c: any) => [c.column_name, c.field, c.after])).toEqual([
        ['amount', 'description', 'Order amount in EUR, taxes included'],
        ['placed_at', 'description', 'Day the order was placed'],
      ]);
      expect(task.result.source).toEqual({ type: 'sqllab', database_id: db.id, default_query: true });
      expect(missing).toMatchObject({ id: 987654, status: 'failed', outcome: 'failed', step: 'read' });
      expect(missing.upstream_error.status).toBe(404);
      expect(missing.next_actions[0].request.path).toBe(`/api/datasets?env_id=${envId}`);
      const cols = (await readDataset(client, dataset.id)).columns;
      expect(cols.find((c: any) => c.column_name === 'amount').description).toBe('Order amount in EUR, taxes included');
      expect(cols.find((c: any) => c.column_name === 'note').description).toBeNull();

      // The report of the task names both outcomes and offers to retry the failed one.
      const report = await h.request('GET', `/api/reports/${task.id}`, { token: h.adminToken });
      expect(report.status).toBe(200);
      const retry = report.body.report.next_actions.find((a: any) => a.action === 'retry_failed');
      expect(retry.request).toMatchObject({
        method: 'POST',
        path: '/api/datasets/map-columns',
        body: { dataset_ids: [987654], source_type: 'sqllab' },
      });
    } finally {
      await data.destroy();
      client.close();
    }
  });

  it('fails a dataset with the reason where the engine keeps no column comments (SQLite), and a query the database refuses', async () => {
    const inst = superset('a');
    const client = await login(inst.baseUrl, inst.username, inst.password);
    try {
      const envId = await createEnvironment(h, {
        baseUrl: inst.baseUrl,
        username: inst.username,
        password: inst.password,
        timeoutSeconds: 60,
      });
      const ds = await createCuratedDataset(client, { prefix: uniquePrefix('mcsq'), dataDir: inst.dataDir });
      const t = await run({ env_id: envId, dataset_ids: [ds.id], source_type: 'sqllab', database_id: ds.databaseId });
      expect(t.result.items[0]).toMatchObject({ status: 'failed', step: 'dictionary' });
      expect(t.result.items[0].error).toMatch(/keeps no column comments/);
      expect(t.result.items[0].next_actions[0].action).toBe('send_query');

      const bad = await run({
        env_id: envId,
        dataset_ids: [ds.id],
        source_type: 'sqllab',
        database_id: ds.databaseId,
        sql: 'SELECT column_name FROM no_such_table',
      });
      expect(bad.status).toBe('FAILED');
      expect(bad.result.items[0]).toMatchObject({ status: 'failed', step: 'dictionary' });
      expect(bad.result.items[0].upstream_error).toMatchObject({
        status: 500,
        type: 'GENERIC_DB_ENGINE_ERROR',
        message: expect.stringMatching(/no such table/),
      });
      // The database refused the query: asked once, not retried as an outage.
      const logs = await h.request('GET', `/api/tasks/${bad.id}/logs?limit=1000`, { token: h.adminToken });
      const started = logs.body.items.filter((l: any) => l.source === 'temporal' && /activity prepareDictionary started/.test(l.message));
      expect(started.map((l: any) => l.message)).toEqual([expect.stringMatching(/started, attempt 1 on/)]);
    } finally {
      client.close();
    }
  });

  it('answers 400, 403 and 404 as the spec lists, before creating anything', async () => {
    const inst = superset('a');
    const envId = await createEnvironment(h, { baseUrl: inst.baseUrl, username: inst.username, password: inst.password });
    const countTasks = async () => (await h.knex('tasks').count<{ count: string }[]>({ count: '*' }))[0]!.count;
    const tasksBefore = await countTasks();
    const base = { env_id: envId, dataset_ids: [1], source_type: 'sqllab', database_id: 1 };
    // The reviewed-task case must get past the other-database check to reach its 404: a dataset of
    // this test's own on its own database (instance a is shared, so no id of another file's is assumed).
    const a = await login(inst.baseUrl, inst.username, inst.password);
    const own = await createCuratedDataset(a, { prefix: uniquePrefix('mcv'), dataDir: inst.dataDir }).finally(() => a.close());
    const cases: Array<[unknown, number, RegExp]> = [
      [{ ...base, source_type: 'csv' }, 400, /source_type must be sqllab or xlsx/],
      [{ ...base, dataset_ids: [] }, 400, /dataset_ids must not be empty/],
      [{ ...base, database_id: undefined }, 400, /database_id is required when source_type is sqllab/],
      [{ ...base, sql: 'DELETE FROM column_dictionary' }, 400, /SELECT/],
      [{ ...base, sql: 'SELECT 1; DROP TABLE x' }, 400, /single statement/],
      [{ env_id: envId, dataset_ids: [1], source_type: 'xlsx' }, 400, /multipart/],
      [{ env_id: envId, dataset_ids: [1], source_type: 'xlsx', upload_id: '00000000-0000-4000-8000-000000000001' }, 404, /Upload/],
      [{ ...base, env_id: UNKNOWN_ENV }, 404, /Environment/],
      [{ ...base, env_id: 'not-a-uuid' }, 404, /Environment/],
      [{ ...base, dataset_ids: [own.id], database_id: own.databaseId, reviewed_task_id: 'selfcheck-nope' }, 404, /not found/],
    ];
    for (const [body, status, message] of cases) {
      const r = await post(body);
      expect(r.status, `${JSON.stringify(body)} → ${r.text}`).toBe(status);
      expect(r.headers.get('content-type')).toMatch(/application\/problem\+json/);
      expect(r.body.detail).toMatch(message);
    }
    // A workbook that is not one, and one above the size limit.
    const form = (file: Blob) => {
      const f = new FormData();
      f.set('env_id', envId);
      f.set('dataset_ids', '1,2');
      f.set('source_type', 'xlsx');
      f.set('file', file, 'd.xlsx');
      return f;
    };
    const notXlsx = await h.request('POST', '/api/datasets/map-columns', {
      token: h.adminToken,
      multipart: form(new Blob(['column_name,description'])),
    });
    expect(notXlsx.status, notXlsx.text).toBe(400);
    expect(notXlsx.body.errors[0].field).toBe('body.file');
    const huge = await h.request('POST', '/api/datasets/map-columns', {
      token: h.adminToken,
      multipart: form(new Blob([new Uint8Array(6 * 1024 * 1024)])),
    });
    expect(huge.status, huge.text).toBe(413);
    const noSheet = new FormData();
    noSheet.set('env_id', envId);
    noSheet.set('dataset_ids', '1');
    noSheet.set('source_type', 'sqllab');
    expect((await h.request('POST', '/api/datasets/map-columns', { token: h.adminToken, multipart: noSheet })).status).toBe(400);

    // generate-docs: 400 for an empty list, 404 for an unknown environment or provider.
    const docs = (body: unknown, token = h.adminToken) => h.request('POST', '/api/datasets/generate-docs', { token, json: body });
    expect((await docs({ env_id: envId, dataset_ids: [], llm_provider: 'default' })).status).toBe(400);
    expect((await docs({ env_id: UNKNOWN_ENV, dataset_ids: [1], llm_provider: 'default' })).status).toBe(404);
    const noProvider = await docs({ env_id: envId, dataset_ids: [1], llm_provider: '00000000-0000-4000-8000-000000000002' });
    expect(noProvider.status).toBe(404);
    expect(noProvider.body.detail).toMatch(/LLM provider/);
    expect((await docs({ env_id: envId, dataset_ids: [1], llm_provider: 'default' })).status).toBe(404); // LLM_* not configured here

    // Viewers may read but not start dataset tasks.
    const viewer = await createUserWithRoles(h, uniquePrefix('viewer'), ['Viewer']);
    expect((await post(base, viewer.token)).status).toBe(403);
    expect((await docs({ env_id: envId, dataset_ids: [1], llm_provider: 'default' }, viewer.token)).status).toBe(403);
    expect(await countTasks()).toBe(tasksBefore);
  });
});
