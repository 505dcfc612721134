// A task's items a page at a time (GET /api/tasks/{id}/items): paging, the outcome and change
// filters, title search, the read rule (a hidden task is 404), a kind whose items live only in
// its result, and the summary in the task answer (counts, object actions, durations, bulk retry).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../support/harness.ts';
import { createUserWithRoles } from '../support/environments.ts';
import { seedMigrationTask, type SeededTask, createStoredTask } from '../support/task-items.ts';

let h: Harness;
let seeded: SeededTask;
let owner: { id: string; token: string };
let other: { id: string; token: string };

beforeAll(async () => {
  h = await createHarness();
  const role = await h.request('POST', '/api/admin/roles', {
    token: h.adminToken,
    json: { name: 'BoardsOnly', permissions: ['dashboards:READ'] },
  });
  expect(role.status, role.text).toBe(201);
  owner = await createUserWithRoles(h, 'items-owner', ['BoardsOnly']);
  other = await createUserWithRoles(h, 'items-other', ['BoardsOnly']);
  seeded = await seedMigrationTask(h, {
    dashboards: 240,
    failEvery: 20,
    changeEvery: 7,
    ownerId: owner.id,
    ownerUsername: 'items-owner',
    title: (d) => (d === 77 ? 'Sales Overview 100%' : `Board ${d}`),
  });
}, 120_000);
afterAll(() => h?.close());

const get = (path: string, token = h.adminToken) => h.request('GET', path, { token });

describe('GET /api/tasks/{id}/items', () => {
  it('pages the items in request order', async () => {
    const p1 = await get(`/api/tasks/${seeded.id}/items?page_size=100`);
    expect(p1.status, p1.text).toBe(200);
    expect(p1.body).toMatchObject({ total: 240, page: 1, page_size: 100, has_next: true });
    expect(p1.body.items.map((r: any) => r.position)).toEqual(Array.from({ length: 100 }, (_, i) => i));
    expect(p1.body.items[0].item).toMatchObject({ id: 1, title: 'Board 1', outcome: 'planned' });
    expect(p1.body.items[0].item.objects).toHaveLength(13);
    const p3 = await get(`/api/tasks/${seeded.id}/items?page=3&page_size=100`);
    expect(p3.body).toMatchObject({ total: 240, page: 3, has_next: false });
    expect(p3.body.items.map((r: any) => r.item.id)).toEqual(Array.from({ length: 40 }, (_, i) => 201 + i));
    expect((await get(`/api/tasks/${seeded.id}/items?page=9&page_size=100`)).body).toMatchObject({ items: [], total: 240 });
  });

  it('filters by outcome and change class, and searches titles', async () => {
    const ids = async (query: string) => {
      const r = await get(`/api/tasks/${seeded.id}/items?page_size=100&${query}`);
      expect(r.status, r.text).toBe(200);
      return { ids: r.body.items.map((x: any) => x.item.id), total: r.body.total, changes: r.body.items.map((x: any) => x.change) };
    };
    const failed = await ids('outcome=failed');
    expect(failed.ids).toEqual(seeded.failed);
    expect(new Set(failed.changes)).toEqual(new Set([null]));
    const changed = await ids('outcome=changed');
    expect(changed.ids).toEqual(seeded.changed);
    expect((await ids('outcome=unchanged&page=2')).total).toBe(seeded.unchanged.length);
    expect((await ids('outcome=failed,changed')).total).toBe(seeded.failed.length + seeded.changed.length);
    expect((await ids('q=sales overview 100%')).ids).toEqual([77]);
    expect((await ids('q=100%25')).ids).toEqual([77]); // % is a character here, not a wildcard
    expect((await ids('q=140')).ids).toEqual([140]);
    expect((await ids('q=Board 14&outcome=failed')).ids).toEqual([140]);
  });

  it('rejects bad input with a problem body', async () => {
    for (const q of ['outcome=broken', 'page=0', 'page_size=101', `q=${'x'.repeat(201)}`]) {
      const r = await get(`/api/tasks/${seeded.id}/items?${q}`);
      expect(r.status, q).toBe(400);
      expect(r.body.code).toBe('validation_failed');
    }
  });

  it('follows the task read rule: its owner signed in and tasks:READ read it, anyone else gets 404', async () => {
    expect((await get(`/api/tasks/${seeded.id}/items`, owner.token)).status).toBe(200);
    const hidden = await get(`/api/tasks/${seeded.id}/items`, other.token);
    expect(hidden.status).toBe(404);
    expect((await get(`/api/tasks/${seeded.id}`, other.token)).status).toBe(404);
    expect((await get('/api/tasks/migration-nope/items')).status).toBe(404);
  });

  it('reads the items of a kind that keeps them in its result only', async () => {
    const { tasks } = h.boot.context.stores;
    const id = `restore-${crypto.randomUUID()}`;
    await createStoredTask(h, { type: 'restore', id, summary: 's' });
    const item = (n: number, status: string, outcome: string) => ({
      kind: 'dashboard',
      id: n,
      title: `Restored ${n}`,
      status,
      outcome,
      next_actions: [],
    });
    await tasks.finish(
      id,
      'SUCCEEDED',
      {
        items: [item(1, 'restored', 'succeeded'), item(2, 'unchanged', 'succeeded'), item(3, 'failed', 'failed')],
        not_started: 0,
        cancelled: false,
        next_actions: [],
      },
      null,
    );
    const r = await get(`/api/tasks/${id}/items?outcome=changed`);
    expect(r.body).toMatchObject({ total: 1, items: [{ position: 0, change: 'changed', item: { id: 1 } }] });
    expect((await get(`/api/tasks/${id}/items?outcome=unchanged`)).body.items.map((x: any) => x.item.id)).toEqual([2]);
    expect((await get(`/api/tasks/${id}`)).body.items_summary).toMatchObject({
      total: 3,
      by_outcome: { succeeded: 2, failed: 1 },
      by_change: { changed: 1, unchanged: 1 },
    });
  });
});

