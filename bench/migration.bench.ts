import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PROJECT_ROOT } from '../lib/config.ts';
import { SupersetClient } from '../lib/superset/client.ts';
import {
  createBigNumberChart,
  createDashboard,
  createDataset,
  createSqliteDatabase,
  createTableChart,
  login,
  sqlMetric,
} from '../test/support/superset/fixtures.ts';
import { startSuperset } from '../test/support/superset/instance.ts';
import { cpuSnapshot, cpuSpent, type CpuGroups } from './cpu.ts';
import { BENCH_ADMIN_PASSWORD, numberArg, startBenchStack, stopOnInterrupt, waitUntil } from './support.ts';
import { medians, roundFigures, summary, type Figures, type Growth, type Migrated, type Round } from './migration-figures.ts';

/**
 * A migration of N dashboards through Switchyard (export, remap, collision checks, import,
 * verification of every chart query, as a Temporal task) against the bare Superset export and
 * import calls for the same dashboards, in one run on real Superset 6.1.0 instances: one source and an empty target per contender.
 * Usage: npm run bench:migration [-- --dashboards 10] [-- --growth 100] [-- --distinct-charts] [-- --warm-up 2] [-- --rounds 3]
 *   [-- --metadata postgresql] (the Supersets' metadata in PostgreSQL, as production keeps it, instead of SQLite;
 *   each instance's own cluster, whose CPU counts in `temporal_postgres`)
 * Every dashboard's two charts ask the same two queries unless --distinct-charts gives each chart
 * a query of its own (a chart check sends a query several charts share once).
 * With --growth G, G more dashboards are migrated fresh afterwards (Switchyard, its two reruns, and
 * bare), and the bench prints how time grows from N to G: a growth factor of 1 is linear, below 1 better.
 * Before anything is measured each contender copies W more dashboards of the same shape
 * (--warm-up W, 2 by default; 0 measures Switchyard's first task since its start, as rows up to
 * 87 of docs/benchmarks.md did): a first call of a kind costs a fresh process more, in Superset
 * (compiled statements, schemas) as in Switchyard (its workflow sandbox, modules, compiled code),
 * and without it only the contender measured first paid for it, while the bare calls found the
 * source Superset warmed by Switchyard's two tasks. What the warm-up took is printed apart.
 * The N-dashboard figures are measured in R rounds (--rounds R, 3 by default), each on N
 * dashboards of its own: Switchyard's migration, its rerun (the default: each unchanged dashboard's
 * target verified again), its rerun with `verification: "if_changed"` (the last verification
 * carried), then the bare calls, back to back, so
 * the two contenders of a round meet the same machine. One run's ratio scattered by ±15% here
 * (rows up to 87); each figure printed is the median of the rounds' (a round's ratio pairs its own
 * migration with its own bare copy), `rounds` lists every round's, and `cpu_s` is the round whose
 * ratio is the median.
 * The final JSON line's `table` holds issue 30's four figures (`--dashboards 10 --growth 1000` for
 * the third) and issue 50's rerun figures (`rerun_ratio`, `rerun_if_changed_ratio`,
 * `growth_rerun_ratio`, `growth_rerun_if_changed_ratio`), its `goals` whether each is met, `load` the load average at the start and end, and
 * `cpu_s` the CPU seconds each part of the stack spent on the first migration, its rerun and the
 * bare copy (./cpu.ts: on two cores, a run that keeps both busy is bound by their sum).
 */
const N = numberArg('dashboards', 10);
const G = numberArg('growth', 0);
const DISTINCT = process.argv.includes('--distinct-charts');
const W = numberArg('warm-up', 2);
const R = Math.max(1, numberArg('rounds', 3));
const METADATA =
  process.argv.includes('--metadata') && process.argv[process.argv.indexOf('--metadata') + 1] === 'postgresql' ? 'postgresql' : 'sqlite';

