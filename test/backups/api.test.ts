import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pruneBackups, recordBackup } from '../../db/backups/store.ts';
import { DirectoryBackupStore } from '../../lib/backup-store/index.ts';
import { createHarness, type Harness } from '../support/harness.ts';

// Backups, restores, dashboard task history and reports: the API contract and the index
// bookkeeping, on the real API, PostgreSQL and Temporal (no Superset needed here; the round trip
// through a real Superset is in backup-superset.test.ts).

let h: Harness;
let admin: Harness['request'];
let envId: string;
let otherEnvId: string;
let viewer: string;
beforeAll(async () => {
  h = await createHarness();
  admin = (m, p, o = {}) => h.request(m, p, { ...o, token: h.adminToken });
  [envId, otherEnvId] = await Promise.all(
    ['prod', 'staging'].map(async (name) => {
      const [row] = await h
        .knex('environments')
        .insert({ name, base_url: `http://${name}.invalid`, username: 'svc', password_encrypted: 'v1:x:y:z' })
        .returning('id');
      return row.id as string;
    }),
  );
  const created = await admin('POST', '/api/admin/users', {
    json: { username: 'viewer2', password: 'viewer-password-2', roles: ['Viewer'] },
  });
  expect(created.status).toBe(201);
  viewer = await h.login('viewer2', 'viewer-password-2');
});
afterAll(async () => h?.close());

async function insertTask(fields: Record<string, unknown>): Promise<string> {
  const id = (fields.id as string) ?? `${fields.type}-${randomUUID()}`;
  await h.knex('tasks').insert({
    id,
    status: 'SUCCEEDED',
    workflow_type: 'x',
    workflow_input: JSON.stringify(null),
    params: JSON.stringify(fields.params ?? {}),
    ...fields,
    ...(fields.result !== undefined ? { result: JSON.stringify(fields.result) } : {}),
    ...(fields.error !== undefined ? { error: JSON.stringify(fields.error) } : {}),
    ...(fields.params !== undefined ? { params: JSON.stringify(fields.params) } : {}),
  });
  return id;
}

describe('POST /api/dashboards/backup', () => {
  it('creates one backup task with env_ids and dashboard_ids set (202, task_id)', async () => {
    const r = await admin('POST', '/api/dashboards/backup', { json: { env_id: envId, dashboard_ids: [3, 1, 3] } });
    expect(r.status, r.text).toBe(202);
    expect(r.body.task_id).toMatch(/^backup-/);
    expect(r.headers.get('location')).toBe(`/api/tasks/${r.body.task_id}`);
    const task = await h.knex('tasks').where({ id: r.body.task_id }).first();
    expect(task).toMatchObject({ type: 'backup', workflow_type: 'backupWorkflow', env_ids: [envId], dashboard_ids: ['3', '1'] });
    expect(task.workflow_input).toEqual({ envId, dashboardIds: [3, 1] });
  });

  it('answers 404 for an unknown environment and creates nothing', async () => {
    const before = await h.knex('tasks').count({ n: '*' });
    for (const env of [randomUUID(), 'no-such-env']) {
      const r = await admin('POST', '/api/dashboards/backup', { json: { env_id: env, dashboard_ids: [1] } });
      expect(r.status).toBe(404);
      expect(r.body.code).toBe('not_found');
      expect(r.body.detail).toContain(env);
    }
    expect(await h.knex('tasks').count({ n: '*' })).toEqual(before);
  });

  it.each([
    [{ env_id: 'x', dashboard_ids: [] }, 'body.dashboard_ids'],
    [{ dashboard_ids: [1] }, 'body.env_id'],
    [{ env_id: 'x' }, 'body.dashboard_ids'],
    [{ env_id: 'x', dashboard_ids: 'all' }, 'body.dashboard_ids'],
    [{ env_id: 'x', dashboard_ids: [0] }, 'body.dashboard_ids.0'],
    [{ env_id: 'x', dashboard_ids: [1.5] }, 'body.dashboard_ids.0'],
    [{ env_id: 'x', dashboard_ids: ['a'] }, 'body.dashboard_ids.0'],
    [{ env_id: 'x', dashboard_ids: [1], extra: true }, 'body'],
  ])('rejects %j with 400 naming %s', async (body, field) => {
    const r = await admin('POST', '/api/dashboards/backup', { json: body });
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('validation_failed');
    expect(r.body.errors.map((e: any) => e.field)).toContain(field);
  });

  it('needs dashboards:BACKUP (a Viewer gets 403) and authentication (401)', async () => {
    expect((await h.request('POST', '/api/dashboards/backup', { json: { env_id: envId, dashboard_ids: [1] } })).status).toBe(401);
    const r = await h.request('POST', '/api/dashboards/backup', { json: { env_id: envId, dashboard_ids: [1] }, token: viewer });
    expect(r.status).toBe(403);
  });

  it('returns the same task for a repeated Idempotency-Key', async () => {
    const a = await admin('POST', '/api/dashboards/backup', {
      json: { env_id: envId, dashboard_ids: [9] },
      headers: { 'idempotency-key': 'nightly-1' },
    });
    const b = await admin('POST', '/api/dashboards/backup', {
      json: { env_id: envId, dashboard_ids: [9] },
      headers: { 'idempotency-key': 'nightly-1' },
    });
    expect(a.status).toBe(202);
    expect(b.status).toBe(200);
    expect(b.body.task_id).toBe(a.body.task_id);
  });
});

