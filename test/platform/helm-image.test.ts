import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import knexFactory from 'knex';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { PROJECT_ROOT } from '../../lib/config.ts';
import { freePort } from '../../lib/embedded/free-port.ts';
import { withDatabase } from '../../lib/embedded/postgres.ts';
import { stopProcess } from '../support/worker-process.ts';
import { waitFor } from '../support/harness.ts';

/**
 * The image the Helm chart runs, without a Docker engine: the Dockerfile's runtime stage replayed
 * in a temporary folder (its WORKDIR), instruction by instruction, with the build context that
 * .dockerignore leaves; the build stage's products (the console and the typed client) are this
 * checkout's, which `npm install` made with the same commands. Then the pod's life as the chart
 * runs it, as the image's numeric USER, for whom the folder is not writable (the chart's read-only
 * root filesystem) with a data folder and TMPDIR of its own: the init step's
 * `node scripts/migrate.ts`, the API and a worker with the chart's commands, until /api/ready.
 */
interface Instruction {
  keyword: string;
  args: string;
}

/** The Dockerfile's instructions per stage (comments and blank lines dropped, `\` continuations joined). */
function stages(text: string): Instruction[][] {
  const logical = text.replace(/\\\n/g, ' ').split('\n');
  const out: Instruction[][] = [];
  for (const line of logical.map((l) => l.trim()).filter((l) => l && !l.startsWith('#'))) {
    const [, keyword, args] = /^(\S+)\s+(.*)$/.exec(line)!;
    if (keyword!.toUpperCase() === 'FROM') out.push([]);
    out.at(-1)!.push({ keyword: keyword!.toUpperCase(), args: args! });
  }
  return out;
}

const dockerfile = fs.readFileSync(path.join(PROJECT_ROOT, 'Dockerfile'), 'utf8');
const runtime = stages(dockerfile).at(-1)!;
let app: string;
let dataDir: string;
let uid: number;
/** As root (CI), the processes run as the image's user, for whom the root-owned copy is not writable. */
const asRoot = process.getuid?.() === 0;
const env: Record<string, string> = {};
const children: ChildProcess[] = [];
const nodeBin = process.execPath;

/** COPY . . with .dockerignore's entries (plain paths here: the test refuses a pattern it cannot read as one). */
function copyContext(to: string): void {
  const ignored = fs
    .readFileSync(path.join(PROJECT_ROOT, '.dockerignore'), 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
  for (const entry of ignored) expect(entry, '.dockerignore entries are plain paths for this replay').toMatch(/^[\w.\-/]+$/);
  fs.cpSync(PROJECT_ROOT, to, { recursive: true, filter: (src) => !ignored.includes(path.relative(PROJECT_ROOT, src)) });
}

function replay(i: Instruction): void {
  switch (i.keyword) {
    case 'FROM':
      expect(i.args).toMatch(/^node:24-/); // the Node the project runs on (package.json engines)
      return;
    case 'WORKDIR':
      return;
    case 'RUN':
      if (i.args.startsWith('apt-get')) {
        // System packages of the image: the ones the processes use must be there.
        for (const p of i.args
          .match(/(?<=--no-install-recommends\s)[^&]+/)![0]!
          .trim()
          .split(/\s+/))
          if (p === 'git') execFileSync('git', ['--version']);
        return;
      }
      execFileSync('sh', ['-c', i.args], {
        cwd: app,
        env: { ...process.env, PATH: `${path.dirname(nodeBin)}:${process.env.PATH}` },
        stdio: 'pipe',
      });
      return;
    case 'COPY': {
      const from = /^--from=build\s+(.*)$/.exec(i.args);
      const parts = (from ? from[1]! : i.args).split(/\s+/);
      const dest = path.resolve(app, parts.pop()!);
      if (!from && parts.join(' ') === '.') return copyContext(app);
      for (const src of parts) {
        const source = from ? path.join(PROJECT_ROOT, path.relative('/app', src)) : path.join(PROJECT_ROOT, src);
        const target = dest.endsWith('/') || parts.length > 1 || fs.existsSync(dest) ? path.join(dest, path.basename(src)) : dest;
        fs.mkdirSync(path.dirname(target), { recursive: true });
        fs.cpSync(source, target, { recursive: true });
      }
      return;
    }
    case 'ENV':
      for (const [, k, v] of i.args.matchAll(/(\w+)=(\S+)/g)) env[k!] = v!;
      return;
    case 'USER':
      expect(i.args, 'a numeric user, so Kubernetes can check runAsNonRoot').toMatch(/^[1-9]\d*(:\d+)?$/);
      uid = Number(i.args.split(':')[0]);
      return;
    case 'CMD':
      expect(JSON.parse(i.args)).toEqual(['npm', 'run', 'api']);
      return;
    default:
      throw new Error(`the replay does not know the Dockerfile instruction ${i.keyword} ${i.args}`);
  }
}

beforeAll(() => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'switchyard-image-'));
  fs.chmodSync(root, 0o755);
  app = path.join(root, 'app');
  fs.mkdirSync(app);
  for (const i of runtime) replay(i);
  dataDir = path.join(root, 'data');
  fs.mkdirSync(path.join(dataDir, 'tmp'), { recursive: true });
  if (asRoot) execFileSync('chown', ['-R', `${uid}:${uid}`, dataDir]);
  // Without root (a developer's machine) the processes run as this user, on a folder made read-only.
  else execFileSync('chmod', ['-R', 'a-w', app]);
}, 15 * 60_000);