type Superset = Awaited<ReturnType<typeof startSuperset>>;
type Post = (p: string, body: unknown, method?: string) => Promise<Record<string, any>>;
/** Fixtures: R × N + G + W dashboards of two charts each on a SQLite database in a; a target database in b. */
async function makeFixtures(dir: string, sa: Superset, sb: Superset) {
  const a = await login(sa.baseUrl, sa.username, sa.password);
  const b = await login(sb.baseUrl, sb.username, sb.password);
  const srcDb = await createSqliteDatabase(a, { name: 'bench_src', path: path.join(dir, 'src.db') });
  const dstDb = await createSqliteDatabase(b, { name: 'bench_dst', path: path.join(dir, 'dst.db') });
  const ds = await createDataset(a, { database: srcDb.id, tableName: 'sales' });
  const all: number[] = [];
  for (let i = 0; i < R * N + G + W; i++) {
    // With --distinct-charts each chart asks its own query: its own row limit, its own metric.
    const t = await createTableChart(a, {
      name: `bench rows ${i}`,
      datasetId: ds.id,
      columns: ['ds', 'region', 'units'],
      ...(DISTINCT ? { rowLimit: 100 + i } : {}),
    });
    const metric = DISTINCT ? sqlMetric(`SUM(units) + ${i}`, `units ${i}`) : sqlMetric('SUM(units)', 'units');
    const g = await createBigNumberChart(a, { name: `bench total ${i}`, datasetId: ds.id, metric });
    all.push((await createDashboard(a, { title: `bench ${i}`, slug: `bench-${i}`, charts: [t, g] })).id);
  }
  return {
    rounds: Array.from({ length: R }, (_, r) => all.slice(r * N, (r + 1) * N)),
    grown: all.slice(R * N, R * N + G),
    warmUp: all.slice(R * N + G),
    srcDbId: srcDb.id,
    dstDbId: dstDb.id,
  };
}

/** Signs in to Switchyard and registers a (the source) and b (Switchyard's target) with their database mapping. */
async function registerEnvironments(base: string, sa: Superset, sb: Superset, dbs: { srcDbId: number; dstDbId: number }) {
  await waitUntil(async () => (await fetch(`${base}/api/ready`)).ok, 120_000, 'API ready');
  const token = (
    (await (
      await fetch(`${base}/api/auth/login`, {
        method: 'POST',
        body: new URLSearchParams({ username: 'admin', password: BENCH_ADMIN_PASSWORD }),
      })
    ).json()) as { access_token: string }
  ).access_token;
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const post: Post = async (p, body, method = 'POST') => {
    const r = await fetch(base + p, { method, headers, body: JSON.stringify(body) });
    const j = (await r.json()) as Record<string, any>;
    if (r.status >= 300) throw new Error(`${p}: ${r.status} ${JSON.stringify(j)}`);
    return j;
  };
  const envA = (await post('/api/environments', { name: 'bench-a', base_url: sa.baseUrl, username: sa.username, password: sa.password }))
    .id;
  const envB = (await post('/api/environments', { name: 'bench-b', base_url: sb.baseUrl, username: sb.username, password: sb.password }))
    .id;
  await post(
    `/api/environments/${envA}/db-mappings/${envB}`,
    { mappings: [{ source_database_id: dbs.srcDbId, target_database_id: dbs.dstDbId }] },
    'PUT',
  );
  return { headers, post, envA, envB };
}

/** Runs one migration task from a to b and waits for its end; its log is kept in the bench folder. */
async function runMigration(
  ctx: { base: string; dir: string; headers: Record<string, string>; post: Post; envA: string; envB: string; cpu: CpuGroups },
  dashboardIds: number[],
  extra: Record<string, unknown> = {},
): Promise<Migrated> {
  const { base, dir, headers, post } = ctx;
  const cpuBefore = cpuSnapshot(ctx.cpu);
  const t0 = performance.now();
  const { task_id } = await post('/api/dashboards/migrate', {
    source_env_id: ctx.envA,
    target_env_id: ctx.envB,
    dashboard_ids: dashboardIds,
    ...extra,
  });
  let task: Record<string, any> = {};
  await waitUntil(
    async () => {
      task = (await (await fetch(`${base}/api/tasks/${task_id}`, { headers })).json()) as Record<string, any>;
      return ['SUCCEEDED', 'FAILED', 'CANCELLED'].includes(task.status);
    },
    900_000,
    'the migration',
    // Polled gently: the task's time is its own record's (below), so how soon its end is seen does not count,
    // and a fast poll would load the machine (API and database) while only Switchyard is measured.
    250,
  );
  const cpu = cpuSpent(cpuBefore, cpuSnapshot(ctx.cpu));
  // From the task's creation to its end, as the service recorded them (one clock, no polling delay).
  const recorded = (Date.parse(task.finished_at) - Date.parse(task.created_at)) / 1000;
  const seconds = Number.isFinite(recorded) && recorded > 0 ? recorded : (performance.now() - t0) / 1000;
  // The task's log, kept for reading where the time went (the worker writes its lines in
  // batches: the last ones reach the table shortly after the task ends).
  await new Promise((r) => setTimeout(r, 1500));
  const logs = await (await fetch(`${base}/api/tasks/${task_id}/logs?limit=1000`, { headers })).json();
  fs.writeFileSync(path.join(dir, `task-${task_id}.log.json`), JSON.stringify(logs, null, 1));
  if (task.status !== 'SUCCEEDED') throw new Error(`migration ended ${task.status}: ${JSON.stringify(task.error)}`);
  const states = (task.result.items ?? []).map((i: Record<string, any>) => i.verification_state?.state);
  return {
    seconds,
    unchanged: Number(task.result.totals?.unchanged ?? 0),
    verified: states.filter((s: unknown) => s === 'verified').length,
    carried: states.filter((s: unknown) => s === 'carried').length,
    // The verification's time after the last import, as the task reports it (the rest ran beside the imports).
    verificationSeconds: Number(task.result.timings?.verification_ms ?? 0) / 1000,
    cpu,
  };
}