describe('backup index: dedup, idempotency, retention', () => {
  const dir = () => new DirectoryBackupStore(`${h.config.SWITCHYARD_DATA_DIR}/retention-test`);
  const content = (n: number) => {
    const bytes = new Uint8Array(randomBytes(256 + n));
    return { bytes, hash: createHash('sha256').update(bytes).digest('hex') };
  };
  const newBackup = (taskId: string, dashboardId: number, c: { bytes: Uint8Array; hash: string }, env = envId) => ({
    taskId,
    envId: env,
    dashboardId,
    dashboardUuid: randomUUID(),
    title: `Dashboard ${dashboardId}`,
    slug: null,
    contentHash: c.hash,
    chartCount: 2,
    bytes: c.bytes,
  });
  const blobs = async (store: DirectoryBackupStore) => {
    const out: string[] = [];
    for await (const hsh of store.list()) out.push(hsh);
    return out.sort();
  };

  it('stores unchanged content once, and a retried record returns the same row', async () => {
    const store = dir();
    const c = content(1);
    const t1 = await insertTask({ type: 'backup' });
    const t2 = await insertTask({ type: 'backup' });
    const first = await recordBackup(h.knex, store, newBackup(t1, 500, c));
    const retried = await recordBackup(h.knex, store, newBackup(t1, 500, c));
    const second = await recordBackup(h.knex, store, newBackup(t2, 500, c));
    expect(first.created).toBe(true);
    expect(first.row.deduplicated).toBe(false);
    expect(retried).toEqual({ row: first.row, created: false });
    expect(second.row.deduplicated).toBe(true);
    expect(second.row.content_hash).toBe(first.row.content_hash);
    expect(await h.knex('backups').where({ dashboard_id: 500 })).toHaveLength(2);
    expect(await blobs(store)).toEqual([c.hash]);
    // Concurrent retries of one (task, dashboard) still give one row.
    const t3 = await insertTask({ type: 'backup' });
    const racing = await Promise.all(Array.from({ length: 5 }, () => recordBackup(h.knex, store, newBackup(t3, 500, c))));
    expect(new Set(racing.map((r) => r.row.id)).size).toBe(1);
    expect(await h.knex('backups').where({ dashboard_id: 500, task_id: t3 })).toHaveLength(1);
  });

  it('keeps the newest N per dashboard and deletes a blob with the last row that used it', async () => {
    const store = dir();
    const shared = content(2);
    const ids: string[] = [];
    // dashboard 600: five backups, the first and the fourth with the same content as dashboard 601's.
    for (const [i, c] of [shared, content(3), content(4), shared, content(5)].entries()) {
      const t = await insertTask({ type: 'backup' });
      const { row } = await recordBackup(h.knex, store, newBackup(t, 600, c));
      await h
        .knex('backups')
        .where({ id: row.id })
        .update({ created_at: new Date(Date.UTC(2026, 0, 1 + i)) });
      ids.push(row.id);
    }
    const t = await insertTask({ type: 'backup' });
    await recordBackup(h.knex, store, newBackup(t, 601, shared));
    const before = await blobs(store);

    const { pruned } = await pruneBackups(h.knex, store, { envId, dashboardIds: [600, 601] }, { keep: 2 });
    expect(pruned.map((p) => p.id).sort()).toEqual(ids.slice(0, 3).sort());
    const left = await h.knex('backups').where({ dashboard_id: 600 }).orderBy('created_at');
    expect(left.map((r) => r.id)).toEqual(ids.slice(3));
    // content(3) and content(4) are gone; the shared one is still used by 600's fourth and by 601.
    const after = await blobs(store);
    expect(before.length - after.length).toBe(2);
    expect(after).toContain(shared.hash);
    expect(pruned.filter((p) => p.blob_deleted)).toHaveLength(2);
    // Pruning again changes nothing.
    expect((await pruneBackups(h.knex, store, { envId, dashboardIds: [600, 601] }, { keep: 2 })).pruned).toEqual([]);
  });

  it('prunes by age but always keeps the newest backup of a dashboard', async () => {
    const store = dir();
    const ids: string[] = [];
    for (const daysAgo of [40, 35, 31]) {
      const t = await insertTask({ type: 'backup' });
      const { row } = await recordBackup(h.knex, store, newBackup(t, 700, content(daysAgo)));
      await h
        .knex('backups')
        .where({ id: row.id })
        .update({ created_at: h.knex.raw(`now() - interval '${daysAgo} days'`) });
      ids.push(row.id);
    }
    const { pruned } = await pruneBackups(h.knex, store, { envId, dashboardIds: [700] }, { keep: 10, maxAgeDays: 30 });
    expect(pruned.map((p) => p.id).sort()).toEqual(ids.slice(0, 2).sort());
    expect((await h.knex('backups').where({ dashboard_id: 700 })).map((r) => r.id)).toEqual([ids[2]]);
  });

  it('only touches the given environment and dashboards', async () => {
    const store = dir();
    for (let i = 0; i < 3; i++) {
      const t = await insertTask({ type: 'backup' });
      await recordBackup(h.knex, store, newBackup(t, 800, content(100 + i), otherEnvId));
    }
    expect((await pruneBackups(h.knex, store, { envId, dashboardIds: [800] }, { keep: 1 })).pruned).toEqual([]);
    expect((await pruneBackups(h.knex, store, { envId: otherEnvId, dashboardIds: [801] }, { keep: 1 })).pruned).toEqual([]);
    expect((await pruneBackups(h.knex, store, { envId: otherEnvId, dashboardIds: [800] }, { keep: 1 })).pruned).toHaveLength(2);
  });
});

