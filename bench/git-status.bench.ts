/**
 * Batch repository status of 100 dashboards through Switchyard (`POST /api/git/status/batch`:
 * authentication, bindings from PostgreSQL, the shared database locks, isomorphic-git scans)
 * against a native `git status --porcelain=v2 --branch` loop over the same 100 working copies,
 * in one run on one machine.
 *
 *   npm run bench:git-status [-- --repos 100 --rounds 20]
 *
 * The working copies look like real dashboard repositories: a dashboard, six charts, a dataset
 * and a database as YAML, a remote-tracking branch; a fifth have a modified chart, a tenth an
 * untracked file, a tenth are a commit ahead of the remote. Warm rounds read unchanged working
 * copies (both sides may trust their stat caches); cold rounds first change every working
 * file's mtime (neither may). Ends with one JSON line.
 */
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import knexFactory from 'knex';
import { GitRepositoryStore } from '../db/git/repositories.ts';
import { toYaml } from '../lib/git/dashboard-files.ts';
import { BENCH_ADMIN_PASSWORD, numberArg, percentile, startBenchStack, waitUntil } from './support.ts';

const REPOS = numberArg('repos', 100);
const ROUNDS = numberArg('rounds', 20);
const WARMUP = 3;
const COLD_ROUNDS = Math.max(3, Math.round(ROUNDS / 4));

function listWorkingFiles(dir: string): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((d) => d.isFile() && !path.join(d.parentPath, d.name).includes(`${path.sep}.git${path.sep}`) && !d.parentPath.endsWith('.git'))
    .map((d) => path.join(d.parentPath, d.name));
}

function git(dir: string, ...args: string[]): string {
  const r = spawnSync('git', ['-C', dir, ...args], {
    encoding: 'utf8',
    env: { ...process.env, GIT_AUTHOR_NAME: 'Bench', GIT_AUTHOR_EMAIL: 'b@x', GIT_COMMITTER_NAME: 'Bench', GIT_COMMITTER_EMAIL: 'b@x' },
  });
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

function chart(uuid: string, n: number) {
  return {
    cache_timeout: null,
    certification_details: null,
    dataset_uuid: uuid,
    description: null,
    params: {
      adhoc_filters: [],
      datasource: '12__table',
      groupby: ['region'],
      metrics: [{ expressionType: 'SQL', label: 'total', sqlExpression: 'SUM(units)' }],
      row_limit: 1000 + n,
      viz_type: 'table',
    },
    query_context: JSON.stringify({ datasource: { id: 12, type: 'table' }, queries: [{ columns: ['region'], row_limit: 1000 + n }] }),
    slice_name: `Chart ${n}`,
    uuid: randomUUID(),
    version: '1.0.0',
    viz_type: 'table',
  };
}

function makeRepo(root: string, uuid: string, i: number) {
  const dir = path.join(root, uuid);
  fs.mkdirSync(dir, { recursive: true });
  git(dir, 'init', '-q', '-b', 'main');
  const dataset = randomUUID();
  const database = randomUUID();
  const files: Record<string, unknown> = {
    'metadata.yaml': { type: 'Dashboard', version: '1.0.0' },
    [`databases/${database}.yaml`]: {
      database_name: 'warehouse',
      sqlalchemy_uri: 'sqlite:////data/warehouse.db',
      uuid: database,
      version: '1.0.0',
    },
    [`datasets/${dataset}.yaml`]: {
      columns: Array.from({ length: 12 }, (_, c) => ({
        column_name: `col_${c}`,
        type: 'TEXT',
        is_dttm: false,
        groupby: true,
        filterable: true,
      })),
      database_uuid: database,
      metrics: [{ metric_name: 'count', expression: 'COUNT(*)' }],
      schema: null,
      table_name: `sales_${i}`,
      uuid: dataset,
      version: '1.0.0',
    },
  };
  const charts = Array.from({ length: 6 }, (_, n) => chart(dataset, n));
  for (const c of charts) files[`charts/${c.uuid}.yaml`] = c;
  files[`dashboards/${uuid}.yaml`] = {
    dashboard_title: `Dashboard ${i}`,
    metadata: { color_scheme: 'supersetColors', native_filter_configuration: [] },
    position: Object.fromEntries(
      charts.map((c, n) => [`CHART-${n}`, { type: 'CHART', meta: { chartId: n + 1, uuid: c.uuid, width: 4, height: 50 } }]),
    ),
    slug: null,
    uuid,
    version: '1.0.0',
  };
  fs.writeFileSync(path.join(dir, 'README.md'), `# Dashboard ${i}\n`);
  writeYamlFiles(dir, files);
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', 'first export');
  git(dir, 'remote', 'add', 'origin', `http://127.0.0.1:9/bench/${uuid}.git`);
  git(dir, 'update-ref', 'refs/remotes/origin/main', 'HEAD');
  git(dir, 'branch', '-q', '--set-upstream-to=origin/main');
  divergeFromRemote(dir, path.join(dir, `charts/${charts[0].uuid}.yaml`), i);
  return dir;
}

function writeYamlFiles(dir: string, files: Record<string, unknown>): void {
  for (const [p, c] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, p)), { recursive: true });
    fs.writeFileSync(path.join(dir, p), toYaml(c));
  }
}

