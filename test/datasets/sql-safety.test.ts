// SQL through SQL Lab runs only within the caller's rights, against real Superset `a` (6.1.0) and a
// SQLite database whose connection ALLOWS DML, so a query that slipped through would really delete:
// the reproduced attack (an Operator's dictionary query `SELECT 'a--' AS column_name; DELETE FROM
// sales`, which the old hand-written check answered 202 and which emptied the table) is a 400 and
// the table keeps its rows; a legitimate dictionary query still works; a dataset of another
// database is refused (an unknown one fails alone, as for any source, but not all of them); the rows a caller's query returned are shown to its owner and admins, not to
// another reader holding tasks:READ (result, error, logs, text search, report), who cannot apply
// that dry run nor reuse its stored rows as an upload.
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DictionaryStore } from '../../db/datasets/dictionaries.ts';
import { createCuratedDataset, type CuratedDataset } from '../support/datasets.ts';
import { createEnvironment, createUserWithRoles, superset, supersets, uniquePrefix } from '../support/environments.ts';
import { createHarness, type Harness } from '../support/harness.ts';
import { login, type SupersetClient } from '../support/superset/fixtures.ts';

const S = supersets();
if (!S) console.warn('test/datasets/sql-safety.test.ts skipped: no real Superset (SWITCHYARD_TEST_SUPERSET=off)');

const DICTIONARY_SQL = 'SELECT column_name, verbose_name, description FROM column_dictionary';
const SECRET = 'top-secret-4711';