describe('listing and restoring backups', () => {
  let backupIds: string[];
  beforeAll(async () => {
    const store = new DirectoryBackupStore(h.config.BACKUP_DIR!);
    backupIds = [];
    const sameInstant = new Date('2026-03-01T12:00:00Z');
    for (let i = 0; i < 4; i++) {
      const t = await insertTask({ type: 'backup' });
      const bytes = new Uint8Array(randomBytes(100));
      const { row } = await recordBackup(h.knex, store, {
        taskId: t,
        envId,
        dashboardId: 42,
        dashboardUuid: randomUUID(),
        title: 'Sales',
        slug: 'sales',
        contentHash: createHash('sha256').update(bytes).digest('hex'),
        chartCount: 3,
        bytes,
      });
      await h
        .knex('backups')
        .where({ id: row.id })
        .update({ created_at: i < 2 ? sameInstant : new Date(Date.UTC(2026, 2, 2 + i)) });
      backupIds.push(row.id);
    }
  });

  it('lists a dashboard backups newest first with stable pages', async () => {
    const all = await admin('GET', `/api/dashboards/42/backups?env_id=${envId}&page_size=100`);
    expect(all.status, all.text).toBe(200);
    expect(all.body.total).toBe(4);
    expect(all.body.items[0]).toMatchObject({
      dashboard_id: 42,
      env_id: envId,
      dashboard_title: 'Sales',
      chart_count: 3,
      store_kind: 'dir',
      deduplicated: false,
    });
    expect(all.body.items[0].restore).toEqual({ method: 'POST', path: `/api/dashboards/backups/${all.body.items[0].id}/restore` });
    const times = all.body.items.map((b: any) => Date.parse(b.created_at));
    expect([...times].sort((a, b) => b - a)).toEqual(times);
    const paged: string[] = [];
    for (let page = 1; page <= 4; page++) {
      const r = await admin('GET', `/api/dashboards/42/backups?env_id=${envId}&page=${page}&page_size=1`);
      expect(r.body.has_next).toBe(page < 4);
      paged.push(r.body.items[0].id);
    }
    expect(paged).toEqual(all.body.items.map((b: any) => b.id));
    expect((await admin('GET', `/api/dashboards/42/backups?env_id=${otherEnvId}`)).body.total).toBe(0);
    const viewerList = await h.request('GET', `/api/dashboards/42/backups?env_id=${envId}`, { token: viewer });
    expect(viewerList.status).toBe(200);
    const one = await admin('GET', `/api/dashboards/backups/${backupIds[0]}`);
    expect(one.status).toBe(200);
    expect(one.body.id).toBe(backupIds[0]);
  });

  it.each([
    ['/api/dashboards/42/backups', 400],
    [`/api/dashboards/abc/backups?env_id=ENV`, 400],
    // Superset ids are 32-bit: a larger one is a bad id, not a database error (the fuzzer found a 500 here).
    [`/api/dashboards/17792391314/backups?env_id=ENV`, 400],
    [`/api/dashboards/2147483648/backups?env_id=ENV`, 400],
    [`/api/dashboards/42/backups?env_id=ENV&page=0`, 400],
    [`/api/dashboards/42/backups?env_id=ENV&page_size=101`, 400],
    [`/api/dashboards/42/backups?env_id=${randomUUID()}`, 404],
    [`/api/dashboards/backups/${randomUUID()}`, 404],
    ['/api/dashboards/backups/not-an-id', 404],
  ])('GET %s answers %i', async (path, status) => {
    const r = await admin('GET', path.replace('ENV', envId));
    expect(r.status, r.text).toBe(status);
  });

  it('starts a restore task into the backup environment (202, type restore)', async () => {
    const r = await admin('POST', `/api/dashboards/backups/${backupIds[0]}/restore`, { json: {} });
    expect(r.status, r.text).toBe(202);
    expect(r.body.task_id).toMatch(/^restore-/);
    const task = await h.knex('tasks').where({ id: r.body.task_id }).first();
    expect(task).toMatchObject({ type: 'restore', workflow_type: 'restoreWorkflow', env_ids: [envId], dashboard_ids: ['42'] });
    expect(task.workflow_input).toEqual({ backupId: backupIds[0], envId, dashboardId: 42 });
    const explicit = await admin('POST', `/api/dashboards/backups/${backupIds[0]}/restore`, { json: { target_env_id: envId } });
    expect(explicit.status).toBe(202);
  });

  it('answers 404 for an unknown backup or environment, 400 for another environment or a bad body, 403 for a Viewer', async () => {
    const unknownBackup = await admin('POST', `/api/dashboards/backups/${randomUUID()}/restore`, { json: {} });
    expect(unknownBackup.status).toBe(404);
    expect(unknownBackup.body.detail).toMatch(/Backup/);
    const unknownEnv = await admin('POST', `/api/dashboards/backups/${backupIds[0]}/restore`, { json: { target_env_id: randomUUID() } });
    expect(unknownEnv.status).toBe(404);
    expect(unknownEnv.body.detail).toMatch(/Environment/);
    const other = await admin('POST', `/api/dashboards/backups/${backupIds[0]}/restore`, { json: { target_env_id: otherEnvId } });
    expect(other.status).toBe(400);
    expect(other.body.errors.map((e: any) => e.field)).toEqual(['body.target_env_id']);
    expect(other.body.detail).toMatch(/migrate/);
    const bad = await admin('POST', `/api/dashboards/backups/${backupIds[0]}/restore`, { json: { target_env_id: 5 } });
    expect(bad.status).toBe(400);
    const extra = await admin('POST', `/api/dashboards/backups/${backupIds[0]}/restore`, { json: { overwrite: false } });
    expect(extra.status).toBe(400);
    const asViewer = await h.request('POST', `/api/dashboards/backups/${backupIds[0]}/restore`, { json: {}, token: viewer });
    expect(asViewer.status).toBe(403);
  });
});

