import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig, PROJECT_ROOT } from '../lib/config.ts';
import { startInfra } from '../lib/embedded/stack.ts';
import { createLogger } from '../lib/logger.ts';
import { NODE_FLAGS } from '../lib/process-flags.ts';
import { encodeRison } from '../lib/superset/rison.ts';
import { DASHBOARD_LIST_COLUMNS } from '../lib/superset/client.ts';
import { startSuperset } from '../test/support/superset/instance.ts';
import { bareAccessToken, createUser, listDashboards, login, userIdOf, type SupersetClient } from '../test/support/superset/fixtures.ts';
import {
  BENCH_ADMIN_PASSWORD,
  benchEnv,
  numberArg,
  percentile,
  rssMb,
  spawnEntry,
  stopChild,
  stopOnInterrupt,
  waitUntil,
} from './support.ts';
import { SEARCH_ATTRIBUTES } from '../contracts/search-attributes.ts';

/**
 * The dashboard list through Switchyard against Superset's own list endpoint, in the same run, on
 * a real Superset 6.1.0 holding a few thousand dashboards (created once into
 * .data/bench-dashboards/superset-6.1.0 and reused):
 *   - unfiltered page 1 (page_context=other) vs Superset's page 1 with the same columns;
 *   - profile filter applied (bound user owns every fifth dashboard) vs Superset's own owners
 *     filter (the closest single call: Superset cannot express "owner OR last modifier");
 *   - a deep filtered page (page 20 of 25) vs Superset's page 20 with the owners filter.
 * Sequential requests after a warm-up; prints p50/p90 and the ratio Switchyard / Superset.
 * Usage: npm run bench:dashboards [-- --dashboards 3000 --rounds 40]
 */
const DASHBOARDS = numberArg('dashboards', 3000);
const ROUNDS = numberArg('rounds', 40);
const PAGE_SIZE = 25;
const BENCH_USER = 'benchbob';

async function ensureDashboards(client: SupersetClient, adminId: number, bobId: number): Promise<void> {
  const existing = () =>
    listDashboards(client, { pageSize: 1, filters: [{ col: 'dashboard_title', opr: 'title_or_slug', value: 'Bench ' }] });
  const have = (await existing()).count;
  if (have >= DASHBOARDS) return;
  const started = Date.now();
  process.stderr.write(`creating ${DASHBOARDS - have} dashboards in Superset (once; reused by later runs) ...\n`);
  const run = Date.now().toString(36);
  let next = have;
  const worker = async () => {
    while (next < DASHBOARDS) {
      const i = next++;
      const body = {
        dashboard_title: `Bench ${run} ${i}`,
        slug: `bench-${run}-${i}`,
        published: true,
        owners: i % 5 === 0 ? [adminId, bobId] : [adminId],
      };
      for (let attempt = 1; ; attempt++) {
        try {
          await client.request('POST', '/api/v1/dashboard/', { json: body });
          break;
        } catch (err) {
          // A keep-alive connection Superset closed meanwhile: the slug tells whether it got there.
          const landed = (await listDashboards(client, { pageSize: 1, filters: [{ col: 'slug', opr: 'eq', value: body.slug }] })).count > 0;
          if (landed) break;
          if (attempt >= 5) throw err;
        }
      }
      if (i % 500 === 0) process.stderr.write(`  ${i} ...\n`);
    }
  };
  await Promise.all(Array.from({ length: 4 }, worker));
  process.stderr.write(`created in ${((Date.now() - started) / 1000).toFixed(0)} s\n`);
}

async function measure(fn: () => Promise<void>): Promise<number[]> {
  for (let i = 0; i < 5; i++) await fn();
  const out: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const t0 = performance.now();
    await fn();
    out.push(performance.now() - t0);
  }
  return out.sort((a, b) => a - b);
}

type Superset = Awaited<ReturnType<typeof startSuperset>>;
type Headers = Record<string, string>;