/** Bare Superset: export each dashboard from a and import it into c (overwrite), nothing else; its time and the CPU it spent. */
async function bareCopy(
  ca: SupersetClient,
  cb: SupersetClient,
  ids: number[],
  groups: CpuGroups,
): Promise<{ seconds: number; cpu: Record<string, number> }> {
  const before = cpuSnapshot(groups);
  const t0 = performance.now();
  for (const id of ids) await cb.importBundle('dashboard', await ca.exportDashboards([id]), { overwrite: true });
  const seconds = (performance.now() - t0) / 1000;
  return { seconds, cpu: cpuSpent(before, cpuSnapshot(groups)) };
}

/** The peer: preset-cli, as its users run it (export the dashboards' assets, then sync them in); null when it is missing or fails. */
async function presetCliCopy(dir: string, sa: Superset, sd: Superset, ids: number[]): Promise<number | null> {
  const cli = path.join(PROJECT_ROOT, '.tools', 'preset-cli', 'venv', 'bin', 'superset-cli');
  if (!fs.existsSync(cli)) {
    process.stderr.write('preset-cli is not installed (npm run setup:preset-cli): its column stays empty\n');
    return null;
  }
  const out = path.join(dir, 'preset-cli-export');
  fs.mkdirSync(out, { recursive: true });
  const t1 = performance.now();
  try {
    await runTool(cli, [
      '-u',
      sa.username,
      '-p',
      sa.password,
      '--loglevel',
      'ERROR',
      sa.baseUrl,
      'export-assets',
      out,
      '--asset-type',
      'dashboard',
      '--dashboard-ids',
      ids.join(','),
    ]);
    await runTool(cli, ['-u', sd.username, '-p', sd.password, '--loglevel', 'ERROR', sd.baseUrl, 'sync', 'native', out, '--overwrite']);
    return (performance.now() - t1) / 1000;
  } catch (err) {
    // The peer failing is its own result: the other figures are still printed.
    fs.writeFileSync(path.join(dir, 'preset-cli.err'), (err as Error).message);
    process.stderr.write(
      `preset-cli failed, its column stays empty (whole output: ${path.join(dir, 'preset-cli.err')}): ${(err as Error).message.slice(-600)}\n`,
    );
    return null;
  }
}