afterAll(async () => {
  await Promise.all(children.map((c) => stopProcess(c)));
  if (!app) return;
  if (!asRoot) execFileSync('chmod', ['-R', 'u+w', app]);
  fs.rmSync(path.dirname(app), { recursive: true, force: true });
});

function start(args: string[], extra: Record<string, string>, quiet = false): ChildProcess {
  const child = spawn(nodeBin, args, {
    cwd: app,
    ...(asRoot ? { uid, gid: uid } : {}),
    env: { PATH: process.env.PATH!, HOME: '/nonexistent', TMPDIR: path.join(dataDir, 'tmp'), ...env, ...extra },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.resume();
  child.stderr!.on('data', (c) => quiet || process.stderr.write(c));
  children.push(child);
  return child;
}

const exited = (c: ChildProcess) => new Promise<number | null>((res) => c.once('exit', res));

describe('the image the chart runs', () => {
  it('holds production dependencies only, its built console, client and workflow bundle, and none of the host node_modules', () => {
    expect(fs.existsSync(path.join(app, 'node_modules', 'koa'))).toBe(true);
    expect(fs.existsSync(path.join(app, 'node_modules', 'vitest'))).toBe(false);
    expect(fs.existsSync(path.join(app, 'web', 'dist', 'index.html'))).toBe(true);
    expect(fs.existsSync(path.join(app, 'client', 'openapi.json'))).toBe(true);
    expect(env.SWITCHYARD_WORKFLOW_BUNDLE).toBe('/app/dist/workflow-bundle.js');
    expect(fs.statSync(path.join(app, 'dist', 'workflow-bundle.js')).size).toBeGreaterThan(100_000);
    expect(fs.existsSync(path.join(app, '.data'))).toBe(false);
  });

  it('migrates in the init step, then the API and a worker start as its user on a read-only folder and the API turns ready', async () => {
    const name = `t_img_${randomBytes(5).toString('hex')}`;
    const admin = knexFactory({ client: 'pg', connection: inject('pgAdminUrl'), pool: { min: 0, max: 1 } });
    await admin.raw(`create database ${name}`);
    await admin.destroy();
    const [port, metricsPort, workerMetricsPort] = await Promise.all([freePort(), freePort(), freePort()]);
    const settings = {
      DATABASE_URL: withDatabase(inject('pgAdminUrl'), name),
      TEMPORAL_ADDRESS: inject('temporalAddress'),
      TEMPORAL_TASK_QUEUE: `tq-${name}`,
      SWITCHYARD_SECRET_KEY: 'image-test-secret-key-0123456789abcdef',
      SWITCHYARD_ADMIN_PASSWORD: 'image-test-admin-password',
      SWITCHYARD_DATA_DIR: dataDir,
      // The image's bundle path is /app/...; here the replayed WORKDIR stands for /app.
      SWITCHYARD_WORKFLOW_BUNDLE: path.join(app, 'dist', 'workflow-bundle.js'),
      DATABASE_MIGRATE_AT_START: 'false',
      HOST: '127.0.0.1',
      PORT: String(port),
      METRICS_PORT: String(metricsPort),
      WORKER_METRICS_PORT: String(workerMetricsPort),
      LOG_FORMAT: 'json',
    };
    // The image's user cannot write into its folder, as on the chart's read-only root filesystem.
    const probe = start(['-e', "require('node:fs').writeFileSync('probe', 'x')"], {}, true);
    expect(await exited(probe)).not.toBe(0);
    expect(fs.existsSync(path.join(app, 'probe'))).toBe(false);
    const migrate = start(['scripts/migrate.ts'], settings);
    expect(await exited(migrate)).toBe(0);

    const scripts = JSON.parse(fs.readFileSync(path.join(app, 'package.json'), 'utf8')).scripts as Record<string, string>;
    const api = start(scripts.api!.split(/\s+/).slice(1), settings);
    const worker = start(scripts.worker!.split(/\s+/).slice(1), settings);
    const base = `http://127.0.0.1:${port}`;
    const ready = await waitFor(
      async () => {
        if (api.exitCode !== null || worker.exitCode !== null) throw new Error(`exited: api ${api.exitCode}, worker ${worker.exitCode}`);
        const r = await fetch(`${base}/api/ready`).catch(() => undefined);
        return r?.status === 200 ? ((await r.json()) as { status: string; checks: { worker: { detail: string } } }) : undefined;
      },
      180_000,
      'the API to turn ready',
    );
    expect(ready.status).toBe('ready');
    expect(ready.checks.worker.detail).toMatch(/worker poller/);
    expect((await fetch(`${base}/api/health`)).status).toBe(200);
    expect((await fetch(`http://127.0.0.1:${workerMetricsPort}/metrics`)).status).toBe(200); // the worker's liveness probe
    expect(fs.readdirSync(app)).not.toContain('.data'); // nothing written into the image's folder

    const [apiExit, workerExit] = [exited(api), exited(worker)];
    api.kill('SIGTERM');
    worker.kill('SIGTERM');
    expect(await apiExit).toBe(0);
    expect(await workerExit).toBe(0);
  }, 300_000);
});