/** The i-th repository's state after its first commit: a tenth a commit ahead, a fifth a modified chart, a tenth an untracked file. */
function divergeFromRemote(dir: string, chartFile: string, i: number): void {
  if (i % 10 === 3) {
    fs.appendFileSync(chartFile, 'description: ahead\n');
    git(dir, 'commit', '-q', '-am', 'ahead of the remote');
  } else if (i % 5 === 0) {
    fs.writeFileSync(chartFile, fs.readFileSync(chartFile, 'utf8').replace('row_limit: 100', 'row_limit: 500'));
  } else if (i % 10 === 1) {
    fs.writeFileSync(path.join(dir, 'notes.txt'), 'untracked\n');
  }
}

const median = (xs: number[]) =>
  percentile(
    [...xs].sort((a, b) => a - b),
    50,
  );

type Stack = Awaited<ReturnType<typeof startBenchStack>>;
type Repo = { id: number; uuid: string; dir: string };
type Headers = Record<string, string>;
/** One timed call of each contender: Switchyard's batch endpoint and the native git loop. */
type Contenders = {
  batch: () => Promise<{ ms: number; json: { items: Record<string, { status: string }> } }>;
  native: () => { ms: number; out: string[] };
};

/** Signs in as the bench's admin and registers an environment for the repositories to be bound in. */
async function signIn(stack: Stack): Promise<{ auth: Headers; envId: string }> {
  const login = await fetch(`${stack.base}/api/auth/login`, {
    method: 'POST',
    body: new URLSearchParams({ username: 'admin', password: BENCH_ADMIN_PASSWORD }),
  });
  const token = ((await login.json()) as { access_token: string }).access_token;
  const auth = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const env = await fetch(`${stack.base}/api/environments`, {
    method: 'POST',
    headers: auth,
    body: JSON.stringify({ name: 'bench', base_url: 'http://127.0.0.1:9', username: 'u', password: 'p' }),
  });
  return { auth, envId: ((await env.json()) as { id: string }).id };
}

/** Makes the working copies and records each as a dashboard's repository bound in the environment. */
async function makeRepos(stack: Stack, dataDir: string, envId: string): Promise<Repo[]> {
  const root = path.join(dataDir, 'git');
  const started = Date.now();
  const repos: Repo[] = [];
  for (let i = 0; i < REPOS; i++) {
    const uuid = randomUUID();
    repos.push({ id: 1000 + i, uuid, dir: makeRepo(root, uuid, i) });
  }
  const knex = knexFactory({ client: 'pg', connection: stack.databaseUrl, pool: { min: 0, max: 1 } });
  const store = new GitRepositoryStore(knex);
  for (const r of repos) {
    await store.upsert({
      dashboard_uuid: r.uuid,
      title: null,
      config_id: null,
      remote_name: null,
      remote_url: `http://127.0.0.1:9/bench/${r.uuid}.git`,
      branch: 'main',
    });
    await store.bind(envId, r.id, r.uuid);
  }
  await knex.destroy();
  console.error(`${REPOS} working copies made in ${Date.now() - started} ms`);
  return repos;
}

function contenders(stack: Stack, auth: Headers, envId: string, repos: Repo[]): Contenders {
  const body = JSON.stringify({ env_id: envId, dashboard_ids: repos.map((r) => r.id) });
  const batch = async () => {
    let t = performance.now();
    // The native loop can outlast the API's keep-alive window: a socket closed under us is retried once.
    const r = await fetch(`${stack.base}/api/git/status/batch`, { method: 'POST', headers: auth, body }).catch(() => {
      t = performance.now();
      return fetch(`${stack.base}/api/git/status/batch`, { method: 'POST', headers: auth, body });
    });
    const json = (await r.json()) as { items: Record<string, { status: string }> };
    const ms = performance.now() - t;
    if (r.status !== 200) throw new Error(`batch status: ${r.status} ${JSON.stringify(json)}`);
    return { ms, json };
  };
  const native = () => {
    const t = performance.now();
    const out: string[] = [];
    for (const r of repos) out.push(git(r.dir, 'status', '--porcelain=v2', '--branch'));
    return { ms: performance.now() - t, out };
  };
  return { batch, native };
}