function report(figures: Figures): void {
  const { presetCli, growth } = figures;
  const m = medians(figures.rounds);
  const bare = m.bare_s;
  const first = m.switchyard_s + m.verification_s;
  const again = m.rerun_s;
  const f = (n: number) => n.toFixed(2);
  console.log(
    `\nmigration of ${N} dashboards (2 charts each${DISTINCT ? ', each chart its own query' : ', the same two queries'}) from one real Superset 6.1.0 into empty ones (one per contender), the median of ${R} round(s)`,
  );
  console.log(
    figures.warmUp
      ? `  warm-up, ${W} dashboards each       Switchyard ${f(figures.warmUp.switchyard.seconds)} s (its first task since it started), bare ${f(figures.warmUp.bare)} s: not counted below`
      : "  no warm-up (--warm-up 0): Switchyard's first task since it started, and the first export and import of both Supersets, are measured",
  );
  console.log(`  bare Superset export + import      ${f(bare)} s  (${f(bare / N)} s per dashboard)`);
  console.log(
    `  Switchyard migration task          ${f(first)} s  (${f(first / N)} s per dashboard; ratio ${f(m.ratio_with_verification)}x)`,
  );
  console.log(`    of which chart-query verification after the last import ${f(m.verification_s)} s  (without it: ratio ${f(m.ratio)}x)`);
  console.log(
    `  Switchyard re-run (converges)      ${f(again)} s  (ratio ${f(m.rerun_ratio)}x; at least ${m.unchanged} of ${N} unchanged, not imported; ${m.reverified} with their target verified again)`,
  );
  console.log(
    `  re-run, verification if_changed    ${f(m.rerun_if_changed_s)} s  (ratio ${f(m.rerun_if_changed_ratio)}x; at least ${m.carried} of ${N} carried their last verification)`,
  );
  const each = figures.rounds.map(roundFigures);
  console.log(
    `  each round's ratios                ${each.map((e) => `${f(e.ratio)} / ${f(e.ratio_with_verification)} / ${f(e.rerun_ratio)} / ${f(e.rerun_if_changed_ratio)}`).join(';  ')}  (without verification / with it / rerun / rerun if_changed)`,
  );
  console.log(
    `  preset-cli export-assets + sync    ${presetCli === null ? 'not run' : `${f(presetCli)} s  (ratio ${f(presetCli / bare)}x)`}`,
  );
  if (growth)
    console.log(
      `  growth ${N} → ${G} dashboards        Switchyard ${f(growth.switchyard_s)} s (per-dashboard time x${f(growth.factor)}), bare ${f(growth.bare_s)} s (x${f(growth.bare_factor)}); x1.00 is linear`,
    );
  if (growth)
    console.log(
      `    ${G} dashboards rerun: ${f(growth.rerun_s)} s (ratio ${f(growth.rerun_s / growth.bare_s)}x), if_changed ${f(growth.rerun_if_changed_s)} s (ratio ${f(growth.rerun_if_changed_s / growth.bare_s)}x)`,
    );
  if (growth)
    console.log(
      `    ${G} dashboards: Switchyard without verification ${f(growth.switchyard_s - growth.verification_s)} s (ratio ${f((growth.switchyard_s - growth.verification_s) / growth.bare_s)}x), verification ${f(growth.verification_s)} s, with it ratio ${f(growth.switchyard_s / growth.bare_s)}x`,
    );
  const cpuLine = (c: Record<string, number>) =>
    Object.entries(c)
      .filter(([k]) => k !== 'preset_cli_target')
      .map(([k, v]) => `${k} ${f(v)}`)
      .join(', ');
  console.log(`  CPU seconds, first migration: ${cpuLine(m.middle.first.cpu)}  (the median round)`);
  console.log(`  CPU seconds, its rerun:       ${cpuLine(m.middle.again.cpu)}`);
  console.log(`  CPU seconds, bare copy:       ${cpuLine(m.middle.bareCpu)}`);
  console.log('  Switchyard adds: a plan per object (lookups and an export of the target for differences), collision checks,');
  console.log('  the intent row, and a verification that runs every chart query in the source and the target, beside the imports.');
  console.log(JSON.stringify(summary(figures, { N, G, W, DISTINCT })));
}

type Ctx = Parameters<typeof runMigration>[0];

/** Each round: Switchyard's migration of its dashboards, their rerun (target verified again), their rerun with if_changed, then the bare calls' copy of them. */
async function measureRounds(ctx: Ctx, bare: { ca: SupersetClient; cb: SupersetClient }, each: number[][]): Promise<Round[]> {
  const rounds: Round[] = [];
  for (const ids of each) {
    const first = await runMigration(ctx, ids);
    const again = await runMigration(ctx, ids);
    const ifChanged = await runMigration(ctx, ids, { verification: 'if_changed' });
    const copied = await bareCopy(bare.ca, bare.cb, ids, ctx.cpu);
    rounds.push({ first, again, ifChanged, bare: copied.seconds, bareCpu: copied.cpu });
  }
  return rounds;
}

