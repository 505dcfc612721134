// The chart-data path against a small stand-in of Superset with GLOBAL_ASYNC_QUERIES: the 202 and
// its job, the async event API's polling transport, the result URL, the job's own error, bounded
// waits on an injected clock, and unexpected answers named with their endpoint and status.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { SupersetClient, SupersetQueryError, SupersetUnavailableError } from '../../lib/superset/index.ts';

/** What the stand-in does with the next chart-data job. */
interface Plan {
  /** Polls answered with no event for the job before its event. */
  pollsBeforeEvent: number;
  outcome: 'done' | 'error' | 'never' | 'bad202' | 'syncWithoutResult';
  /** The first job is sent on a channel the session's token no longer names (Superset renewed the token on that answer). */
  staleChannelFirst?: boolean;
}

const token = (channel: string) =>
  `${Buffer.from('{"alg":"HS256"}').toString('base64url')}.${Buffer.from(JSON.stringify({ channel, sub: '1' })).toString('base64url')}.sig`;
const CHANNEL = 'c0ffee00-0000-4000-8000-000000000001';

let server: http.Server;
let baseUrl: string;
let plan: Plan;
const events: Array<Record<string, unknown>> = [];
const requests: string[] = [];
let polls = 0;
let jobs = 0;

function answer(res: http.ServerResponse, status: number, body: unknown, cookie = true) {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (cookie) headers['set-cookie'] = `async-token=${token(CHANNEL)}; HttpOnly; Path=/`;
  res.writeHead(status, headers);
  res.end(JSON.stringify(body));
}

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    requests.push(`${req.method} ${url.pathname}${url.search}`);
    req.resume();
    req.on('end', () => {
      if (url.pathname === '/api/v1/security/login') return answer(res, 200, { access_token: 'a.b.c', refresh_token: 'r' });
      if (url.pathname === '/api/v1/security/csrf_token/') return answer(res, 200, { result: 'csrf' });
      if (req.method === 'POST' && url.pathname === '/api/v1/chart/data') {
        if (plan.outcome === 'syncWithoutResult') return answer(res, 200, { message: 'odd' });
        if (plan.outcome === 'bad202') return answer(res, 202, { status: 'pending' });
        const job = `job-${++jobs}`;
        polls = 0;
        const stale = plan.staleChannelFirst === true;
        plan.staleChannelFirst = false;
        answer(res, 202, {
          channel_id: stale ? 'an-old-channel' : CHANNEL,
          job_id: job,
          user_id: 1,
          status: 'pending',
          errors: [],
          result_url: null,
        });
        // Other jobs' events on the same channel come and go; this one's after some polls.
        events.push({
          id: `1700000000000-${events.length}`,
          channel_id: CHANNEL,
          job_id: 'someone-else',
          status: 'done',
          result_url: '/api/v1/chart/data/other',
        });
        return;
      }
      if (url.pathname === '/api/v1/async_event/') {
        const job = `job-${jobs}`;
        if (++polls > plan.pollsBeforeEvent && plan.outcome !== 'never' && !events.some((e) => e.job_id === job)) {
          events.push(
            plan.outcome === 'done'
              ? {
                  id: `1700000000001-${events.length}`,
                  channel_id: CHANNEL,
                  job_id: job,
                  status: 'done',
                  errors: [],
                  result_url: '/api/v1/chart/data/ab12cd',
                }
              : {
                  id: `1700000000001-${events.length}`,
                  channel_id: CHANNEL,
                  job_id: job,
                  status: 'error',
                  errors: [{ message: 'column "regionx" does not exist', error_type: 'COLUMN_DOES_NOT_EXIST_ERROR' }],
                  result_url: null,
                },
          );
        }
        const last = url.searchParams.get('last_id');
        const from = last ? events.findIndex((e) => e.id === last) + 1 : 0;
        return answer(res, 200, { result: events.slice(from) });
      }
      if (url.pathname === '/api/v1/chart/data/ab12cd')
        return answer(res, 200, { result: [{ status: 'success', rowcount: 3, colnames: ['region'], data: [{ region: 'EMEA' }] }] });
      answer(res, 404, { message: 'Not found' });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));
