/**
 * An environment whose Superset is down is decided once per environment (its circuit,
 * lib/superset/transport/circuit.ts), and the API's synchronous requests answer at once while
 * it lasts: the breaker on an injected clock, the client against a closed port and a listener
 * that accepts and never answers, and the real app's batch status and map-columns against
 * both. Nothing here is timed: what would be slow is counted (exchanges sent, sockets
 * accepted), and the test timeout is the bound for a hang.
 */
import { createServer as createHttpServer } from 'node:http';
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HostNotAllowedError } from '../../lib/errors.ts';
import { SupersetClient, SupersetCircuitOpenError, SupersetUnavailableError } from '../../lib/superset/index.ts';
import { CircuitBreaker, circuitPolicyFor, type CircuitState } from '../../lib/superset/transport/circuit.ts';
import { answerVerdict, failureVerdict } from '../../lib/superset/transport/circuit-faults.ts';
import type { WireResponse } from '../../lib/superset/transport/wire.ts';
import { metrics } from '../../lib/telemetry/metrics.ts';
import { createEnvironment } from '../support/environments.ts';
import { createHarness, type Harness } from '../support/harness.ts';

const CALL = { method: 'GET', path: '/api/v1/dashboard/1' };
const refused = (n = 1) =>
  new SupersetUnavailableError('network', `Superset at h:1 could not be reached (try ${n}): connection refused`, CALL);
const fault = (n = 1) => ({ kind: 'fault' as const, decisive: false, error: refused(n) });

/** A breaker on a clock the test moves, and everything its listener heard. */
function breaker(failuresToOpen = 3, openMs = 30_000) {
  let now = Date.parse('2026-12-02T10:00:00Z');
  const states: CircuitState[] = [];
  let rejected = 0;
  const b = new CircuitBreaker('h:1', {
    policy: { failuresToOpen, openMs },
    now: () => now,
    listener: { state: (s) => states.push(s), rejected: () => rejected++ },
  });
  return { b, states, rejected: () => rejected, advance: (ms: number) => (now += ms), now: () => now };
}

describe('the circuit breaker, on an injected clock', () => {
  it('opens after failuresToOpen faults in a row; an answer in between starts the count again', () => {
    const { b, states } = breaker(3);
    b.admit(CALL).settle(fault());
    b.admit(CALL).settle(fault());
    b.admit(CALL).settle({ kind: 'answered' });
    b.admit(CALL).settle(fault());
    b.admit(CALL).settle(fault());
    expect(b.state).toBe('closed');
    b.admit(CALL).settle(fault(3));
    expect(b.state).toBe('open');
    expect(states).toEqual(['closed', 'open']);
  });

  it('refuses while open with the fault that opened it and when; after openMs lets exactly one probe through', () => {
    const { b, states, rejected, advance } = breaker(1, 30_000);
    b.admit(CALL).settle(fault(7));
    const err = (() => {
      try {
        b.admit(CALL);
      } catch (e) {
        return e;
      }
    })() as SupersetCircuitOpenError;
    expect(err).toBeInstanceOf(SupersetCircuitOpenError);
    expect(err.message).toBe(
      'Superset at h:1 is unreachable: could not be reached (try 7): connection refused; checked at 2026-12-02T10:00:00.000Z',
    );
    expect(err.retryAt.toISOString()).toBe('2026-12-02T10:00:30.000Z');
    expect(err.reason).toBe('network');
    advance(29_999);
    expect(() => b.admit(CALL)).toThrow(SupersetCircuitOpenError);
    expect(rejected()).toBe(2);
    advance(1);
    expect(b.state).toBe('half_open');
    const probe = b.admit(CALL);
    expect(() => b.admit(CALL)).toThrow(SupersetCircuitOpenError); // one probe at a time
    probe.settle({ kind: 'answered' });
    expect(b.state).toBe('closed');
    b.admit(CALL).settle({ kind: 'answered' });
    expect(states).toEqual(['closed', 'open', 'half_open', 'closed']);
  });

  it("a probe's fault opens it for another openMs; a probe that says nothing leaves the next call to probe", () => {
    const { b, advance } = breaker(2, 10_000);
    b.admit(CALL).settle(fault());
    b.admit(CALL).settle(fault());
    advance(10_000);
    b.admit(CALL).settle(fault());
    expect(b.state).toBe('open');
    advance(9_999);
    expect(() => b.admit(CALL)).toThrow(SupersetCircuitOpenError);
    advance(1);
    b.admit(CALL).settle({ kind: 'neutral' });
    expect(b.state).toBe('half_open');
    b.admit(CALL).settle({ kind: 'answered' });
    expect(b.state).toBe('closed');
  });

  it('a decisive fault opens it alone; reset() closes it', () => {
    const { b } = breaker(5);
    b.admit(CALL).settle({ kind: 'fault', decisive: true, error: refused() });
    expect(b.state).toBe('open');
    b.reset();
    expect(b.state).toBe('closed');
    b.admit(CALL).settle({ kind: 'answered' });
  });

  it('opens after one more fault than a call has tries', () => {
    expect(circuitPolicyFor(4).failuresToOpen).toBe(5);
    expect(circuitPolicyFor(1).failuresToOpen).toBe(2);
  });
});