/** Growth: G dashboards never migrated before, through Switchyard (and its two reruns), then bare (both from scratch). */
async function measureGrowth(
  ctx: Ctx,
  bare: { ca: SupersetClient; cb: SupersetClient },
  grown: number[],
  m: ReturnType<typeof medians>,
): Promise<Growth> {
  const grownRun = await runMigration(ctx, grown);
  const grownRerun = await runMigration(ctx, grown);
  const grownIfChanged = await runMigration(ctx, grown, { verification: 'if_changed' });
  const grownBare = (await bareCopy(bare.ca, bare.cb, grown, ctx.cpu)).seconds;
  // Time per dashboard at G over time per dashboard at N: 1 is linear, above 1 worse than linear.
  return {
    switchyard_s: grownRun.seconds,
    verification_s: grownRun.verificationSeconds,
    bare_s: grownBare,
    factor: grownRun.seconds / G / ((m.switchyard_s + m.verification_s) / N),
    bare_factor: grownBare / G / (m.bare_s / N),
    rerun_s: grownRerun.seconds,
    rerun_if_changed_s: grownIfChanged.seconds,
  };
}

async function main() {
  const loadAtStart = os.loadavg()[0]!;
  const dir = path.join(PROJECT_ROOT, '.data', 'bench-migration');
  fs.rmSync(dir, { recursive: true, force: true });
  const quiet = () => {};
  // a: the source; b: Switchyard's target; c: the bare calls' target; d: preset-cli's target. Each
  // target starts empty, so every contender creates the same objects (an import over existing
  // ones costs Superset less than a first one).
  const [sa, sb, sc, sd] = await Promise.all(
    ['a', 'b', 'c', 'd'].map((n) =>
      startSuperset({ version: '6.1.0', dataDir: path.join(dir, `superset-${n}`), fresh: true, log: quiet, metadata: METADATA }),
    ),
  );
  const stopSupersets = stopOnInterrupt(() => Promise.all([sa, sb, sc, sd].map((x) => x.stop())));
  const stack = await startBenchStack(path.join(dir, 'switchyard'));
  const { base } = stack;
  try {
    const fixtures = await makeFixtures(dir, sa, sb);
    const { grown } = fixtures;
    // Each Superset's process group, Switchyard's processes, and the rest the bench started (Temporal, PostgreSQL).
    const cpu: CpuGroups = {
      groups: {
        source_superset: [sa.pid],
        target_superset: [sb.pid, sc.pid],
        preset_cli_target: [sd.pid],
        switchyard: stack.processes.map((p) => p.child.pid!).filter(Boolean),
      },
      rest: { name: 'temporal_postgres', root: process.pid },
    };
    const ctx = { base, dir, cpu, ...(await registerEnvironments(base, sa, sb, fixtures)) };
    const ca = new SupersetClient({ baseUrl: sa.baseUrl, username: sa.username, password: sa.password });
    const cb = new SupersetClient({ baseUrl: sc.baseUrl, username: sc.username, password: sc.password });
    // Each contender's first copy, into its own target, before any is measured (W above).
    const warmUp =
      W > 0 ? { switchyard: await runMigration(ctx, fixtures.warmUp), bare: (await bareCopy(ca, cb, fixtures.warmUp, cpu)).seconds } : null;
    const rounds = await measureRounds(ctx, { ca, cb }, fixtures.rounds);
    const growth = G > 0 ? await measureGrowth(ctx, { ca, cb }, grown, medians(rounds)) : null;
    ca.close();
    cb.close();
    const presetCli = await presetCliCopy(dir, sa, sd, fixtures.rounds[0]!);
    report({ rounds, presetCli, growth, load: [loadAtStart, os.loadavg()[0]!], warmUp });
  } finally {
    await stack.stop();
    await stopSupersets();
  }
}

function runTool(cmd: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    // preset-cli prints Superset's own messages on stdout: both are kept for the failure.
    const c = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let err = '';
    c.stdout.on('data', (d: Buffer) => (err += d.toString()));
    c.stderr.on('data', (d: Buffer) => (err += d.toString()));
    c.once('exit', (code) =>
      code === 0
        ? resolve()
        : reject(new Error(`${path.basename(cmd)} ${args.slice(4, 6).join(' ')} exited ${code}: ${err.slice(-20000)}`)),
    );
  });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
