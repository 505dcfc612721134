// Why the fake: expired tokens, CSRF refusals, retries and typed errors on demand.
// The retry policy of Superset calls with an injected clock and dice, and a gateway (nginx pages
// from test/support/gateway-proxy.ts) in front of the in-process fake Superset: what is asked
// again, how long it waits, what the message names, and the typed error after the last attempt.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  classifySupersetFailure,
  SupersetApiError,
  SupersetClient,
  SupersetGatewayError,
  SupersetUnavailableError,
} from '../../lib/superset/index.ts';
import { raiseForStatus } from '../../lib/superset/transport/answers.ts';
import { describeGatewayAnswer, pageHeading } from '../../lib/superset/transport/gateway.ts';
import { backoffDelay, Retrier, type RetryEvent } from '../../lib/superset/transport/retry.ts';
import { loadConfig } from '../../lib/config.ts';
import { nginxPage, startGatewayProxy, type GatewayProxy } from '../support/gateway-proxy.ts';
import { startFakeSuperset, type FakeSuperset } from '../support/fake-superset.ts';

const policy = { attempts: 4, baseDelayMs: 100, maxDelayMs: 300, onTimeout: false };

describe('backoff', () => {
  it('doubles from the base up to the cap, half of each wait fixed and half random', () => {
    expect([1, 2, 3, 4].map((n) => backoffDelay(policy, n, 0))).toEqual([50, 100, 150, 150]);
    expect([1, 2, 3, 4].map((n) => backoffDelay(policy, n, 0.999999))).toEqual([100, 200, 300, 300]);
    expect(backoffDelay(policy, 2, 0.5)).toBe(150);
  });
});

describe('Retrier', () => {
  const gatewayError = () =>
    new SupersetGatewayError(
      'sup:8088',
      { server: 'nginx', status: 504, answer: 'nginx answered 504 Gateway Time-out after 60 s' },
      {
        method: 'POST',
        path: '/api/v1/chart/data',
      },
    );
  const hooks = () => {
    const waits: number[] = [];
    const events: RetryEvent[] = [];
    return {
      waits,
      events,
      hooks: { sleep: async (ms: number) => void waits.push(ms), random: () => 0.5, onRetry: (e: RetryEvent) => void events.push(e) },
    };
  };

  it('asks an idempotent call again after a gateway answer, waiting the backoff on the injected clock, and tells the listener', async () => {
    const h = hooks();
    let n = 0;
    const r = new Retrier('sup:8088', policy, h.hooks);
    const out = await r.run({ method: 'POST', path: '/api/v1/chart/data', idempotent: true }, async () => {
      if (++n < 3) throw gatewayError();
      return 'rows';
    });
    expect(out).toBe('rows');
    expect(h.waits).toEqual([75, 150]);
    expect(h.events.map((e) => [e.attempt, e.attempts, e.answer])).toEqual([
      [1, 4, 'nginx answered 504 Gateway Time-out after 60 s'],
      [2, 4, 'nginx answered 504 Gateway Time-out after 60 s'],
    ]);
  });

  it('gives up after the bound with a SupersetGatewayError that says how many attempts were made', async () => {
    const h = hooks();
    const r = new Retrier('sup:8088', policy, h.hooks);
    const err = await r
      .run({ method: 'GET', path: '/api/v1/dashboard/export/', idempotent: true }, async () => Promise.reject(gatewayError()))
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SupersetGatewayError);
    expect((err as SupersetGatewayError).attempts).toBe(4);
    expect((err as Error).message).toBe(
      'Superset at sup:8088 failed on POST /api/v1/chart/data: nginx answered 504 Gateway Time-out after 60 s (4 attempts)',
    );
    expect(h.waits).toEqual([75, 150, 225]);
    expect(classifySupersetFailure(err)).toMatchObject({ reason: 'server_error', retryable: true, upstream: { status: 504 } });
  });

  it('tries a call that is not idempotent once, and never retries what does not pass by itself', async () => {
    const h = hooks();
    const r = new Retrier('sup:8088', policy, h.hooks);
    let n = 0;
    await expect(
      r.run({ method: 'POST', path: '/api/v1/dashboard/import/', idempotent: false }, async () => Promise.reject((n++, gatewayError()))),
    ).rejects.toBeInstanceOf(SupersetGatewayError);
    expect(n).toBe(1);
    const refused = new SupersetUnavailableError('server_error', 'boom', { method: 'GET', path: '/x', upstreamStatus: 500 });
    await expect(r.run({ method: 'GET', path: '/x', idempotent: true }, async () => Promise.reject((n++, refused)))).rejects.toBe(refused);
    expect(n).toBe(2);
    expect(h.waits).toEqual([]);
  });
});

