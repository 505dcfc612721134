import type { ChildProcess } from 'node:child_process';
import http from 'node:http';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveApi } from '../../api/serve.ts';
import { loadConfig } from '../../lib/config.ts';
import { remoteHttp } from '../../lib/git/remote-http.ts';
import { observedLlmFetch } from '../../lib/telemetry/upstream.ts';
import { createLogger } from '../../lib/logger.ts';
import { HostNotAllowedError } from '../../lib/errors.ts';
import { SupersetUnavailableError } from '../../lib/superset/errors.ts';
import { callOutcome } from '../../lib/telemetry/metrics.ts';
import { serveMetrics, type MetricsServer } from '../../lib/telemetry/metrics-server.ts';
import { supersetEndpointClass } from '../../lib/telemetry/superset-endpoint.ts';
import { realPairAvailable, seedForMigration } from '../dashboard-migration/real-pair.ts';
import { client, superset } from '../dashboard-migration/support.ts';
import { createEnvironment } from '../support/environments.ts';
import { startRecordingProxy, type GatewayProxy } from '../support/gateway-proxy.ts';
import { createHarness, waitFor, type Harness } from '../support/harness.ts';
import { spawnWorker, stopProcess } from '../support/worker-process.ts';

/**
 * Prometheus metrics per process after a real migration between the real Superset 6.1.0 a → b:
 * the API's (requests by route template, tasks created) from this process, the worker's (tasks
 * finished, Superset calls by environment and endpoint class) and the Temporal SDK's from a worker
 * process of its own, each on its own port. Each Superset sits behind a recording proxy
 * (test/support/gateway-proxy.ts), so the worker's Superset call counts are checked against the
 * calls Superset really got, class by class.
 */
interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The exposition format's sample lines (`name{a="b"} 1`); comments skipped. */
function parseExposition(text: string): Sample[] {
  return text
    .split('\n')
    .filter((l) => l && !l.startsWith('#'))
    .map((l) => {
      const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)/.exec(l)!;
      const labels = Object.fromEntries([...(m[2] ?? '').matchAll(/([a-zA-Z_]\w*)="((?:[^"\\]|\\.)*)"/g)].map((x) => [x[1], x[2]]));
      return { name: m[1]!, labels, value: Number(m[3]) };
    });
}

async function scrape(address: string): Promise<Sample[]> {
  const r = await fetch(`http://${address}/metrics`);
  expect(r.status).toBe(200);
  expect(r.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return parseExposition(await r.text());
}

/** A loaded configuration as the environment variables that give it again. */
const envOf = (config: object): Record<string, string> =>
  Object.fromEntries(Object.entries(config).flatMap(([k, v]) => (v === undefined || Array.isArray(v) ? [] : [[k, String(v)]])));

async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise((r) => s.close(r));
  return port;
}

const real = realPairAvailable();
let h: Harness;
let source: GatewayProxy;
let target: GatewayProxy;
/** What each proxy had passed on when the migration ended (before the API's environment test). */
let migrationCalls: [number, number];
let worker: ChildProcess;
let apiMetrics: MetricsServer;
let workerPort: number;
let temporalPort: number;
let sourceEnv: string;
let targetEnv: string;
let taskId: string;

beforeAll(async () => {
  if (!real) return;
  const [sa, sb] = [superset('a'), superset('b')];
  [h, source, target] = await Promise.all([createHarness(), startRecordingProxy(sa.baseUrl), startRecordingProxy(sb.baseUrl)]);
  [sourceEnv, targetEnv] = await Promise.all([
    createEnvironment(h, { baseUrl: source.baseUrl, username: sa.username, password: sa.password, timeoutSeconds: 60 }),
    createEnvironment(h, { baseUrl: target.baseUrl, username: sb.username, password: sb.password, timeoutSeconds: 60 }),
  ]);
  apiMetrics = await serveMetrics('127.0.0.1', 0);
  [workerPort, temporalPort] = [await freePort(), await freePort()];
  worker = spawnWorker(h, { WORKER_METRICS_PORT: String(workerPort), TEMPORAL_METRICS_PORT: String(temporalPort) });

  const { ids, mapping } = await seedForMigration({ a: await client('a'), b: await client('b') }, 'Metrics', 3);
  const r = await h.request('POST', '/api/dashboards/migrate', {
    token: h.adminToken,
    json: { source_env_id: sourceEnv, target_env_id: targetEnv, dashboard_ids: ids, db_mappings: mapping },
  });
  expect(r.status, r.text).toBe(202);
  taskId = r.body.task_id;
  const task = await h.waitForTask(taskId, undefined, 300_000);
  expect(task.status).toBe('SUCCEEDED');
  migrationCalls = [source.mark(), target.mark()];
  await h.request('GET', `/api/tasks/${taskId}`, { token: h.adminToken });
  expect((await h.request('POST', `/api/environments/${sourceEnv}/test`, { token: h.adminToken })).status).toBe(200);
}, 420_000);

