import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { flushTracing } from '../../lib/telemetry/tracing.ts';
import { realPairAvailable, seedForMigration, startRealPair, type RealPair } from '../dashboard-migration/real-pair.ts';
import { waitFor } from '../support/harness.ts';

/**
 * One migration, one trace: from the API's request span through Temporal's StartWorkflow span,
 * the workflow's run and its activities, to every Superset call, exported over OTLP/HTTP (the
 * exporter's JSON encoding) to a receiver in this test. Every span carries the task's id. The
 * migration runs between the real Superset 6.1.0 a → b (behind recording proxies).
 */
interface OtlpValue {
  stringValue?: string;
  intValue?: number | string;
  arrayValue?: { values?: OtlpValue[] };
}
interface Span {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
  service: string;
}

const received: Span[] = [];
let receiver: http.Server;
let pair: RealPair;
const real = realPairAvailable();
let taskId: string;

const value = (v: OtlpValue): unknown =>
  v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : v.arrayValue ? (v.arrayValue.values ?? []).map(value) : undefined);

/** Takes OTLP/HTTP JSON export requests (POST /v1/traces) and keeps their spans. */
function startReceiver(): Promise<http.Server> {
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.url !== '/v1/traces' || !String(req.headers['content-type']).startsWith('application/json')) {
        res.writeHead(415).end();
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      for (const rs of body.resourceSpans ?? []) {
        const attrs = Object.fromEntries(
          (rs.resource?.attributes ?? []).map((a: { key: string; value: OtlpValue }) => [a.key, value(a.value)]),
        );
        for (const ss of rs.scopeSpans ?? [])
          for (const s of ss.spans ?? [])
            received.push({
              traceId: s.traceId,
              spanId: s.spanId,
              parentSpanId: s.parentSpanId || undefined,
              name: s.name,
              kind: s.kind,
              attributes: Object.fromEntries((s.attributes ?? []).map((a: { key: string; value: OtlpValue }) => [a.key, value(a.value)])),
              service: String(attrs['service.name']),
            });
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

beforeAll(async () => {
  if (!real) return;
  receiver = await startReceiver();
  pair = await startRealPair(
    { OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}` },
    { ownAccounts: true },
  );
  const { ids, mapping } = await seedForMigration(pair, 'Traced', 2);
  const r = await pair.admin('POST', '/api/dashboards/migrate', {
    json: { source_env_id: pair.sourceEnv, target_env_id: pair.targetEnv, dashboard_ids: ids, db_mappings: mapping },
  });
  expect(r.status, r.text).toBe(202);
  taskId = r.body.task_id;
  const task = await pair.h.waitForTask(taskId, undefined, 300_000);
  expect(task.status).toBe('SUCCEEDED');
}, 420_000);

afterAll(async () => {
  await pair?.close();
  receiver?.close();
});

describe.runIf(real)('tracing: a migration a (6.1.0) → b (6.1.0)', () => {
  it('yields one connected trace from the request to every Superset call of the migration, each span carrying the task id', async () => {
    const root = await waitFor(
      async () => {
        await flushTracing();
        return received.find((s) => s.name === 'POST /api/dashboards/migrate');
      },
      30_000,
      'the request span',
    );
    expect(root.kind).toBe(2); // SERVER
    expect(root.parentSpanId).toBeUndefined();
    expect(root.attributes['switchyard.task_id']).toBe(taskId);
    expect(root.attributes['switchyard.environment_ids']).toEqual([pair.sourceEnv, pair.targetEnv]);

    // The workflow's run span is exported when the run ends; the import calls before it.
    const trace = await waitFor(
      async () => {
        await flushTracing();
        const spans = received.filter((s) => s.traceId === root.traceId);
        return spans.some((s) => s.name === 'RunWorkflow:migrationWorkflow') && spans.some((s) => s.name === 'superset POST import')
          ? spans
          : undefined;
      },
      30_000,
      'the workflow and Superset spans',
    );

    const names = new Set(trace.map((s) => s.name));
    for (const n of ['StartWorkflow:migrationWorkflow', 'RunWorkflow:migrationWorkflow', 'superset GET export', 'superset POST import'])
      expect(names).toContain(n);
    expect([...names].some((n) => n.startsWith('RunActivity:'))).toBe(true);

    // Connected: every span's parent is in the trace, and climbing from any span reaches the request.
    const byId = new Map(trace.map((s) => [s.spanId, s]));
    for (const s of trace) {
      let at: Span | undefined = s;
      for (let hops = 0; at && at !== root && hops < 50; hops++) at = at.parentSpanId ? byId.get(at.parentSpanId) : undefined;
      expect(at, `${s.name} is connected to the request span`).toBe(root);
    }
    // A Superset call sits under an activity, under the workflow's run, under the start.
    const exportCall = trace.find((s) => s.name === 'superset GET export')!;
    const chain: string[] = [];
    for (let at: Span | undefined = exportCall; at; at = at.parentSpanId ? byId.get(at.parentSpanId) : undefined)
      chain.push(at.name.split(':')[0]!);
    expect(chain).toEqual(
      expect.arrayContaining(['superset GET export', 'RunActivity', 'RunWorkflow', 'StartWorkflow', 'POST /api/dashboards/migrate']),
    );

    for (const s of trace) expect(s.attributes['switchyard.task_id'], s.name).toBe(taskId);
    const supersetCalls = trace.filter((s) => s.name.startsWith('superset '));
    for (const s of supersetCalls) expect([pair.sourceEnv, pair.targetEnv]).toContain(s.attributes['switchyard.environment_id']);
    expect(exportCall.attributes['switchyard.environment_id']).toBe(pair.sourceEnv);
    expect(trace.find((s) => s.name === 'superset POST import')!.attributes['switchyard.environment_id']).toBe(pair.targetEnv);
    expect(trace.find((s) => s.name === 'RunWorkflow:migrationWorkflow')!.attributes['switchyard.environment_ids']).toEqual([
      pair.sourceEnv,
      pair.targetEnv,
    ]);
  });

  it('sends no secret along: no span attribute holds an environment password', () => {
    const all = JSON.stringify(received);
    for (const password of pair.passwords) expect(all).not.toContain(password);
  });
});
