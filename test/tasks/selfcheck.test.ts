import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, waitFor, type Harness } from '../support/harness.ts';

let h: Harness;
let admin: Harness['request'];
beforeAll(async () => {
  h = await createHarness({ worker: true });
  admin = (m, p, o = {}) => h.request(m, p, { ...o, token: h.adminToken });
});
afterAll(async () => h?.close());

async function selfcheck(body: Record<string, unknown> = {}, headers?: Record<string, string>) {
  const r = await admin('POST', '/api/tasks/selfcheck', { json: body, headers });
  expect(r.status, r.text).toBe(202);
  return r.body.task_id as string;
}

describe('selfcheck task', () => {
  it('checks database, Temporal and worker, records progress, result and timestamps', async () => {
    const id = await selfcheck();
    expect(id).toMatch(/^selfcheck-/);
    const task = await h.waitForTask(id);
    expect(task.status).toBe('SUCCEEDED');
    expect(task.result.steps.map((s: any) => s.step)).toEqual(['database', 'temporal', 'worker']);
    expect(task.progress).toMatchObject({ done: 3, total: 3 });
    expect(task.owner_username).toBe('admin');
    expect(Date.parse(task.finished_at)).toBeGreaterThanOrEqual(Date.parse(task.started_at));
    expect(task.temporal.workflow_id).toBe(id);
    const effects = await h.knex('selfcheck_effects').where({ task_id: id }).orderBy('step');
    expect(effects.map((e) => e.step)).toEqual(['database', 'temporal', 'worker']);
  });

  it('retries a failing step and shows every attempt in the logs', async () => {
    const id = await selfcheck({ fail: 'retryable', fail_attempts: 2 });
    const task = await h.waitForTask(id);
    expect(task.status).toBe('SUCCEEDED');
    expect(task.result.steps.at(-1)).toMatchObject({ step: 'fail', attempt: 3 });
    const logs = await admin('GET', `/api/tasks/${id}/logs?limit=1000`);
    const messages = logs.body.items.map((i: any) => i.message);
    expect(messages).toContain('failing attempt 1 of 2, as requested');
    expect(messages).toContain('failing attempt 2 of 2, as requested');
    expect(
      messages.some((m: string) =>
        /activity selfcheckFail started, attempt 3 .*previous attempt failed: selfcheck was asked to fail attempt 2/.test(m),
      ),
    ).toBe(true);
  });

  it('fails without retry on a non-retryable error and keeps the reason', async () => {
    const id = await selfcheck({ fail: 'non_retryable' });
    const task = await h.waitForTask(id);
    expect(task.status).toBe('FAILED');
    expect(task.error).toMatchObject({ message: 'selfcheck was asked to fail (non-retryable)', type: 'SelfcheckRequestedFailure' });
    const errors = await admin('GET', `/api/tasks/${id}/logs?level=ERROR`);
    expect(errors.body.items.some((i: any) => i.source === 'temporal' && /activity selfcheckFail failed/.test(i.message))).toBe(true);
    expect(errors.body.items.every((i: any) => i.level === 'ERROR')).toBe(true);
  });

  it('cancels a running task: status CANCELLED, cancellation in the logs, a second cancel is 409', async () => {
    const id = await selfcheck({ sleep_seconds: 30 });
    await waitFor(async () => (await admin('GET', `/api/tasks/${id}/logs?text=sleeping`)).body.items.length > 0, 20_000, 'sleep to start');
    const c = await admin('POST', `/api/tasks/${id}/cancel`);
    expect(c.status).toBe(202);
    const task = await h.waitForTask(id);
    expect(task.status).toBe('CANCELLED');
    const logs = await admin('GET', `/api/tasks/${id}/logs?level=WARN,ERROR&limit=1000`);
    const messages = logs.body.items.map((i: any) => i.message);
    expect(messages).toContain('cancellation requested by admin');
    expect(messages.some((m: string) => m.startsWith('workflow cancellation requested'))).toBe(true);
    expect(messages).toContain('workflow cancelled');
    const again = await admin('POST', `/api/tasks/${id}/cancel`);
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('task_finished');
    // The sleep never finished, so its side effect was never applied.
    expect(await h.knex('selfcheck_effects').where({ task_id: id, step: 'sleep' })).toHaveLength(0);
  });

  it('returns the same task for a repeated Idempotency-Key and starts one workflow', async () => {
    const a = await selfcheck({}, { 'idempotency-key': 'deploy-42' });
    const r = await admin('POST', '/api/tasks/selfcheck', { json: {}, headers: { 'idempotency-key': 'deploy-42' } });
    expect(r.status).toBe(200);
    expect(r.body.task_id).toBe(a);
    const both = await Promise.all(
      [1, 2, 3].map(() => admin('POST', '/api/tasks/selfcheck', { json: {}, headers: { 'idempotency-key': 'race-1' } })),
    );
    expect(new Set(both.map((x) => x.body.task_id)).size).toBe(1);
    expect(await h.knex('tasks').where({ idempotency_key: 'race-1' })).toHaveLength(1);
    const bad = await admin('POST', '/api/tasks/selfcheck', { json: {}, headers: { 'idempotency-key': 'has spaces' } });
    expect(bad.status).toBe(400);
  });

  it.each([
    [{ sleep_seconds: -1 }, 'body.sleep_seconds'],
    [{ sleep_seconds: 601 }, 'body.sleep_seconds'],
    [{ sleep_seconds: 'soon' }, 'body.sleep_seconds'],
    [{ fail: 'sometimes' }, 'body.fail'],
    [{ unexpected: true }, 'body'],
  ])('rejects bad input %j with a 400 naming %s, creating nothing', async (body, field) => {
    const before = await h.knex('tasks').count({ n: '*' });
    const r = await admin('POST', '/api/tasks/selfcheck', { json: body });
    expect(r.status).toBe(400);
    expect(r.headers.get('content-type')).toContain('application/problem+json');
    expect(r.body.code).toBe('validation_failed');
    expect(r.body.errors.map((e: any) => e.field)).toContain(field);
    expect(await h.knex('tasks').count({ n: '*' })).toEqual(before);
  });

  it('needs authentication (401) and the admin role (403)', async () => {
    expect((await h.request('POST', '/api/tasks/selfcheck', { json: {} })).status).toBe(401);
    expect((await h.request('GET', '/api/tasks')).status).toBe(401);
    const created = await admin('POST', '/api/admin/users', {
      json: { username: 'viewer1', password: 'viewer-password-1', roles: ['Viewer'] },
    });
    expect(created.status).toBe(201);
    const viewer = await h.login('viewer1', 'viewer-password-1');
    const r = await h.request('POST', '/api/tasks/selfcheck', { json: {}, token: viewer });
    expect(r.status).toBe(403);
    expect(r.body.code).toBe('forbidden');
  });
});