describe('which exchanges are faults', () => {
  const answer = (status: number, body: string, type = 'application/json'): WireResponse => ({
    status,
    headers: { 'content-type': type },
    body: Buffer.from(body),
  });
  const spec = { method: 'GET' as const, path: '/api/v1/dashboard/1' };

  it("Superset's own answers never are, a 4xx or a 500 included; a gateway's 502/503/504 is", () => {
    for (const status of [200, 400, 401, 403, 404, 422, 500])
      expect(answerVerdict('h:1', answer(status, '{"message":"x"}'), spec).kind).toBe('answered');
    expect(answerVerdict('h:1', answer(200, '<html>login</html>', 'text/html'), spec).kind).toBe('answered');
    expect(answerVerdict('h:1', answer(503, '{"message":"busy"}'), spec).kind).toBe('answered');
    for (const status of [502, 503, 504]) {
      const v = answerVerdict('h:1', answer(status, '<html><title>Bad Gateway</title></html>', 'text/html'), spec);
      expect(v).toMatchObject({ kind: 'fault', decisive: false });
    }
  });

  it('a refusal counts; a timeout of a session exchange is decisive, of another call counts; nothing sent is neither', () => {
    expect(failureVerdict(refused(), spec)).toMatchObject({ kind: 'fault', decisive: false });
    const timedOut = new SupersetUnavailableError('timeout', 'no answer', spec);
    expect(failureVerdict(timedOut, spec)).toMatchObject({ kind: 'fault', decisive: false });
    expect(failureVerdict(timedOut, { ...spec, session: true })).toMatchObject({ kind: 'fault', decisive: true });
    const connect = new SupersetUnavailableError(
      'timeout',
      'no connection',
      spec,
      Object.assign(new Error('x'), { code: 'UND_ERR_CONNECT_TIMEOUT' }),
    );
    expect(failureVerdict(connect, spec)).toMatchObject({ kind: 'fault', decisive: true });
    expect(failureVerdict(new SupersetUnavailableError('too_large', 'big', spec), spec).kind).toBe('neutral');
    expect(failureVerdict(new HostNotAllowedError('h', 'refused', 'connect'), spec).kind).toBe('neutral');
    expect(failureVerdict(new Error('a bug'), spec).kind).toBe('neutral');
  });
});

/** A port nothing listens on: a listener opened and closed again. */
async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