/** PostgreSQL and Temporal, the Superset holding the dashboards, and the API as its own process. */
async function startStack() {
  const dataDir = path.join(PROJECT_ROOT, '.data', 'bench-dashboards');
  const env = await benchEnv(dataDir);
  const config = loadConfig(env);
  const logger = createLogger('warn', 'bench');
  const [infra, sup] = await Promise.all([
    startInfra(config, logger, { searchAttributes: SEARCH_ATTRIBUTES }),
    startSuperset({ version: '6.1.0', dataDir: path.join(dataDir, 'superset-6.1.0'), log: () => {} }),
  ]);
  const apiLog = process.env.BENCH_API_LOG; // e.g. BENCH_API_LOG=/tmp/api.log: the API's debug log (every Superset call)
  const apiEnv = {
    ...env,
    DATABASE_URL: infra.databaseUrl,
    TEMPORAL_ADDRESS: infra.temporalAddress,
    ...(apiLog ? { LOG_LEVEL: 'debug' } : {}),
  };
  const api = apiLog
    ? spawn(process.execPath, [...NODE_FLAGS.api, 'api/main.ts'], { env: apiEnv, stdio: ['ignore', fs.openSync(apiLog, 'w'), 'inherit'] })
    : spawnEntry('api/main.ts', NODE_FLAGS.api, apiEnv);
  const base = `http://127.0.0.1:${config.PORT}`;
  const stop = stopOnInterrupt(async () => {
    await stopChild(api);
    await sup.stop();
    await infra.stop();
  });
  return { sup, api, base, stop };
}

/** The bound user and the dashboards in Superset (made once), with how many there are and how many the user owns. */
async function prepareSuperset(sup: Superset): Promise<{ bobId: number; total: number; bobTotal: number }> {
  const sc = await login(sup.baseUrl, sup.username, sup.password);
  const users = await sc.request<{ result: Array<{ id: number; username: string }> }>('GET', '/api/v1/security/users/', {
    q: { filters: [{ col: 'username', opr: 'eq', value: BENCH_USER }] },
  });
  const bobId =
    users.result[0]?.id ??
    (await createUser(sc, { username: BENCH_USER, password: 'bench-bob-pw', firstName: 'Bench', lastName: 'Bob' })).id;
  await ensureDashboards(sc, await userIdOf(sc, sup.username), bobId);
  const total = (await listDashboards(sc, { pageSize: 1 })).count;
  const bobTotal = (await listDashboards(sc, { pageSize: 1, filters: [{ col: 'owners', opr: 'rel_m_m', value: bobId }] })).count;
  return { bobId, total, bobTotal };
}

/** Signs in to Switchyard, registers the Superset and turns the profile filter on for the bound user. */
async function signIn(base: string, sup: Superset): Promise<{ headers: Headers; envId: string }> {
  await waitUntil(async () => (await fetch(`${base}/api/health`)).ok, 120_000, 'API up');
  const token = (
    (await (
      await fetch(`${base}/api/auth/login`, {
        method: 'POST',
        body: new URLSearchParams({ username: 'admin', password: BENCH_ADMIN_PASSWORD }),
      })
    ).json()) as {
      access_token: string;
    }
  ).access_token;
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const envRes = await fetch(`${base}/api/environments`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ name: `bench-${Date.now()}`, base_url: sup.baseUrl, username: sup.username, password: sup.password }),
  });
  const envId = ((await envRes.json()) as { id: string }).id;
  await fetch(`${base}/api/profile/preferences`, {
    method: 'PATCH',
    headers,
    body: JSON.stringify({ profile_filter_enabled: true, superset_username: BENCH_USER }),
  });
  return { headers, envId };
}

/** Superset directly: the same list call Switchyard makes, with a bearer token, over keep-alive fetch. */
async function directList(sup: Superset): Promise<(page: number, filters?: unknown[]) => Promise<void>> {
  const supersetToken = await bareAccessToken(sup.baseUrl, sup.username, sup.password);
  return async (page: number, filters: unknown[] = []) => {
    const q = encodeRison({
      filters,
      columns: DASHBOARD_LIST_COLUMNS,
      order_column: 'changed_on',
      order_direction: 'desc',
      page,
      page_size: PAGE_SIZE,
      keys: ['none'],
    });
    const r = await fetch(`${sup.baseUrl}/api/v1/dashboard/?q=${encodeURIComponent(q)}`, {
      headers: { authorization: `Bearer ${supersetToken}`, accept: 'application/json' },
    });
    if (!r.ok) throw new Error(`superset ${r.status}`);
    await r.json();
  };
}

