// Bounded work per request for task logs: reads from a cursor touch only what they return, a
// caller holds a bounded number of streams, and a stream ends when its session does.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, createHarness, waitFor, type Harness } from '../support/harness.ts';

let h: Harness;
beforeAll(async () => {
  h = await createHarness({ worker: true });
});
afterAll(async () => h?.close());

const admin = (m: string, p: string, o: Record<string, unknown> = {}) => h.request(m, p, { ...o, token: h.adminToken });

/** Runs until cancelled (every test cancels it): its streams never end on their own, however slow the machine. */
async function longTask(): Promise<string> {
  const r = await admin('POST', '/api/tasks/selfcheck', { json: { sleep_seconds: 600 } });
  expect(r.status).toBe(202);
  return r.body.task_id;
}

describe('task logs, bounded', () => {
  it('reads a page after a cursor without fetching the lines before it', async () => {
    const id = await longTask();
    const base = Date.now();
    await h.knex('task_logs').insert(
      Array.from({ length: 3000 }, (_, i) => ({
        task_id: id,
        ts: new Date(base + i),
        level: 'INFO',
        source: 'activity',
        message: `line ${i}`,
      })),
    );
    const first = await admin('GET', `/api/tasks/${id}/logs?source=activity&limit=1000`);
    const cursor = first.body.next_cursor;
    expect(first.body.items.at(-1).message).toMatch(/^line /);

    let rowsFetched = 0;
    const count = (response: unknown, q: { sql?: string }) => {
      if (q.sql?.includes('task_logs') && Array.isArray(response)) rowsFetched += response.length;
    };
    h.knex.on('query-response', count);
    try {
      const next = await admin('GET', `/api/tasks/${id}/logs?source=activity&limit=5&after=${encodeURIComponent(cursor)}`);
      expect(next.status).toBe(200);
      expect(next.body.items).toHaveLength(5);
      expect(next.body.items[0].message).toBe('line 1000');
      expect(next.body.has_more).toBe(true);
    } finally {
      h.knex.removeListener('query-response', count);
    }
    // One page plus one look-ahead row, not the 3000 lines of the task.
    expect(rowsFetched).toBeLessThanOrEqual(6);
    await admin('POST', `/api/tasks/${id}/cancel`);
  });

  it('allows a caller a bounded number of open streams', async () => {
    const id = await longTask();
    const open: AbortController[] = [];
    try {
      for (let i = 0; i < 5; i++) {
        const ac = new AbortController();
        const res = await fetch(`${h.baseUrl}/api/tasks/${id}/logs/stream`, {
          headers: { authorization: `Bearer ${h.adminToken}` },
          signal: ac.signal,
        });
        expect(res.status).toBe(200);
        open.push(ac);
      }
      const sixth = await admin('GET', `/api/tasks/${id}/logs/stream`);
      expect(sixth.status).toBe(429);
      expect(sixth.headers.get('retry-after')).toBeTruthy();
      // Closing one frees a place, once the server has seen it close (waited for, not a fixed pause).
      open.pop()!.abort();
      const again = await waitFor(
        async () => {
          const ac = new AbortController();
          const res = await fetch(`${h.baseUrl}/api/tasks/${id}/logs/stream`, {
            headers: { authorization: `Bearer ${h.adminToken}` },
            signal: ac.signal,
          });
          if (res.status === 200) return { res, ac };
          expect(res.status).toBe(429);
          await res.body?.cancel();
          return undefined;
        },
        30_000,
        'a place freed by the closed stream',
      );
      open.push(again.ac);
    } finally {
      for (const ac of open) ac.abort();
      await admin('POST', `/api/tasks/${id}/cancel`);
    }
  });

  it('ends a stream when its session is revoked', async () => {
    const id = await longTask();
    const token = await h.login(ADMIN.username, ADMIN.password);
    const res = await fetch(`${h.baseUrl}/api/tasks/${id}/logs/stream`, { headers: { authorization: `Bearer ${token}` } });
    expect(res.status).toBe(200);
    const text = res.text();
    const out = await h.request('POST', '/api/auth/logout', { token });
    expect(out.status).toBeLessThan(300);
    // The task runs until cancelled, so only the revoked session can end this stream (a stream left
    // open fails the test at its time limit rather than at a guess of how long the server takes).
    const body = await text;
    expect(body).toContain('event: end');
    expect(body).toContain('session_ended');
    await admin('POST', `/api/tasks/${id}/cancel`);
  });
});