beforeEach(() => {
  requests.length = 0;
});

const pauses: number[] = [];
function client() {
  pauses.length = 0;
  return new SupersetClient(
    { baseUrl, username: 'admin', password: 'admin' },
    { retryHooks: { sleep: async (ms) => void pauses.push(ms) }, asyncQueries: { maxWaitMs: 3_000, firstPollMs: 200, maxPollMs: 800 } },
  );
}
const query = { datasource: { id: 1, type: 'table' }, queries: [{ columns: ['region'] }] } as never;

describe('chart data answered asynchronously (GLOBAL_ASYNC_QUERIES)', () => {
  it('follows the 202 job through the async event API to its result URL, and answers as a synchronous call would', async () => {
    plan = { pollsBeforeEvent: 2, outcome: 'done' };
    const c = client();
    const res = await c.charts.data(query);
    expect(res.result[0]).toMatchObject({ status: 'success', rowcount: 3, colnames: ['region'] });
    expect(requests.filter((r) => r.startsWith('GET /api/v1/async_event/'))).toHaveLength(3);
    expect(requests).toContain('GET /api/v1/chart/data/ab12cd');
    expect(pauses).toEqual([200, 300]); // waits grow by half, on the injected clock
    // The next job's polls start after the events this client already read.
    plan = { pollsBeforeEvent: 0, outcome: 'done' };
    requests.length = 0;
    await c.charts.data(query);
    expect(requests.find((r) => r.startsWith('GET /api/v1/async_event/'))).toMatch(/last_id=1700000000001-/);
    c.close();
  });

  it("sends a job again when its events went to a channel the session's token no longer names", async () => {
    plan = { pollsBeforeEvent: 0, outcome: 'done', staleChannelFirst: true };
    const c = client();
    expect((await c.charts.data(query)).result[0]).toMatchObject({ rowcount: 3 });
    expect(requests.filter((r) => r === 'POST /api/v1/chart/data')).toHaveLength(2);
    c.close();
  });

  it("carries the job's own error as the failure", async () => {
    plan = { pollsBeforeEvent: 1, outcome: 'error' };
    const c = client();
    const err = await c.charts.data(query).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SupersetQueryError);
    expect((err as SupersetQueryError).upstreamMessage).toBe('column "regionx" does not exist');
    expect((err as SupersetQueryError).errorType).toBe('COLUMN_DOES_NOT_EXIST_ERROR');
    expect((err as Error).message).toMatch(/^Superset's asynchronous chart-data job job-\d+ failed: column "regionx" does not exist$/);
    c.close();
  });

  it('waits within its bound, then says the job did not finish', async () => {
    plan = { pollsBeforeEvent: 0, outcome: 'never' };
    const c = client();
    const err = await c.charts.data(query).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SupersetUnavailableError);
    expect((err as SupersetUnavailableError).reason).toBe('timeout');
    expect((err as Error).message).toMatch(/did not finish asynchronous chart-data job job-\d+ within 3 s/);
    expect(pauses.reduce((a, b) => a + b, 0)).toBe(3_000);
    c.close();
  });

  it('names an unexpected answer with its endpoint and status, never a TypeError', async () => {
    for (const [outcome, text] of [
      ['bad202', 'Superset gave an unexpected answer to /api/v1/chart/data: 202 with a 202 without a job_id and channel_id'],
      ['syncWithoutResult', 'Superset gave an unexpected answer to /api/v1/chart/data: 200 with no result list'],
    ] as const) {
      plan = { pollsBeforeEvent: 0, outcome };
      const c = client();
      const err = await c.charts.data(query).catch((e: unknown) => e);
      expect(err, outcome).toBeInstanceOf(SupersetUnavailableError);
      expect((err as Error).message).toBe(text);
      expect((err as SupersetUnavailableError).upstreamStatus).toBe(outcome === 'bad202' ? 202 : 200);
      c.close();
    }
  });
});