describe('GET /api/dashboards/{id}/tasks', () => {
  let ids: Record<string, string>;
  beforeAll(async () => {
    ids = {
      backup: await insertTask({ type: 'backup', dashboard_ids: ['77', '78'], env_ids: [envId] }),
      backupOther: await insertTask({ type: 'backup', dashboard_ids: ['77'], env_ids: [otherEnvId] }),
      llm: await insertTask({ type: 'llm_docs', dashboard_ids: ['77'], env_ids: [envId] }),
      migration: await insertTask({ type: 'migration', dashboard_ids: ['77'], env_ids: [envId, otherEnvId] }),
      restore: await insertTask({ type: 'restore', dashboard_ids: ['77'], env_ids: [envId] }),
      unrelated: await insertTask({ type: 'backup', dashboard_ids: ['79'], env_ids: [envId] }),
    };
  });

  it('returns only backup and llm_docs tasks of that dashboard, filtered by env_id when given', async () => {
    const r = await admin('GET', '/api/dashboards/77/tasks');
    expect(r.status, r.text).toBe(200);
    expect(r.body.items.map((t: any) => t.id).sort()).toEqual([ids.backup, ids.backupOther, ids.llm].sort());
    expect(r.body.total).toBe(3);
    const env = await admin('GET', `/api/dashboards/77/tasks?env_id=${envId}`);
    expect(env.body.items.map((t: any) => t.id).sort()).toEqual([ids.backup, ids.llm].sort());
    expect(new Set(env.body.items.map((t: any) => t.type))).toEqual(new Set(['backup', 'llm_docs']));
    const page = await admin('GET', '/api/dashboards/77/tasks?page=2&page_size=2');
    expect(page.body).toMatchObject({ total: 3, page: 2, page_size: 2, has_next: false });
    expect(page.body.items).toHaveLength(1);
    expect((await admin('GET', '/api/dashboards/12345/tasks')).body.total).toBe(0);
  });

  it('answers 404 for an unknown environment and 400 for a bad id or pagination', async () => {
    expect((await admin('GET', `/api/dashboards/77/tasks?env_id=${randomUUID()}`)).status).toBe(404);
    expect((await admin('GET', '/api/dashboards/x/tasks')).status).toBe(400);
    expect((await admin('GET', '/api/dashboards/77/tasks?page_size=500')).status).toBe(400);
  });

  it('shows a caller without tasks:READ only their own tasks', async () => {
    // A Viewer holds tasks:READ; an API key with dashboards:READ only does not, and owns no tasks.
    const key = await admin('POST', '/api/admin/api-keys', { json: { name: 'dash-reader', permissions: ['dashboards:READ'] } });
    expect(key.status, key.text).toBe(201);
    const r = await h.request('GET', '/api/dashboards/77/tasks', { apiKey: key.body.key });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ items: [], total: 0 });
    expect((await h.request('GET', '/api/dashboards/77/tasks', { token: viewer })).body.total).toBe(3);
  });
});