describe('task listing and reading', () => {
  it('lists with filters and exact pagination', async () => {
    const all = await admin('GET', '/api/tasks?task_type=selfcheck&page_size=100');
    expect(all.status).toBe(200);
    expect(all.body.total).toBeGreaterThanOrEqual(5);
    const p1 = await admin('GET', '/api/tasks?page=1&page_size=2');
    const p2 = await admin('GET', '/api/tasks?page=2&page_size=2');
    expect(p1.body.items).toHaveLength(2);
    expect(p1.body.has_next).toBe(true);
    expect(p1.body.items.map((t: any) => t.id)).not.toContain(p2.body.items[0].id);
    const failed = await admin('GET', '/api/tasks?status=FAILED');
    expect(failed.body.items.every((t: any) => t.status === 'FAILED')).toBe(true);
    expect(failed.body.total).toBeGreaterThanOrEqual(1);
    const byOwner = await admin('GET', '/api/tasks?owner=admin&page_size=100');
    expect(byOwner.body.total).toBe(all.body.total);
    expect((await admin('GET', '/api/tasks?owner=nobody')).body.total).toBe(0);
  });

  it.each(['page=0', 'page_size=0', 'page_size=101', 'page=abc', 'status=DONE', 'task_type=cleanup'])('rejects %s with 400', async (q) => {
    const r = await admin('GET', `/api/tasks?${q}`);
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('validation_failed');
  });

  it('answers 404 for an unknown task on every task endpoint', async () => {
    for (const [m, p] of [
      ['GET', '/api/tasks/nope'],
      ['POST', '/api/tasks/nope/cancel'],
      ['GET', '/api/tasks/nope/logs'],
      ['GET', '/api/tasks/nope/logs/stats'],
      ['GET', '/api/tasks/nope/logs/stream'],
    ]) {
      const r = await admin(m, p);
      expect(r.status, `${m} ${p}`).toBe(404);
      expect(r.body.code).toBe('not_found');
    }
  });
});