function apiList(base: string, headers: Headers, envId: string): (query: string, expectTotal?: number) => Promise<void> {
  return async (query: string, expectTotal?: number) => {
    const r = await fetch(`${base}/api/dashboards?env_id=${envId}&page_size=${PAGE_SIZE}&${query}`, { headers });
    const body = (await r.json()) as { total: number };
    if (r.status !== 200) throw new Error(`switchyard ${r.status} ${JSON.stringify(body)}`);
    if (expectTotal !== undefined && body.total < expectTotal)
      throw new Error(`unexpected total ${body.total}: ${JSON.stringify(body).slice(0, 600)}`);
  };
}

function report(rows: Array<[string, number[], number[]]>, total: number, bobTotal: number, apiPid: number): void {
  const f = (n: number) => n.toFixed(1);
  console.log(
    `\nGET /api/dashboards vs Superset's GET /api/v1/dashboard/ (Superset 6.1.0, gunicorn 1 worker x 8 threads, SQLite metadata; ${total} dashboards, the bound user owns ${bobTotal}; page_size ${PAGE_SIZE}; ${ROUNDS} sequential requests after 5 warm-up; ${process.platform}, ${os.cpus().length} cores)`,
  );
  console.log(
    `  ${'case'.padEnd(26)} ${'Superset p50'.padStart(13)} ${'p90'.padStart(8)}  ${'Switchyard p50'.padStart(15)} ${'p90'.padStart(8)}  ratio (p50)`,
  );
  for (const [name, s, w] of rows) {
    console.log(
      `  ${name.padEnd(26)} ${f(percentile(s, 50)).padStart(10)} ms ${f(percentile(s, 90)).padStart(5)} ms  ${f(percentile(w, 50)).padStart(12)} ms ${f(percentile(w, 90)).padStart(5)} ms  ${(percentile(w, 50) / percentile(s, 50)).toFixed(2)}x`,
    );
  }
  const rss = rssMb(apiPid);
  console.log(`  API resident memory at the end: ${f(rss)} MB`);
  // The last line, one JSON object, as every bench ends (docs/benchmarks.md).
  const ms = (xs: number[], p: number) => +percentile(xs, p).toFixed(1);
  console.log(
    JSON.stringify({
      dashboards: total,
      bound_user_owns: bobTotal,
      page_size: PAGE_SIZE,
      rounds: ROUNDS,
      cores: os.cpus().length,
      cases: rows.map(([name, s, w]) => ({
        case: name,
        superset_p50_ms: ms(s, 50),
        superset_p90_ms: ms(s, 90),
        switchyard_p50_ms: ms(w, 50),
        switchyard_p90_ms: ms(w, 90),
        ratio_p50: +(percentile(w, 50) / percentile(s, 50)).toFixed(2),
      })),
      api_rss_mb: +rss.toFixed(1),
    }),
  );
}

async function main() {
  const { sup, api, base, stop } = await startStack();
  try {
    const { bobId, total, bobTotal } = await prepareSuperset(sup);
    const { headers, envId } = await signIn(base, sup);
    const direct = await directList(sup);
    const viaApi = apiList(base, headers, envId);
    const owners = [{ col: 'owners', opr: 'rel_m_m', value: bobId }];

    const rows: Array<[string, number[], number[]]> = [];
    rows.push(['unfiltered, page 1', await measure(() => direct(0)), await measure(() => viaApi('page=1&page_context=other', total))]);
    rows.push(['profile filter, page 1', await measure(() => direct(0, owners)), await measure(() => viaApi('page=1', bobTotal))]);
    rows.push(['profile filter, page 20', await measure(() => direct(19, owners)), await measure(() => viaApi('page=20', bobTotal))]);
    report(rows, total, bobTotal, api.pid!);
  } finally {
    await stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
