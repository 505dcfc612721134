import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createHarness, type Harness } from '../support/harness.ts';
import { startGatewayProxy, type GatewayProxy } from '../support/gateway-proxy.ts';
import { createSqliteDatabase, type SupersetClient } from '../support/superset/fixtures.ts';
import { buildSource, client, prefixedTables, registerEnvironment, superset, waitTask, type SourceFixture } from './support.ts';
import { uniquePrefix } from '../support/environments.ts';

/**
 * Superset behind a gateway: real Superset 6.1.0 (a) → 6.0.0 (c), once straight and once with a
 * fault-injecting proxy in front of both (nginx's 502/504 pages on a seeded 10% of the calls, and
 * the first try of every other chart-data query answered 504, as a slow query behind nginx is).
 * Two identical sets of dashboards (one per run, so neither run is a rerun of the other): the
 * outcome of each dashboard is the same with the proxy as without it, and the task's log shows
 * the retries with what the gateway answered.
 */
const enabled = inject('supersets') !== null;
const P = uniquePrefix('g');

let h: Harness;
let a: SupersetClient;
let c: SupersetClient;
const proxies: GatewayProxy[] = [];
const admin = (m: string, p: string, o: Record<string, unknown> = {}) => h.request(m, p, { ...o, token: h.adminToken });

async function register(baseUrl: string, name: 'a' | 'c', label: string): Promise<string> {
  const s = superset(name);
  const r = await admin('POST', '/api/environments', {
    json: { name: label, base_url: baseUrl, username: s.username, password: s.password },
  });
  expect(r.status, r.text).toBe(201);
  return r.body.id;
}

/** A source set and its own target database, mapped for the environments given. */
async function prepare(prefix: string, source: string, target: string, dir: string): Promise<SourceFixture> {
  const src = await buildSource(a, prefix, dir, { dashboards: 3 });
  const db = await createSqliteDatabase(c, {
    name: `${prefix}_warehouse`,
    path: path.join(dir, `${prefix}-c.db`),
    tables: prefixedTables(prefix),
  });
  const r = await admin('PUT', `/api/environments/${source}/db-mappings/${target}`, {
    json: { mappings: [{ source_database_id: src.database.id, target_database_id: db.id }] },
  });
  expect(r.status, r.text).toBe(200);
  return src;
}

/** What a dashboard's migration came to, without what naturally differs between two sets (ids, names, timings, attempts). */
function outcomeOf(item: any) {
  return {
    status: item.status,
    outcome: item.outcome,
    error: item.error ?? null,
    verification_ok: item.verification?.ok ?? null,
    charts: (item.verification?.charts ?? []).map((ch: any) => [ch.ok, ch.classification ?? null]),
  };
}

beforeAll(async () => {
  if (!enabled) return;
  // Short waits between retries: the test's time goes into Superset, not into sleeping.
  h = await createHarness({ worker: true, env: { SUPERSET_RETRY_BASE_MS: '50', SUPERSET_RETRY_MAX_MS: '400' } });
  [a, c] = await Promise.all([client('a'), client('c')]);
}, 240_000);
afterAll(async () => {
  await Promise.all(proxies.map((p) => p.close()));
  a?.close();
  c?.close();
  await h?.close();
});

describe.skipIf(!enabled)('a migration behind a gateway answering 502/504 on 10% of the calls', () => {
  it('ends each dashboard as it ends without the gateway, and logs each retry in the task', { timeout: 600_000 }, async () => {
    const dir = path.join(inject('runDir'), P);
    const [gwA, gwC] = await Promise.all([
      startGatewayProxy({ target: superset('a').baseUrl, seed: 36, share: 0 }),
      startGatewayProxy({
        target: superset('c').baseUrl,
        seed: 63,
        share: 0,
        // and the first try of every other chart-data query of the verification: a slow query behind nginx
        alsoFail: { match: (m, p) => m === 'POST' && p === '/api/v1/chart/data', every: 2 },
      }),
    ]);
    proxies.push(gwA, gwC);
    const straight = { a: await registerEnvironment(h, 'a', `${P}-a`), c: await registerEnvironment(h, 'c', `${P}-c`) };
    // Registered with the gateway off: the environment's own test at registration is not what is measured.
    const behind = { a: await register(gwA.baseUrl, 'a', `${P}-gw-a`), c: await register(gwC.baseUrl, 'c', `${P}-gw-c`) };
    const plain = await prepare(`${P}p`, straight.a, straight.c, dir);
    const proxied = await prepare(`${P}q`, behind.a, behind.c, dir);

    const run = async (env: { a: string; c: string }, src: SourceFixture) => {
      const r = await admin('POST', '/api/dashboards/migrate', {
        json: { source_env_id: env.a, target_env_id: env.c, dashboard_ids: src.dashboards.map((d) => d.id) },
      });
      expect(r.status, r.text).toBe(202);
      return waitTask(h, r.body.task_id, 480_000);
    };
    const without = await run(straight, plain);
    gwA.setShare(0.1);
    gwC.setShare(0.1);
    const withGateway = await run(behind, proxied);

    const summary = (t: any) => JSON.stringify(t.result?.items?.map((i: any) => [i.status, i.error, i.upstream_error]) ?? t.error);
    expect(without.status, summary(without)).toBe('SUCCEEDED');
    expect(withGateway.status, summary(withGateway)).toBe(without.status);
    expect(withGateway.result.items.map(outcomeOf)).toEqual(without.result.items.map(outcomeOf));
    expect(without.result.items.map((i: any) => i.status)).toEqual(['imported', 'imported', 'imported']);

    // The gateway did answer during the run, and the task's log names each retry and what came back.
    expect(gwA.faults.length + gwC.faults.length).toBeGreaterThan(0);
    expect(gwC.faults.filter((f) => f.path === '/api/v1/chart/data').length).toBeGreaterThan(0);
    const logs = (await admin('GET', `/api/tasks/${withGateway.id}/logs?limit=1000`)).body.items.map((i: any) => String(i.message));
    const retries = logs.filter((m: string) =>
      /attempt \d+ of \d+ failed \(nginx answered 50[24] (Bad Gateway|Gateway Time-out) after/.test(m),
    );
    expect(retries.length, logs.join('\n')).toBeGreaterThan(0);
    expect(logs.join('\n')).not.toMatch(/no usable error message/);
  });
});