describe('reports', () => {
  const migrationResult = {
    dry_run: false,
    source_env_id: 'S',
    target_env_id: 'T',
    totals: { requested: 3, failed: 2, imported: 1 },
    items: [
      { kind: 'dashboard', id: 1, title: 'Sales', status: 'imported', outcome: 'succeeded', target_dashboard_id: 11, next_actions: [] },
      {
        kind: 'dashboard',
        id: 2,
        title: 'Ops',
        status: 'failed',
        outcome: 'failed',
        error: "source database 'analytics' has no mapping to a database of the target environment",
        next_actions: [
          {
            action: 'map_database',
            description: "Map source database 'analytics'",
            request: { method: 'GET', path: '/api/dashboards/db-mappings?source_env_id=S&target_env_id=T', body: null },
          },
        ],
      },
      {
        kind: 'dashboard',
        id: 3,
        title: 'Finance',
        status: 'failed',
        outcome: 'failed',
        step: 'import',
        error: 'Superset refused the import: Error importing dashboard',
        upstream_error: {
          status: 422,
          message: 'Error importing dashboard',
          files: [{ field: 'databases/x.yaml', message: 'Must provide a password for the database' }],
        },
        collisions: [{ kind: 'slug', detail: "slug 'finance' belongs to target dashboard 9", resolution: 'imported without a slug' }],
        next_actions: [],
      },
    ],
    next_actions: [],
  };
  let ids: Record<string, string>;
  beforeAll(async () => {
    await h.knex('tasks').whereNotNull('id').delete();
    const adminUser = await h.knex('users').where({ username: 'admin' }).first('id');
    const owned = { owner_id: adminUser.id, owner_username: 'admin' };
    ids = {
      migration: await insertTask({
        ...owned,
        type: 'migration',
        status: 'SUCCEEDED',
        params: { source_env_id: 'S', target_env_id: 'T', dashboard_ids: [1, 2, 3], overwrite: true, dry_run: false },
        dashboard_ids: ['1', '2', '3'],
        result: migrationResult,
        started_at: new Date('2026-05-01T10:00:00Z'),
        finished_at: new Date('2026-05-01T10:00:05Z'),
        created_at: new Date('2026-05-01T10:00:00Z'),
      }),
      backupFailed: await insertTask({
        ...owned,
        type: 'backup',
        status: 'FAILED',
        params: { env_id: envId, dashboard_ids: [4, 5] },
        dashboard_ids: ['4', '5'],
        result: {
          env_id: envId,
          totals: { requested: 2, succeeded: 1, failed: 1 },
          items: [
            {
              kind: 'dashboard',
              id: 4,
              title: 'A',
              status: 'succeeded',
              outcome: 'succeeded',
              backup_id: randomUUID(),
              content_hash: 'a'.repeat(64),
              deduplicated: true,
              next_actions: [],
            },
            {
              kind: 'dashboard',
              id: 5,
              title: null,
              status: 'failed',
              outcome: 'failed',
              next_actions: [],
              backup_id: null,
              content_hash: null,
              deduplicated: false,
              error: 'dashboard 5 does not exist',
              upstream_error: { status: 404, message: 'Not found' },
            },
          ],
          retention: { pruned: 0, blobs_deleted: 0 },
        },
        error: { message: '1 of 2 dashboard backup(s) failed', type: 'BackupIncomplete' },
        created_at: new Date('2026-05-02T08:00:00Z'),
      }),
      selfcheckFailed: await insertTask({
        type: 'selfcheck',
        status: 'FAILED',
        params: { fail: 'non_retryable' },
        error: { message: 'selfcheck was asked to fail (non-retryable)', type: 'SelfcheckRequestedFailure' },
        created_at: new Date('2026-05-03T08:00:00Z'),
      }),
      running: await insertTask({
        type: 'backup',
        status: 'RUNNING',
        params: { env_id: envId, dashboard_ids: [6] },
        dashboard_ids: ['6'],
        created_at: new Date('2026-05-04T08:00:00Z'),
      }),
    };
  });

  it('lists with exactly the spec keys, newest first, and echoes the filters', async () => {
    const r = await admin('GET', '/api/reports');
    expect(r.status, r.text).toBe(200);
    expect(Object.keys(r.body).sort()).toEqual(['applied_filters', 'has_next', 'items', 'page', 'page_size', 'total']);
    expect(r.body).toMatchObject({ total: 4, page: 1, page_size: 25, has_next: false, applied_filters: { task_type: null, status: null } });
    expect(r.body.items.map((i: any) => i.report_id)).toEqual([ids.running, ids.selfcheckFailed, ids.backupFailed, ids.migration]);
    const m = r.body.items.find((i: any) => i.report_id === ids.migration);
    expect(m).toMatchObject({
      task_type: 'migration',
      status: 'SUCCEEDED',
      duration_ms: 5000,
      has_failures: true,
      summary: { total: 3, succeeded: 1, failed: 2 },
    });
    expect(m.summary.headline).toBe('1 of 3 dashboard(s) succeeded, 2 failed');

    const filtered = await admin('GET', '/api/reports?task_type=backup&status=FAILED');
    expect(filtered.body.applied_filters).toEqual({ task_type: 'backup', status: 'FAILED' });
    expect(filtered.body.items.map((i: any) => i.report_id)).toEqual([ids.backupFailed]);
    expect((await admin('GET', '/api/reports?task_type=backup')).body.total).toBe(2);
    expect((await admin('GET', '/api/reports?status=FAILED')).body.total).toBe(2);
    const p2 = await admin('GET', '/api/reports?page=2&page_size=3');
    expect(p2.body).toMatchObject({ total: 4, page: 2, page_size: 3, has_next: false });
    expect(p2.body.items.map((i: any) => i.report_id)).toEqual([ids.migration]);
  });

  it.each(['task_type=cleanup', 'task_type=', 'status=DONE', 'page=0', 'page_size=101', 'page=x'])('rejects %s with 400', async (q) => {
    const r = await admin('GET', `/api/reports?${q}`);
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('validation_failed');
  });

  it('sorts stably when timestamps were written naive and timezone-aware', async () => {
    // Same instant written three ways, plus one a minute later written naive. The session zone is
    // pinned so the naive literals mean UTC, as the service writes them.
    const base = `tz-${randomBytes(3).toString('hex')}`;
    await h.knex.transaction(async (trx) => {
      await trx.raw(`set local timezone = 'UTC'`);
      for (const [suffix, ts] of [
        ['a', '2030-01-01 10:00:00'],
        ['b', '2030-01-01T12:00:00+02:00'],
        ['c', '2030-01-01T10:00:00Z'],
        ['d', '2030-01-01 10:01:00'],
        ['e', '2030-01-01T05:00:30-05:00'],
      ]) {
        await trx.raw(
          `insert into tasks (id, type, status, workflow_type, workflow_input, created_at) values (?, 'release_check', 'SUCCEEDED', 'x', 'null', ?)`,
          [`${base}-${suffix}`, ts],
        );
      }
    });
    const expected = [`${base}-d`, `${base}-e`, `${base}-c`, `${base}-b`, `${base}-a`];
    for (let i = 0; i < 3; i++) {
      const r = await admin('GET', '/api/reports?task_type=release_check');
      expect(r.body.items.map((x: any) => x.report_id)).toEqual(expected);
      expect(r.body.items.every((x: any) => x.created_at.endsWith('Z'))).toBe(true);
    }
    const pages = [];
    for (let p = 1; p <= 3; p++)
      pages.push(
        ...(await admin('GET', `/api/reports?task_type=release_check&page=${p}&page_size=2`)).body.items.map((x: any) => x.report_id),
      );
    expect(pages).toEqual(expected);
  });

  it('gives diagnostics with the upstream error and next actions for a migration with failures', async () => {
    const r = await admin('GET', `/api/reports/${ids.migration}`);
    expect(r.status, r.text).toBe(200);
    expect(Object.keys(r.body)).toEqual(['report']);
    const report = r.body.report;
    expect(report).toMatchObject({ report_id: ids.migration, task_type: 'migration', status: 'SUCCEEDED' });
    expect(report.items.map((d: any) => [d.id, d.outcome])).toEqual([
      [1, 'succeeded'],
      [2, 'failed'],
      [3, 'failed'],
    ]);
    const errors = report.diagnostics.filter((d: any) => d.severity === 'error');
    expect(errors).toHaveLength(2);
    expect(errors[1]).toMatchObject({
      where: { item_id: 3, kind: 'dashboard', title: 'Finance', step: 'import' },
      upstream_error: { status: 422, message: 'Error importing dashboard' },
    });
    expect(report.diagnostics.some((d: any) => d.severity === 'warning' && /slug 'finance'/.test(d.message))).toBe(true);
    const retry = report.next_actions.find((a: any) => a.action === 'retry_failed');
    expect(retry.request).toEqual({
      method: 'POST',
      path: '/api/dashboards/migrate',
      body: { source_env_id: 'S', target_env_id: 'T', overwrite: true, dry_run: false, dashboard_ids: [2, 3] },
    });
    expect(report.next_actions.find((a: any) => a.action === 'map_database')).toMatchObject({ item_id: 2 });
  });

  it('reports a partial backup with the failed dashboard and one retry call', async () => {
    const report = (await admin('GET', `/api/reports/${ids.backupFailed}`)).body.report;
    expect(report.summary).toMatchObject({ total: 2, succeeded: 1, failed: 1, headline: '1 of 2 dashboard(s) backed up, 1 failed' });
    expect(report.diagnostics[0]).toMatchObject({
      severity: 'error',
      where: { item_id: 5 },
      message: 'dashboard 5 does not exist',
      upstream_error: { status: 404 },
    });
    expect(report.next_actions[0]).toMatchObject({
      action: 'retry_failed',
      request: { method: 'POST', path: '/api/dashboards/backup', body: { env_id: envId, dashboard_ids: [5] } },
    });
    expect(report.result.retention).toEqual({ pruned: 0, blobs_deleted: 0 });
  });

  it('describes a task that failed as a whole, and a running one', async () => {
    const failed = (await admin('GET', `/api/reports/${ids.selfcheckFailed}`)).body.report;
    expect(failed.diagnostics).toEqual([
      {
        severity: 'error',
        where: { task: ids.selfcheckFailed },
        message: 'selfcheck was asked to fail (non-retryable) (SelfcheckRequestedFailure)',
      },
    ]);
    expect(failed.next_actions.map((a: any) => a.action)).toEqual(['retry', 'read_logs']);
    expect(failed.summary.headline).toMatch(/^selfcheck task failed/);
    const running = (await admin('GET', `/api/reports/${ids.running}`)).body.report;
    expect(running.next_actions.map((a: any) => a.action)).toEqual(['follow', 'cancel']);
  });

  it('answers 404 for an unknown report, and for another user without tasks:READ', async () => {
    const r = await admin('GET', '/api/reports/nope');
    expect(r.status).toBe(404);
    expect(r.body.code).toBe('not_found');
    expect(r.body.detail).toBe("Report 'nope' not found");
    const key = await admin('POST', '/api/admin/api-keys', { json: { name: 'no-tasks-read', permissions: ['dashboards:READ'] } });
    const raw = key.body.key;
    expect((await h.request('GET', `/api/reports/${ids.migration}`, { apiKey: raw })).status).toBe(404);
    const list = await h.request('GET', '/api/reports', { apiKey: raw });
    expect(list.status).toBe(200);
    expect(list.body).toMatchObject({ items: [], total: 0 }); // an API key owns no tasks
  });
});