describe.runIf(S)("SQL through SQL Lab runs only within the caller's rights (real Superset a)", () => {
  let h: Harness;
  let client: SupersetClient;
  let envId: string;
  let ds: CuratedDataset;
  let other: CuratedDataset;
  let dataFile: string;
  let operator: { id: string; token: string };
  let viewer: { id: string; token: string };

  beforeAll(async () => {
    h = await createHarness({ worker: true });
    const inst = superset('a');
    client = await login(inst.baseUrl, inst.username, inst.password);
    envId = await createEnvironment(h, { baseUrl: inst.baseUrl, username: inst.username, password: inst.password, timeoutSeconds: 60 });
    const prefix = uniquePrefix('sqlsafe');
    dataFile = join(inst.dataDir, 'fixture-data', `${prefix}.sqlite`);
    ds = await createCuratedDataset(client, { prefix, dataDir: inst.dataDir });
    other = await createCuratedDataset(client, { prefix: uniquePrefix('sqlother'), dataDir: inst.dataDir });
    operator = await createUserWithRoles(h, uniquePrefix('operator'), ['Operator']);
    viewer = await createUserWithRoles(h, uniquePrefix('viewer'), ['Viewer']);
  });
  afterAll(async () => {
    client?.close();
    await h?.close();
  });

  const post = (body: Record<string, unknown>, token: string) =>
    h.request('POST', '/api/datasets/map-columns', {
      token,
      json: { env_id: envId, dataset_ids: [ds.id], source_type: 'sqllab', database_id: ds.databaseId, dry_run: true, ...body },
    });
  const rowsLeft = () => {
    const db = new DatabaseSync(dataFile, { readOnly: true });
    try {
      return (db.prepare(`SELECT COUNT(*) AS n FROM "${ds.tableName}"`).get() as { n: number }).n;
    } finally {
      db.close();
    }
  };

  it('refuses the reproduced attack with 400 before anything runs, and the table keeps its rows', async () => {
    // The connection really allows DML: a query that reached SQL Lab would delete.
    const database = await client.request<{ result: { allow_dml: boolean; backend: string } }>('GET', `/api/v1/database/${ds.databaseId}`);
    expect(database.result).toMatchObject({ allow_dml: true, backend: 'sqlite' });
    expect(rowsLeft()).toBe(12);

    const attacks = [
      `SELECT 'a--' AS column_name; DELETE FROM ${ds.tableName}`,
      `SELECT 'x\\'; DELETE FROM ${ds.tableName}; -- ' AS column_name`,
      `SELECT '{{ "%c; DELETE FROM ${ds.tableName}; --" % 39 }}' AS column_name`,
      `WITH gone AS (DELETE FROM ${ds.tableName} RETURNING *) SELECT 'a' AS column_name FROM gone`,
      `SELECT load_extension('/tmp/none.so') AS column_name`,
    ];
    const answers = [];
    for (const sql of attacks) {
      const r = await post({ sql }, operator.token);
      // The old check answered 202 here: let such a task run, so the rows below tell what it did.
      if (r.status === 202) await h.waitForTask(r.body.task_id);
      answers.push({ sql, status: r.status, detail: r.body?.detail as string });
    }
    expect(rowsLeft(), 'a refused query must not have run').toBe(12);
    for (const a of answers) expect(a.status, `${a.sql}: ${a.detail}`).toBe(400);
    expect(answers[0]!.detail).toMatch(/single statement; SQLite reads 2/);
    expect(answers[2]!.detail).toMatch(/Jinja/);
    expect(answers[4]!.detail).toMatch(/load_extension/);
  });

  it('refuses a dataset of another database, and an unknown database, before anything runs', async () => {
    const mixed = await post({ dataset_ids: [ds.id, other.id], sql: DICTIONARY_SQL }, operator.token);
    expect(mixed.status, mixed.text).toBe(400);
    expect(mixed.body.detail).toContain(`dataset ${other.id} belongs to database ${other.databaseId}`);
    const unknown = await post({ database_id: 999_999, sql: DICTIONARY_SQL }, operator.token);
    expect(unknown.status, unknown.text).toBe(404);
    expect(unknown.body.detail).toMatch(/Database 999999/);
    // No dataset of the database at all (only unknown ones): nothing for the query to run for.
    const none = await post({ dataset_ids: [987_654], sql: DICTIONARY_SQL }, operator.token);
    expect(none.status, none.text).toBe(404);
  });

  it("a legitimate dictionary query still works; its rows are the owner's and the admins' to see", async () => {
    const r = await post({ sql: DICTIONARY_SQL }, operator.token);
    expect(r.status, r.text).toBe(202);
    const done = await h.waitForTask(r.body.task_id);
    expect(done.status, JSON.stringify(done.error)).toBe('SUCCEEDED');

    const as = async (token: string) => (await h.request('GET', `/api/tasks/${done.id}`, { token })).body;
    const mine = await as(operator.token);
    expect(mine.result.items[0].changes).toHaveLength(5);
    expect(mine.result.items[0].unmatched).toEqual({ dictionary: ['discount'], dataset: ['ds', 'product'] });
    expect(mine.result.rows_hidden).toBeUndefined();
    expect((await as(h.adminToken)).result.items[0].changes).toHaveLength(5);

    const theirs = await as(viewer.token);
    expect(theirs.result.rows_hidden).toMatchObject({ visible_to: 'the task owner and admins' });
    expect(theirs.result.items[0]).toMatchObject({
      id: ds.id,
      status: 'planned',
      changes: [],
      kept: [],
      unmatched: { dictionary: [], dataset: [] },
    });
    expect(theirs.result.totals).toMatchObject({ planned: 1, fields_changed: 5 });
    expect(theirs.params.sql).toBe(DICTIONARY_SQL);
    expect(JSON.stringify(theirs)).not.toContain('Units sold');

    // Nor can another person apply that plan (it would write the rows where they can read them).
    const colleague = await createUserWithRoles(h, uniquePrefix('operator2'), ['Operator']);
    const apply = await h.request('POST', '/api/datasets/map-columns', {
      token: colleague.token,
      json: { env_id: envId, dataset_ids: [ds.id], source_type: 'sqllab', database_id: ds.databaseId, reviewed_task_id: done.id },
    });
    expect(apply.status, apply.text).toBe(403);
    // Nor use the rows the task stored as if they were an uploaded workbook.
    const stored = await new DictionaryStore(h.knex).forTask(done.id);
    expect(stored?.row_count).toBe(4);
    const reuse = await h.request('POST', '/api/datasets/map-columns', {
      token: colleague.token,
      json: { env_id: envId, dataset_ids: [ds.id], source_type: 'xlsx', upload_id: stored!.id, dry_run: true },
    });
    expect(reuse.status, reuse.text).toBe(404);
  });

  it("what the database or the dictionary check says about a query's rows is hidden from other readers: result, error, logs, search, report", async () => {
    // The secret is in the database, not in the query's text (the query itself stays visible in params).
    const file = new DatabaseSync(dataFile);
    file.exec(`CREATE TABLE IF NOT EXISTS secrets (v TEXT); DELETE FROM secrets; INSERT INTO secrets VALUES ('${SECRET}')`);
    file.close();
    const sql = "SELECT v AS column_name, 'x' AS description FROM secrets UNION ALL SELECT v, 'y' FROM secrets";
    const r = await post({ sql }, operator.token);
    expect(r.status, r.text).toBe(202);
    const done = await h.waitForTask(r.body.task_id);
    expect(done.status).toBe('FAILED');

    const read = async (token: string) => {
      const task = await h.request('GET', `/api/tasks/${done.id}`, { token });
      const logs = await h.request('GET', `/api/tasks/${done.id}/logs?limit=1000`, { token });
      const search = await h.request('GET', `/api/tasks/${done.id}/logs?text=${SECRET}`, { token });
      const report = await h.request('GET', `/api/reports/${done.id}`, { token });
      const list = await h.request('GET', `/api/tasks?task_type=map_columns&page_size=100`, { token });
      for (const x of [task, logs, search, report, list]) expect(x.status, x.text).toBe(200);
      return { task: task.body, logs: logs.body, search: search.body, report: report.body, list: list.body };
    };
    const mine = await read(operator.token);
    expect(JSON.stringify(mine.task)).toContain(SECRET);
    expect(JSON.stringify(mine.logs)).toContain(SECRET);
    expect(mine.search.items.length).toBeGreaterThan(0);

    const theirs = await read(viewer.token);
    for (const [what, body] of Object.entries(theirs)) expect(JSON.stringify(body), what).not.toContain(SECRET);
    expect(theirs.search.items).toEqual([]);
    expect(theirs.task.status).toBe('FAILED');
    expect(theirs.task.result.items[0]).toMatchObject({ id: ds.id, status: 'failed', step: 'dictionary' });
    expect(theirs.logs.items.some((l: any) => l.level === 'ERROR' && /owner and admins/.test(l.message))).toBe(true);
  });
});