describe('the task answer', () => {
  it('leaves its 240 items out (past 100: test/tasks/large-answer.test.ts) and carries their summary: counts, object actions, durations, bulk retry with the fix', async () => {
    const r = await get(`/api/tasks/${seeded.id}`);
    expect(r.status).toBe(200);
    expect(r.body.result).toMatchObject({ items_omitted: true, items_total: 240 });
    const s = r.body.items_summary;
    expect(s).toMatchObject({
      total: 240,
      by_outcome: { planned: 240 - seeded.failed.length, failed: seeded.failed.length },
      by_change: { changed: seeded.changed.length, unchanged: seeded.unchanged.length },
      by_status: { planned: 240 - seeded.failed.length, failed: seeded.failed.length },
      durations: { migration_ms: 61_000 },
    });
    expect(s.objects.total).toBe(240 * 13);
    const creates = seeded.changed.filter((d) => d % 2).length;
    expect(s.objects.by_action.create).toBe(creates * 13);
    expect(s.objects.by_action.update).toBe(seeded.changed.length - creates);
    expect(s.objects.by_kind.chart.update).toBe(seeded.changed.length - creates);
    expect(s.bulk_actions.map((a: any) => a.action)).toEqual(['retry_failed', 'retry_with_rls_copy_all']);
    // the same options as the task (a dry run with the browser check), for every failed dashboard; then with the fix
    const same = {
      source_env_id: 'src-env',
      target_env_id: 'dst-env',
      dry_run: true,
      overwrite: true,
      verification: 'browser',
      db_mappings: [],
    };
    expect(s.bulk_actions[0].request).toEqual({
      method: 'POST',
      path: '/api/dashboards/migrate',
      body: { ...same, dashboard_ids: seeded.failed },
    });
    expect(s.bulk_actions[1].request).toEqual({
      method: 'POST',
      path: '/api/dashboards/migrate',
      body: { ...same, dashboard_ids: seeded.failed, rls: 'copy' },
    });
    expect((await get('/api/tasks')).body.items[0].items_summary).toBeUndefined();
  });
});
