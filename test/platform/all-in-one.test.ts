// The embedded default (`npm start`): the API and one worker in one process, the API on a thread of
// its own at normal priority, the worker's threads (the main one included) at the lowest.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import knexFactory from 'knex';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { API_THREAD_NAME } from '../../api/in-thread.ts';
import { freePort } from '../../lib/embedded/free-port.ts';
import { withDatabase } from '../../lib/embedded/postgres.ts';
import { NODE_FLAGS, WORKER_NICENESS } from '../../lib/process-flags.ts';
import { PROJECT_ROOT } from '../../lib/config.ts';

const PASSWORD = 'all-in-one-admin-password';
const database = `aio_${randomBytes(5).toString('hex')}`;
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'switchyard-aio-'));
let child: ChildProcess;
let base: string;
let output = '';

/** Name and nice value of every thread of a process (Linux: /proc/<pid>/task). */
function threads(pid: number): Array<{ tid: number; name: string; nice: number }> {
  return readdirSync(`/proc/${pid}/task`).flatMap((tid) => {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const name = readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim();
      return [{ tid: Number(tid), name, nice: Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]) }];
    } catch {
      return []; // ended meanwhile
    }
  });
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, ms = 90_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (child.exitCode !== null)
      throw new Error(`the process exited (${child.exitCode}) while waiting for ${what}:\n${output.slice(-3000)}`);
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}:\n${output.slice(-3000)}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

beforeAll(async () => {
  const admin = knexFactory({ client: 'pg', connection: inject('pgAdminUrl'), pool: { min: 0, max: 1 } });
  await admin.raw(`create database ${database}`);
  await admin.destroy();
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  child = spawn(process.execPath, [...NODE_FLAGS.allInOne, 'scripts/all-in-one.ts'], {
    cwd: PROJECT_ROOT,
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATABASE_URL: withDatabase(inject('pgAdminUrl'), database),
      TEMPORAL_ADDRESS: inject('temporalAddress'),
      TEMPORAL_TASK_QUEUE: `aio-${randomBytes(4).toString('hex')}`,
      SWITCHYARD_WORKFLOW_BUNDLE: inject('workflowBundlePath'),
      SWITCHYARD_DATA_DIR: dataDir,
      SWITCHYARD_ADMIN_PASSWORD: PASSWORD,
      SWITCHYARD_SECRET_KEY: 'all-in-one-test-secret-key-0123456789-abcdef',
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (d) => (output += String(d)));
  child.stderr!.on('data', (d) => (output += String(d)));
  await until('the API to be ready with its worker polling', async () => ((await fetch(`${base}/api/ready`)).ok ? true : undefined));
});

afterAll(async () => {
  if (child && child.exitCode === null) {
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
  }
  rmSync(dataDir, { recursive: true, force: true });
  const admin = knexFactory({ client: 'pg', connection: inject('pgAdminUrl'), pool: { min: 0, max: 1 } });
  await admin.raw(`drop database if exists ${database} with (force)`);
  await admin.destroy();
});

describe('the all-in-one process (npm start)', () => {
  it('serves the API and runs a task to the end with its worker', async () => {
    const login = await fetch(`${base}/api/auth/login`, {
      method: 'POST',
      body: new URLSearchParams({ username: 'admin', password: PASSWORD }),
    });
    expect(login.status).toBe(200);
    const { access_token } = (await login.json()) as { access_token: string };
    const headers = { authorization: `Bearer ${access_token}`, 'content-type': 'application/json' };
    const created = await fetch(`${base}/api/tasks/selfcheck`, { method: 'POST', headers, body: '{}' });
    expect(created.status).toBe(202);
    const { task_id } = (await created.json()) as { task_id: string };
    const status = await until('the selfcheck to finish', async () => {
      const { status } = (await (await fetch(`${base}/api/tasks/${task_id}`, { headers })).json()) as { status: string };
      return ['SUCCEEDED', 'FAILED', 'CANCELLED'].includes(status) ? status : undefined;
    });
    expect(status).toBe('SUCCEEDED');
  });

  it.skipIf(!existsSync('/proc/self/task'))(
    "keeps the API thread and libuv's pool at normal priority and lowers the worker, its main thread included",
    async () => {
      const pid = child.pid!;
      // The worker's threads are lowered once it runs, and again every few seconds.
      const seen = await until(
        'the worker threads lowered',
        async () => {
          const t = threads(pid);
          const main = t.find((x) => x.tid === pid);
          return main?.nice === WORKER_NICENESS && t.some((x) => x.name === 'WorkerThread') ? t : undefined;
        },
        20_000,
      );
      // "Normal" is the priority the process was started at: `nice npm test` starts everything lower.
      const started = os.getPriority();
      const api = seen.filter((t) => t.name === API_THREAD_NAME);
      expect(api).toHaveLength(1);
      expect(api[0].nice).toBe(started);
      expect(seen.filter((t) => t.name === 'WorkerThread').every((t) => t.nice === WORKER_NICENESS)).toBe(true);
      // The API's crypto and file reads run on libuv's pool: it must not inherit the lowered main thread's priority.
      const pool = seen.filter((t) => t.name === 'libuv-worker');
      expect(pool.length).toBeGreaterThan(0);
      expect(pool.every((t) => t.nice === started)).toBe(true);
      // V8's helpers serve the API's heap too, so they stay at normal priority, one core fewer than
      // the machine has (at least one, at most Node's four).
      const helpers = seen.filter((t) => t.name === 'V8Worker');
      expect(helpers).toHaveLength(Math.min(4, Math.max(1, os.availableParallelism() - 1)));
      expect(helpers.every((t) => t.nice === started)).toBe(true);
    },
  );

  it('stops on SIGTERM with exit code 0, the API closed first', async () => {
    child.kill('SIGTERM');
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code, output.slice(-3000)).toBe(0);
    await expect(fetch(`${base}/api/health`)).rejects.toThrow();
  });
});