afterAll(async () => {
  if (worker) await stopProcess(worker);
  await apiMetrics?.close();
  await h?.close();
  await Promise.all([source?.close(), target?.close()]);
});

const find = (samples: Sample[], name: string, labels: Record<string, string> = {}) =>
  samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));

describe.runIf(real)('metrics of a migration a (6.1.0) → b (6.1.0)', () => {
  it("serves the API's requests by route template (never the raw path) and status, and the tasks it created", async () => {
    const api = await scrape(apiMetrics.address);
    const byTemplate = find(api, 'switchyard_http_requests_total', { method: 'GET', route: '/api/tasks/:task_id', status: '200' });
    expect(byTemplate).toHaveLength(1);
    expect(byTemplate[0]!.value).toBeGreaterThanOrEqual(1);
    expect(find(api, 'switchyard_http_requests_total', { method: 'POST', route: '/api/dashboards/migrate', status: '202' })[0]?.value).toBe(
      1,
    );
    expect(api.some((s) => s.name.startsWith('switchyard_http_') && JSON.stringify(s.labels).includes(taskId))).toBe(false);
    expect(find(api, 'switchyard_http_request_duration_seconds_bucket', { route: '/api/dashboards/migrate', le: '+Inf' })[0]?.value).toBe(
      1,
    );
    expect(find(api, 'switchyard_tasks_created_total', { kind: 'migration' })[0]?.value).toBe(1);
    // Testing an environment logs in from the API: its own Superset calls, by the environment's id.
    expect(
      find(api, 'switchyard_superset_requests_total', { environment_id: sourceEnv, endpoint: 'security', outcome: 'success' })[0]?.value,
    ).toBeGreaterThanOrEqual(1);
    expect(find(api, 'switchyard_http_requests_total', { route: '/api/environments/:env_id/test', status: '200' })[0]?.value).toBe(1);
  });

  it("serves a worker's tasks finished and its Superset calls by environment, endpoint class and outcome, on a port of its own", async () => {
    const w = await scrape(`127.0.0.1:${workerPort}`);
    expect(find(w, 'switchyard_tasks_finished_total', { kind: 'migration', outcome: 'succeeded' })[0]?.value).toBe(1);
    expect(find(w, 'switchyard_task_items_sum', { kind: 'migration', outcome: 'succeeded' })[0]?.value).toBe(3);
    expect(find(w, 'switchyard_task_duration_seconds_count', { kind: 'migration', outcome: 'succeeded' })[0]?.value).toBe(1);
    expect(
      find(w, 'switchyard_superset_requests_total', { environment_id: sourceEnv, endpoint: 'export', outcome: 'success' })[0]?.value,
    ).toBeGreaterThanOrEqual(1);
    expect(
      find(w, 'switchyard_superset_requests_total', { environment_id: targetEnv, endpoint: 'import', outcome: 'success' })[0]?.value,
    ).toBeGreaterThanOrEqual(1);
    expect(find(w, 'switchyard_superset_request_duration_seconds_count', { environment_id: targetEnv, endpoint: 'import' }).length).toBe(1);
    // The label sets are the documented ones, and each endpoint class one of the fixed set.
    const superset = find(w, 'switchyard_superset_requests_total');
    for (const s of superset) {
      expect(Object.keys(s.labels).sort()).toEqual(['endpoint', 'environment_id', 'outcome']);
      expect(['list', 'export', 'import', 'chart_data', 'sql_lab', 'security', 'other']).toContain(s.labels.endpoint);
      expect([sourceEnv, targetEnv]).toContain(s.labels.environment_id);
    }
    // Class by class, the calls Superset got from the migration (at the proxies) are the calls the worker counted.
    for (const [env, proxy, until] of [
      [sourceEnv, source, migrationCalls[0]],
      [targetEnv, target, migrationCalls[1]],
    ] as const) {
      const got: Record<string, number> = {};
      for (const c of proxy.requests.slice(0, until)) {
        const endpoint = supersetEndpointClass(c.method, c.path);
        got[endpoint] = (got[endpoint] ?? 0) + 1;
      }
      const counted: Record<string, number> = {};
      for (const s of find(w, 'switchyard_superset_requests_total', { environment_id: env }))
        counted[s.labels.endpoint!] = (counted[s.labels.endpoint!] ?? 0) + s.value;
      expect(counted, env).toEqual(got);
    }
    expect(find(w, 'switchyard_process_resident_memory_bytes')).toHaveLength(1);
    // The worker process serves no API requests: those are the API's.
    expect(find(w, 'switchyard_http_requests_total')).toHaveLength(0);
  });

  it("serves the Temporal SDK's worker metrics from its core runtime on TEMPORAL_METRICS_PORT", async () => {
    const t = await waitFor(
      async () => {
        const samples = await scrape(`127.0.0.1:${temporalPort}`);
        return find(samples, 'temporal_workflow_task_schedule_to_start_latency_seconds_count').length ? samples : undefined;
      },
      30_000,
      'temporal metrics',
    );
    expect(find(t, 'temporal_activity_execution_latency_seconds_count').length).toBeGreaterThan(0);
    expect(find(t, 'temporal_worker_task_slots_available').length).toBeGreaterThan(0);
  });

  it('is served by an API process on METRICS_PORT when set', async () => {
    const [port, metricsPort] = [await freePort(), await freePort()];
    const config = loadConfig({ ...envOf(h.config), PORT: String(port), METRICS_PORT: String(metricsPort) });
    const api = await serveApi(config, createLogger('silent'), h.databaseUrl);
    try {
      expect((await fetch(`http://127.0.0.1:${port}/api/health`)).status).toBe(200);
      expect(find(await scrape(`127.0.0.1:${metricsPort}`), 'switchyard_http_requests_total').length).toBeGreaterThan(0);
    } finally {
      await api.close();
    }
    await expect(fetch(`http://127.0.0.1:${metricsPort}/metrics`)).rejects.toThrow();
  });

  it('counts git and LLM calls by operation and outcome', async () => {
    const upstream = http.createServer((req, res) => {
      const ok = req.url === '/org/repo.git/info/refs?service=git-upload-pack' || req.url === '/v1/chat/completions';
      res.writeHead(ok ? 200 : 503, { 'content-type': 'text/plain' }).end('x');
    });
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
    const base = `http://127.0.0.1:${(upstream.address() as net.AddressInfo).port}`;
    try {
      const git = remoteHttp({});
      await git.request({ url: `${base}/org/repo.git/info/refs?service=git-upload-pack`, method: 'GET', headers: {} });
      await git.request({ url: `${base}/org/repo.git/git-receive-pack`, method: 'POST', headers: {} });
      await (await observedLlmFetch()(`${base}/v1/chat/completions`, { method: 'POST', body: '{}' })).text();
    } finally {
      upstream.close();
    }
    const samples = await scrape(apiMetrics.address);
    expect(find(samples, 'switchyard_git_requests_total', { operation: 'discover', outcome: 'success' })[0]?.value).toBe(1);
    expect(find(samples, 'switchyard_git_requests_total', { operation: 'push', outcome: 'server_error' })[0]?.value).toBe(1);
    expect(find(samples, 'switchyard_git_request_duration_seconds_count', { operation: 'discover' })[0]?.value).toBe(1);
    expect(find(samples, 'switchyard_llm_requests_total', { operation: 'chat_completions', outcome: 'success' })[0]?.value).toBe(1);
    expect(find(samples, 'switchyard_llm_request_duration_seconds_count', { operation: 'chat_completions' })[0]?.value).toBe(1);
  });

  it('is never served on the public listener', async () => {
    const r = await fetch(`${h.baseUrl}/metrics`);
    expect(await r.text()).not.toContain('switchyard_http_requests_total');
  });

  it('classifies Superset paths into a fixed set of endpoint classes', () => {
    expect(supersetEndpointClass('GET', '/api/v1/dashboard/')).toBe('list');
    expect(supersetEndpointClass('GET', '/api/v1/dashboard/_info')).toBe('list');
    expect(supersetEndpointClass('GET', '/api/v1/dashboard/12')).toBe('other');
    expect(supersetEndpointClass('GET', '/api/v1/dashboard/export/')).toBe('export');
    expect(supersetEndpointClass('POST', '/api/v1/dashboard/import/')).toBe('import');
    expect(supersetEndpointClass('POST', '/api/v1/chart/data')).toBe('chart_data');
    expect(supersetEndpointClass('POST', '/superset/explore_json/')).toBe('chart_data');
    expect(supersetEndpointClass('POST', '/api/v1/sqllab/execute/')).toBe('sql_lab');
    expect(supersetEndpointClass('POST', '/api/v1/security/login')).toBe('security');
  });

  it("labels a call's outcome from a fixed set, never its message", () => {
    expect(callOutcome({ status: 204 })).toBe('success');
    expect(callOutcome({ status: 404 })).toBe('client_error');
    expect(callOutcome({ status: 502 })).toBe('server_error');
    expect(callOutcome({ error: new SupersetUnavailableError('timeout', 'no answer within 30 s', { method: 'GET', path: '/' }) })).toBe(
      'timeout',
    );
    expect(callOutcome({ error: new HostNotAllowedError('evil.example', 'not allowed', 'connect') })).toBe('refused');
    expect(callOutcome({ error: Object.assign(new Error('x'), { reason: 'Some free text!' }) })).toBe('error');
  });

  it('keeps every metrics listener off the API port and apart from the others', () => {
    expect(() => loadConfig({ PORT: '9100', METRICS_PORT: '9100' })).toThrow(/METRICS_PORT must differ from PORT/);
    expect(() => loadConfig({ METRICS_PORT: '9100', WORKER_METRICS_PORT: '9100' })).toThrow(
      /METRICS_PORT and WORKER_METRICS_PORT must differ/,
    );
    expect(() => loadConfig({ METRICS_PORT: 'x' })).toThrow(/METRICS_PORT: must be a port number/);
    expect(loadConfig({}).METRICS_PORT).toBeUndefined();
  });
});