describe('task logs', () => {
  let id: string;
  beforeAll(async () => {
    id = await selfcheck({ sleep_seconds: 1 });
    await h.waitForTask(id);
  });

  it('merges stored lines and Temporal history in time order', async () => {
    const r = await admin('GET', `/api/tasks/${id}/logs?limit=1000`);
    expect(r.status).toBe(200);
    expect(r.body.history).toBe('ok');
    const items = r.body.items;
    const times = items.map((i: any) => Date.parse(i.ts));
    expect([...times].sort((a, b) => a - b)).toEqual(times);
    expect(new Set(items.map((i: any) => i.source))).toEqual(new Set(['api', 'temporal', 'workflow', 'activity']));
    expect(items[0].message).toMatch(/^task created by admin: Selfcheck/);
    expect(items.at(-1).message).toBe('workflow completed');
    expect(items.some((i: any) => i.source === 'activity' && i.activity_type === 'selfcheckDatabase' && i.attempt === 1)).toBe(true);
  });

  it("puts Temporal's close event after the workflow's own lines of the same millisecond, in one page and across pages", async () => {
    // The workflow logs its last line ("task succeeded") just before the worker reports it done;
    // both are stamped to the millisecond, so they often tie. Tie them on purpose: a line stamped
    // in the close event's very millisecond, and one a millisecond earlier.
    const tied = await selfcheck();
    await h.waitForTask(tied);
    // The task's row closes before the worker's last batch of lines is stored (they are written in
    // batches): wait for the workflow's own last line, or a read before it and a read after it differ.
    const before = await waitFor(
      async () => {
        const items = (await admin('GET', `/api/tasks/${tied}/logs?limit=1000`)).body.items;
        return items.some((i: any) => i.source === 'workflow' && i.message === 'task succeeded') && items;
      },
      30_000,
      "the workflow's last log line stored",
    );
    const close = before.find((i: any) => i.source === 'temporal' && i.message === 'workflow completed');
    const closeMs = Date.parse(close.ts);
    const line = (ms: number, message: string) =>
      ({
        task_id: tied,
        ts: new Date(ms),
        level: 'INFO',
        source: 'workflow',
        activity_type: null,
        attempt: null,
        message,
        attrs: null,
      }) as const;
    await h.boot.context.stores.tasks.appendLogs([line(closeMs, 'tied with the close'), line(closeMs - 1, 'just before the close')]);
    const items = (await admin('GET', `/api/tasks/${tied}/logs?limit=1000`)).body.items;
    // The workflow's own "task succeeded" may fall in either millisecond too (it is stamped by the
    // clock as it ran), so the order is asserted among the planted lines and the close, and by time.
    const messages: string[] = items.map((i: any) => i.message);
    expect(messages.filter((m) => ['just before the close', 'tied with the close', 'workflow completed'].includes(m))).toEqual([
      'just before the close',
      'tied with the close',
      'workflow completed',
    ]);
    expect(messages.at(-1)).toBe('workflow completed');
    const stamps = items.map((i: any) => Date.parse(i.ts));
    expect([...stamps].sort((x, y) => x - y)).toEqual(stamps);
    // Page by page (one line a page), the cursors give the same order and lose nothing.
    const seen: string[] = [];
    let after = '';
    for (let guard = 0; guard < 200; guard++) {
      const page = await admin('GET', `/api/tasks/${tied}/logs?limit=1${after ? `&after=${after}` : ''}`);
      seen.push(...page.body.items.map((i: any) => i.message));
      if (!page.body.has_more) break;
      after = page.body.next_cursor;
    }
    expect(seen).toEqual(items.map((i: any) => i.message));
  });

  it('filters by level, source and text, and pages with the after cursor', async () => {
    const temporalOnly = await admin('GET', `/api/tasks/${id}/logs?source=temporal&limit=1000`);
    expect(temporalOnly.body.items.every((i: any) => i.source === 'temporal')).toBe(true);
    const text = await admin('GET', `/api/tasks/${id}/logs?text=SLEEPING`);
    expect(text.body.items.map((i: any) => i.message)).toEqual(['sleeping 1 s']);
    const all = (await admin('GET', `/api/tasks/${id}/logs?limit=1000`)).body.items;
    const seen: string[] = [];
    let after = '';
    for (let guard = 0; guard < 100; guard++) {
      const page = await admin('GET', `/api/tasks/${id}/logs?limit=7${after ? `&after=${after}` : ''}`);
      seen.push(...page.body.items.map((i: any) => i.id));
      if (!page.body.has_more) break;
      after = page.body.next_cursor;
    }
    expect(seen).toEqual(all.map((i: any) => i.id));
  });

  it.each(['limit=0', 'limit=-5', 'limit=1001', 'limit=ten', 'level=LOUD', 'source=kernel', 'after=xyz'])(
    'rejects %s with 400',
    async (q) => {
      const r = await admin('GET', `/api/tasks/${id}/logs?${q}`);
      expect(r.status).toBe(400);
      expect(r.body.code).toBe('validation_failed');
    },
  );

  it('gives statistics by level and source with timestamps and duration', async () => {
    const r = await admin('GET', `/api/tasks/${id}/logs/stats`);
    expect(r.status).toBe(200);
    const all = (await admin('GET', `/api/tasks/${id}/logs?limit=1000`)).body.items;
    expect(r.body.total).toBe(all.length);
    expect(Object.values(r.body.by_level as Record<string, number>).reduce((a, b) => a + b, 0)).toBe(all.length);
    expect(r.body.by_source.temporal).toBe(all.filter((i: any) => i.source === 'temporal').length);
    expect(r.body.first_at).toBe(all[0].ts);
    expect(r.body.last_at).toBe(all.at(-1).ts);
    expect(r.body.duration_ms).toBeGreaterThanOrEqual(1000);
  });

  it('streams a running task live over server-sent events until it ends', async () => {
    const live = await selfcheck({ sleep_seconds: 2 });
    const res = await fetch(`${h.baseUrl}/api/tasks/${live}/logs/stream`, { headers: { authorization: `Bearer ${h.adminToken}` } });
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const text = await res.text(); // the server closes the stream after `end`
    const events = text
      .split('\n\n')
      .filter(Boolean)
      .map((block) => Object.fromEntries(block.split('\n').map((l) => [l.slice(0, l.indexOf(':')), l.slice(l.indexOf(':') + 2)])));
    const statuses = events.filter((e) => e.event === 'status').map((e) => JSON.parse(e.data).status);
    expect(statuses.at(-1)).toBe('SUCCEEDED');
    expect(events.at(-1)).toMatchObject({ event: 'end' });
    const logged = events.filter((e) => e.event === 'log').map((e) => JSON.parse(e.data).message);
    expect(logged).toContain('sleeping 2 s');
    expect(logged.at(-1)).toBe('workflow completed');
    // Resuming from the last id sends nothing twice.
    const lastId = events.filter((e) => e.event === 'log').at(-1)!.id;
    const resumed = await (
      await fetch(`${h.baseUrl}/api/tasks/${live}/logs/stream`, {
        headers: { authorization: `Bearer ${h.adminToken}`, 'last-event-id': lastId },
      })
    ).text();
    expect(resumed).not.toContain('event: log');
    expect(resumed).toContain('event: end');
  });

  it('streams a line stored after a later one was sent (a worker writes its lines in batches)', async () => {
    const live = await selfcheck({ sleep_seconds: 30 });
    const res = await fetch(`${h.baseUrl}/api/tasks/${live}/logs/stream?source=activity`, {
      headers: { authorization: `Bearer ${h.adminToken}` },
    });
    const text = res.text();
    const line = (ts: number, message: string) => ({ task_id: live, ts: new Date(ts), level: 'INFO', source: 'activity', message });
    // A line is stored; one stamped 50 ms before it reaches the store after one of the stream's
    // reads has seen the first, as a batch of another activity's lines would. The first is
    // stamped ten minutes ahead: the stream may send it only once the task has ended and its lines
    // have settled, by which time the second is stored, however slow the machine (a stream without
    // the fix sends the first at its next tick and never the second).
    // The stream's reads of the task's lines are watched on the app's pool (the harness shares it):
    // the second read begun after the first insert means one whole read saw the first line alone,
    // an event where a 700 ms pause only hoped a 500 ms tick had passed on a busy machine.
    let reads = 0;
    const watch = (q: { sql?: string; bindings?: readonly unknown[] }) => {
      if (/^select/i.test(q.sql ?? '') && q.sql!.includes('task_logs') && q.bindings?.includes(live)) reads++;
    };
    const at = Date.now() + 10 * 60_000;
    await h.knex('task_logs').insert(line(at, 'stamped second, stored first'));
    h.knex.on('query', watch);
    try {
      await waitFor(async () => reads >= 2, 30_000, "a whole read of the stream's after the first line");
    } finally {
      h.knex.removeListener('query', watch);
    }
    await h.knex('task_logs').insert(line(at - 50, 'stamped first, stored second'));
    await admin('POST', `/api/tasks/${live}/cancel`);
    const logged = (await text)
      .split('\n\n')
      .filter((b) => b.includes('event: log'))
      .map((b) => JSON.parse(b.slice(b.indexOf('data: ') + 6)).message as string)
      .filter((m) => m.startsWith('stamped'));
    expect(logged).toEqual(['stamped first, stored second', 'stamped second, stored first']);
  });
});