describe('gateway pages', () => {
  it("reads nginx's page with an HTML parser: title, heading and signature, entities decoded", () => {
    expect(pageHeading(nginxPage(504))).toEqual({ title: '504 Gateway Time-out', h1: '504 Gateway Time-out', signature: 'nginx/1.24.0' });
    expect(pageHeading('<HTML><BODY><H1>Service &amp; maintenance</H1></BODY>')).toEqual({ h1: 'Service & maintenance' });
  });

  it('names what came back, by server, page title and time, and never quotes more of the page', () => {
    const page = (status: number, body: string, headers: Record<string, string> = {}, elapsedMs = 60_000) => ({
      status,
      headers: { 'content-type': 'text/html', ...headers },
      body: Buffer.from(body),
      elapsedMs,
    });
    expect(describeGatewayAnswer(page(504, nginxPage(504), { server: 'nginx/1.24.0' })).answer).toBe(
      'nginx answered 504 Gateway Time-out after 60 s',
    );
    expect(describeGatewayAnswer(page(502, nginxPage(502), {}, 1234)).answer).toBe('nginx answered 502 Bad Gateway after 1.2 s');
    expect(
      describeGatewayAnswer(page(503, '<html><title>Down for maintenance</title><p>secret</p></html>', { server: 'awselb/2.0' })).answer,
    ).toBe("awselb answered 503 Service Unavailable with an HTML page titled 'Down for maintenance' after 60 s");
    expect(describeGatewayAnswer({ status: 502, headers: {}, body: Buffer.alloc(0) }).answer).toBe('the gateway answered 502 Bad Gateway');
  });

  it("names a gateway's 4xx page too (nginx's 413 for a bundle over its body limit)", () => {
    const page =
      '<html>\r\n<head><title>413 Request Entity Too Large</title></head>\r\n<body>\r\n<center><h1>413 Request Entity Too Large</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n';
    const res = { status: 413, headers: { 'content-type': 'text/html', server: 'nginx' }, body: Buffer.from(page), elapsedMs: 120 };
    let err: unknown;
    try {
      raiseForStatus('sup:8088', res, { method: 'POST', path: '/api/v1/dashboard/import/' });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(SupersetApiError);
    expect((err as SupersetApiError).upstreamMessage).toBe('nginx answered 413 Request Entity Too Large after 0.1 s');
  });

  it('the retry bound is validated at start', () => {
    const base = {};
    expect(() => loadConfig({ ...base, SUPERSET_RETRY_ATTEMPTS: '0' })).toThrow(/SUPERSET_RETRY_ATTEMPTS/);
    expect(() => loadConfig({ ...base, SUPERSET_RETRY_BASE_MS: '2000', SUPERSET_RETRY_MAX_MS: '1000' })).toThrow(/SUPERSET_RETRY_MAX_MS/);
    expect(loadConfig(base)).toMatchObject({ SUPERSET_RETRY_ATTEMPTS: 4, SUPERSET_RETRY_BASE_MS: 500, SUPERSET_RETRY_MAX_MS: 8000 });
  });
});

describe('a client behind a gateway answering with nginx pages', () => {
  let fake: FakeSuperset;
  let gw: GatewayProxy;
  const waits: number[] = [];
  const events: RetryEvent[] = [];
  const clients: SupersetClient[] = [];
  const client = () => {
    const c = new SupersetClient(
      { baseUrl: gw.baseUrl, username: fake.username, password: fake.password, timeoutSeconds: 5 },
      { retry: policy, retryHooks: { sleep: async (ms) => void waits.push(ms), random: () => 0, onRetry: (e) => void events.push(e) } },
    );
    clients.push(c);
    return c;
  };
  const restart = async (failCalls: number[], match?: (m: string, p: string) => boolean) => {
    await gw?.close();
    gw = await startGatewayProxy({ target: fake.baseUrl, seed: 1, share: 0, failCalls: new Set(failCalls), match, statuses: [504] });
    waits.length = 0;
    events.length = 0;
  };

  beforeAll(async () => {
    fake = await startFakeSuperset({});
    const db = fake.addDatabase({ name: 'analytics' });
    fake.addDataset({ table: 'sales', database: db.id });
  });
  afterAll(async () => {
    clients.forEach((c) => c.close());
    await gw?.close();
    await fake.close();
  });

  const chartData = (_m: string, p: string) => p === '/api/v1/chart/data';

  it('asks a chart-data query (a POST that only reads) again after a 504 page, and gets its rows', async () => {
    await restart([1, 2], chartData);
    const res = await client().charts.data({ datasource: { id: 1, type: 'table' }, queries: [{}] } as never);
    expect(res.result[0]).toMatchObject({ status: 'success', rowcount: 1 });
    expect(gw.faults).toHaveLength(2);
    expect(waits).toEqual([50, 100]);
    expect(events[0]).toMatchObject({ method: 'POST', path: '/api/v1/chart/data', attempt: 1, attempts: 4, reason: 'server_error' });
    expect(events[0].answer).toMatch(/^nginx answered 504 Gateway Time-out after \d+\.\d s$/);
  });

  it('names the gateway after the last attempt, never "no usable error message"', async () => {
    await restart([1, 2, 3, 4], chartData);
    const err = await client()
      .charts.data({ datasource: { id: 1, type: 'table' }, queries: [{}] } as never)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SupersetGatewayError);
    expect((err as Error).message).toMatch(
      /failed on POST \/api\/v1\/chart\/data: nginx answered 504 Gateway Time-out after \d+\.\d s \(4 attempts\)$/,
    );
    expect((err as Error).message).not.toMatch(/no usable error message/);
  });

  it('asks the login again, and a read, but never an import', async () => {
    await restart([1, 3]);
    const c = client();
    expect((await c.datasets.list({ pageSize: 1 })).count).toBe(1);
    expect(gw.faults.map((f) => f.path)).toEqual(['/api/v1/security/login', '/api/v1/dataset/']);
    gw.reset(new Set([2]));
    waits.length = 0;
    const err = await c.assets.import('dashboard', Buffer.from('PK\x03\x04rest'), { overwrite: true }).catch((e: unknown) => e);
    // call 1 fetches the CSRF token; call 2 is the import, answered by the gateway and not asked again
    expect(gw.faults.map((f) => [f.method, f.path])).toEqual([['POST', '/api/v1/dashboard/import/']]);
    expect(err).toBeInstanceOf(SupersetGatewayError);
    expect(waits).toEqual([]);
  });
});