/** A TCP listener that accepts every connection and never answers, counting what it accepted. */
async function stallingListener(): Promise<{ url: string; accepted: () => number; requests: () => string[]; close: () => Promise<void> }> {
  const sockets: Socket[] = [];
  const requests: string[] = [];
  const server: Server = createServer((socket) => {
    sockets.push(socket);
    socket.on('error', () => undefined);
    socket.once('data', (chunk) => requests.push(chunk.toString('latin1').split('\r\n')[0]));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    accepted: () => sockets.length,
    requests: () => [...requests],
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

describe('a client with a circuit', () => {
  const conn = (baseUrl: string) => ({ baseUrl, username: 'svc', password: 'pw', timeoutSeconds: 30 });

  it('against a closed port: sends failuresToOpen exchanges, then refuses the rest without sending', async () => {
    let exchanges = 0;
    const url = `http://127.0.0.1:${await closedPort()}`;
    const circuit = new CircuitBreaker(new URL(url).host, { policy: circuitPolicyFor(4) });
    const client = new SupersetClient(conn(url), {
      circuit,
      retryHooks: { sleep: async () => undefined, random: () => 0 },
      observe: (_call, run) => {
        exchanges++;
        return run();
      },
    });
    try {
      const outcomes = await Promise.allSettled(Array.from({ length: 40 }, (_, i) => client.dashboards.get(i + 1)));
      const errors = outcomes.map((o) => (o.status === 'rejected' ? o.reason : o.value));
      expect(errors.every((e) => e instanceof SupersetUnavailableError)).toBe(true);
      expect(errors.filter((e) => e instanceof SupersetCircuitOpenError).length).toBe(40);
      expect(String(errors[0].message)).toMatch(
        /^Superset at 127\.0\.0\.1:\d+ is unreachable: could not be reached for POST \/api\/v1\/security\/login: connection refused; checked at \d{4}-/,
      );
      expect(exchanges).toBe(5);
      expect(circuit.state).toBe('open');
    } finally {
      client.close();
    }
  });

  it('against a listener that never answers: one login within the session deadline, then nothing more is sent', async () => {
    const stall = await stallingListener();
    const client = new SupersetClient(conn(stall.url), {
      circuit: new CircuitBreaker(new URL(stall.url).host, { policy: circuitPolicyFor(4) }),
      deadlines: { sessionMs: 1_000 },
    });
    try {
      const outcomes = await Promise.allSettled(Array.from({ length: 40 }, (_, i) => client.dashboards.get(i + 1)));
      expect(outcomes.every((o) => o.status === 'rejected' && o.reason instanceof SupersetCircuitOpenError)).toBe(true);
      expect((outcomes[0] as PromiseRejectedResult).reason.message).toMatch(
        /is unreachable: did not answer POST \/api\/v1\/security\/login within 1 s; checked at/,
      );
      expect(stall.accepted()).toBe(1);
    } finally {
      client.close();
      await stall.close();
    }
  });
});

describe('the API against environments whose Superset is down', () => {
  let h: Harness;
  let stall: Awaited<ReturnType<typeof stallingListener>>;
  let stallForMapping: Awaited<ReturnType<typeof stallingListener>>;
  let closedEnv: string;
  let closedAt: number;
  let stallEnv: string;
  let mappingEnv: string;
  const admin = (m: string, p: string, o: Record<string, unknown> = {}) => h.request(m, p, { ...o, token: h.adminToken });
  const DASHBOARDS = Array.from({ length: 100 }, (_, i) => i + 1);

  /** Exchanges the API sent to an environment's Superset (the metric counts each one). */
  const sent = async (envId: string) =>
    (await metrics.supersetRequests.get()).values.filter((v) => v.labels.environment_id === envId).reduce((n, v) => n + v.value, 0);
  const gauge = async (envId: string) =>
    (await metrics.supersetCircuitState.get()).values.find((v) => v.labels.environment_id === envId)?.value;
  const rejections = async (envId: string) =>
    (await metrics.supersetCircuitRejections.get()).values.find((v) => v.labels.environment_id === envId)?.value ?? 0;

  beforeAll(async () => {
    h = await createHarness();
    stall = await stallingListener();
    stallForMapping = await stallingListener();
    const register = (baseUrl: string) => createEnvironment(h, { baseUrl, username: 'svc', password: 'pw', timeoutSeconds: 30 });
    closedAt = await closedPort();
    closedEnv = await register(`http://127.0.0.1:${closedAt}`);
    stallEnv = await register(stall.url);
    mappingEnv = await register(stallForMapping.url);
  });
  afterAll(async () => {
    await h?.close();
    await stall?.close();
    await stallForMapping?.close();
  });

  /**
   * What reached a listener that never answers: the one login that found the outage. undici may
   * open a spare connection that carries nothing, so sockets are bounded, not counted exactly.
   */
  const expectOneLogin = (listener: Awaited<ReturnType<typeof stallingListener>>) => {
    expect(listener.requests()).toEqual(['POST /api/v1/security/login HTTP/1.1']);
    expect(listener.accepted()).toBeLessThanOrEqual(2);
  };

  const expectItemsUnavailable = (body: any, envId: string) => {
    expect(Object.keys(body.items)).toHaveLength(DASHBOARDS.length);
    for (const item of Object.values<any>(body.items)) {
      expect(item).toMatchObject({ status: 'ERROR', env_id: envId, error: { code: 'upstream_unavailable', status: 503 } });
      expect(item.error.next_actions).toEqual([
        expect.objectContaining({
          action: 'test_environment',
          request: { method: 'POST', path: `/api/environments/${envId}/test`, body: {} },
        }),
      ]);
    }
    const unreachable = Object.values<any>(body.items).filter((i) =>
      /is unreachable: .+; checked at \d{4}-\d\d-\d\dT/.test(i.error.detail),
    );
    expect(unreachable.length).toBeGreaterThan(DASHBOARDS.length / 2);
  };

  it('batch status of 100 dashboards on a closed port: every item ERROR with the reason and a next action; five exchanges sent', async () => {
    const r = await admin('POST', '/api/git/status/batch', { json: { env_id: closedEnv, dashboard_ids: DASHBOARDS } });
    expect(r.status, r.text).toBe(200);
    expectItemsUnavailable(r.body, closedEnv);
    expect(Object.values<any>(r.body.items)[0].error.detail).toMatch(/connection refused/);
    expect(await sent(closedEnv)).toBe(5); // SUPERSET_RETRY_ATTEMPTS (4) + 1, not 100 dashboards × retries
    expect(await gauge(closedEnv)).toBe(2);
    expect(await rejections(closedEnv)).toBeGreaterThan(0);
  });

  it('batch status of 100 dashboards behind a listener that never answers: one socket accepted', async () => {
    const r = await admin('POST', '/api/git/status/batch', { json: { env_id: stallEnv, dashboard_ids: DASHBOARDS } });
    expect(r.status, r.text).toBe(200);
    expectItemsUnavailable(r.body, stallEnv);
    expect(Object.values<any>(r.body.items)[0].error.detail).toMatch(/did not answer POST \/api\/v1\/security\/login within 10 s/);
    expectOneLogin(stall);
    expect(await gauge(stallEnv)).toBe(2);
  });

  it('map-columns: 503 with the reason and a next action, on a fresh stalled environment and on open circuits, nothing more sent', async () => {
    const body = (envId: string) => ({ env_id: envId, dataset_ids: [1, 2, 3], source_type: 'sqllab', database_id: 1 });
    const first = await admin('POST', '/api/datasets/map-columns', { json: body(mappingEnv) });
    expect(first.status, first.text).toBe(503);
    expect(first.body).toMatchObject({ code: 'upstream_unavailable', env_id: mappingEnv, reason: 'timeout', circuit: 'open' });
    expectOneLogin(stallForMapping);
    const sentBefore = await sent(closedEnv);
    for (const envId of [closedEnv, stallEnv, mappingEnv]) {
      const r = await admin('POST', '/api/datasets/map-columns', { json: body(envId) });
      expect(r.status, r.text).toBe(503);
      expect(r.body).toMatchObject({ code: 'upstream_unavailable', env_id: envId, circuit: 'open' });
      expect(r.body.detail).toMatch(/^The Superset of environment '.+' is unreachable: .+; checked at /);
      expect(r.body.next_actions[0].request.path).toBe(`/api/environments/${envId}/test`);
    }
    expect(await sent(closedEnv)).toBe(sentBefore);
    expectOneLogin(stall);
    expectOneLogin(stallForMapping);
  });

  it("a connection test that reaches the environment's Superset closes its circuit: requests go out again", async () => {
    expect(await gauge(closedEnv)).toBe(2);
    // Superset comes back on the port that refused: anything that answers is reachable.
    const seen: string[] = [];
    const back = createHttpServer((req, res) => {
      seen.push(`${req.method} ${req.url}`);
      res.writeHead(401, { 'content-type': 'application/json' }).end('{"message":"Not authorized"}');
    });
    await new Promise<void>((r) => back.listen(closedAt, '127.0.0.1', r));
    try {
      const tested = await admin('POST', `/api/environments/${closedEnv}/test`);
      expect(tested.status, tested.text).toBe(200);
      expect(tested.body.reachable).toBe(true);
      expect(await gauge(closedEnv)).toBe(0);
      const before = seen.length;
      const r = await admin('POST', '/api/git/status/batch', { json: { env_id: closedEnv, dashboard_ids: [1] } });
      expect(r.status, r.text).toBe(200);
      // Sent, and answered: the refused login is this request's own failure now, not the circuit's.
      expect(r.body.items['1'].error.detail).toMatch(/is unavailable \(auth failed\)/);
      expect(seen.length).toBeGreaterThan(before);
    } finally {
      back.closeAllConnections();
      await new Promise<void>((r) => back.close(() => r()));
    }
  });
});