/** Both must see the same states: answers how many repositories are in each. */
async function checkAgreement(repos: Repo[], { batch, native }: Contenders): Promise<Record<string, number>> {
  const { json } = await batch();
  const { out } = native();
  const counts: Record<string, number> = {};
  for (const [i, r] of repos.entries()) {
    const s = json.items[String(r.id)].status;
    counts[s] = (counts[s] ?? 0) + 1;
    const n = out[i];
    const nativeState = /^[12?] /m.test(n) ? 'DIRTY' : /^# branch\.ab \+[1-9]/m.test(n) ? 'AHEAD' : 'CLEAN';
    if (nativeState !== s) throw new Error(`repository ${r.uuid}: Switchyard says ${s}, git says ${nativeState}:\n${n}`);
  }
  console.error(`states agree with native git: ${JSON.stringify(counts)}`);
  return counts;
}

async function measureWarm({ batch, native }: Contenders): Promise<{ sy: number[]; ng: number[] }> {
  for (let i = 0; i < WARMUP; i++) {
    await batch();
    native();
  }
  const sy: number[] = [];
  const ng: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    // Interleaved, so both see the same machine load.
    sy.push((await batch()).ms);
    ng.push(native().ms);
  }
  return { sy, ng };
}

/**
 * Cold: every working file gets a new (old) mtime first, so neither side can trust a stat
 * cache: Switchyard rescans with isomorphic-git, git re-hashes and rewrites its index.
 */
async function measureCold(repos: Repo[], { batch, native }: Contenders): Promise<{ syCold: number[]; ngCold: number[] }> {
  const allFiles = repos.flatMap((r) => listWorkingFiles(r.dir));
  const age = (k: number) => {
    const t = new Date(Date.UTC(2020, 0, 1, 0, 0, k));
    for (const f of allFiles) fs.utimesSync(f, t, t);
  };
  const syCold: number[] = [];
  const ngCold: number[] = [];
  for (let i = 0; i < COLD_ROUNDS; i++) {
    age(2 * i);
    syCold.push((await batch()).ms);
    age(2 * i + 1);
    ngCold.push(native().ms);
  }
  return { syCold, ngCold };
}

function report(warm: { sy: number[]; ng: number[] }, cold: { syCold: number[]; ngCold: number[] }, counts: Record<string, number>): void {
  const { sy, ng } = warm;
  const s50 = median(sy);
  const n50 = median(ng);
  const ratio = s50 / n50;
  const sc50 = median(cold.syCold);
  const nc50 = median(cold.ngCold);
  console.log(`batch status of ${REPOS} repositories, ${ROUNDS} rounds each (interleaved):`);
  console.log(`  Switchyard POST /api/git/status/batch   p50 ${s50.toFixed(1)} ms   min ${Math.min(...sy).toFixed(1)} ms`);
  console.log(`  native git status loop (${REPOS} processes) p50 ${n50.toFixed(1)} ms   min ${Math.min(...ng).toFixed(1)} ms`);
  console.log(`  ratio Switchyard / native: ${ratio.toFixed(2)}x (target at most 1.0x)`);
  console.log(`cold (every working file's mtime changed first), ${COLD_ROUNDS} rounds each:`);
  console.log(`  Switchyard p50 ${sc50.toFixed(1)} ms, native loop p50 ${nc50.toFixed(1)} ms, ratio ${(sc50 / nc50).toFixed(2)}x`);
  console.log(
    JSON.stringify({
      bench: 'git-status',
      repos: REPOS,
      rounds: ROUNDS,
      switchyard_p50_ms: Number(s50.toFixed(1)),
      native_p50_ms: Number(n50.toFixed(1)),
      ratio: Number(ratio.toFixed(3)),
      cold_switchyard_p50_ms: Number(sc50.toFixed(1)),
      cold_native_p50_ms: Number(nc50.toFixed(1)),
      cold_ratio: Number((sc50 / nc50).toFixed(3)),
      states: counts,
    }),
  );
}

async function main() {
  const dataDir = path.resolve('.data/bench-git-status');
  console.error(`starting a fresh stack in ${dataDir} ...`);
  const stack = await startBenchStack(dataDir);
  try {
    await waitUntil(async () => (await fetch(`${stack.base}/api/health`)).ok, 120_000, 'the API');
    const { auth, envId } = await signIn(stack);
    const repos = await makeRepos(stack, dataDir, envId);
    const both = contenders(stack, auth, envId, repos);
    const counts = await checkAgreement(repos, both);
    const warm = await measureWarm(both);
    const cold = await measureCold(repos, both);
    report(warm, cold, counts);
  } finally {
    await stack.stop();
  }
}

await main();
