import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { Writable } from 'node:stream';
import { Runtime } from '@temporalio/worker';
import knexFactory, { type Knex } from 'knex';
import { inject } from 'vitest';
import { createApp } from '../../api/app.ts';
import { bootstrapOn, type Bootstrapped } from '../../api/bootstrap.ts';
import { withDatabase } from '../../lib/embedded/postgres.ts';
import { loadConfig, type Config } from '../../lib/config.ts';
import { createLogger, type Logger } from '../../lib/logger.ts';
import { createWorker, type WorkerHandle } from '../../worker/create-worker.ts';
import { TaskLogSink } from '../../worker/task-log-sink.ts';
import { createKnex } from '../../db/knex.ts';
import { httpClient, type HttpResponse, type RequestOptions } from './http.ts';

export const ADMIN = { username: 'admin', password: 'admin-password-for-tests-1' };
export const TEST_SECRET = 'test-secret-key-that-is-long-enough-0123456789';

/** Everything every log line of this test process said, for assertions (no secrets may appear). */
export const capturedLogs: string[] = [];
const logStream = new Writable({
  write(chunk, _enc, cb) {
    capturedLogs.push(String(chunk));
    if (process.env.TEST_LOG_LEVEL) process.stderr.write(chunk);
    cb();
  },
});

let sink: TaskLogSink | undefined;
/** The Temporal Runtime is per process and must exist before any worker connection. */
function runtimeSink(logger: Logger): TaskLogSink {
  if (!sink) {
    sink = new TaskLogSink(logger);
    Runtime.install({ logger: sink, shutdownSignals: [] });
  }
  return sink;
}

export interface Harness {
  config: Config;
  boot: Bootstrapped;
  /** The pool the harness made for the app (bootstrapOn), for reading and arranging rows directly. */
  knex: Knex;
  baseUrl: string;
  databaseUrl: string;
  request: ReturnType<typeof httpClient>;
  adminToken: string;
  login(username: string, password: string): Promise<string>;
  /** `request` as the person whose token this is. */
  as(token: string): <T = any>(method: string, path: string, opts?: RequestOptions) => Promise<HttpResponse<T>>;
  startWorker(): Promise<void>;
  stopWorker(): Promise<void>;
  waitForTask(id: string, until?: (t: any) => boolean, timeoutMs?: number): Promise<any>;
  close(): Promise<void>;
}

/**
 * A test file's slice of the real stack: its own database on the shared PostgreSQL, its own
 * task queue on the shared Temporal server, the real Koa app on a loopback port and, on
 * request, a real worker running the bundled workflows.
 */
export async function createHarness(
  opts: {
    worker?: boolean;
    env?: Record<string, string>;
    port?: number;
    /** How often the task log sink stores its lines on its own (ms; default 50). */
    logFlushMs?: number;
    /**
     * A second API process on another harness's database and task queue (as two API replicas
     * behind one load balancer): its own app, pool and port; no worker, no log sink, and closing
     * it leaves the database to its owner.
     */
    sharing?: Harness;
  } = {},
): Promise<Harness> {
  const shared = opts.sharing;
  const dbName = shared ? new URL(shared.databaseUrl).pathname.slice(1) : `t_${randomBytes(6).toString('hex')}`;
  const adminUrl = inject('pgAdminUrl');
  if (!shared) {
    const admin = knexFactory({ client: 'pg', connection: adminUrl, pool: { min: 0, max: 1 } });
    await admin.raw(`create database ${dbName}`);
    await admin.destroy();
  }
  const databaseUrl = shared?.databaseUrl ?? withDatabase(adminUrl, dbName);

  const config = loadConfig({
    DATABASE_URL: databaseUrl,
    TEMPORAL_ADDRESS: inject('temporalAddress'),
    TEMPORAL_TASK_QUEUE: `tq-${dbName}`,
    SWITCHYARD_SECRET_KEY: TEST_SECRET,
    SWITCHYARD_ADMIN_USERNAME: ADMIN.username,
    SWITCHYARD_ADMIN_PASSWORD: ADMIN.password,
    SWITCHYARD_DATA_DIR: `${inject('runDir')}/${dbName}`,
    TASK_RECONCILE_AFTER_SECONDS: '1',
    LOG_LEVEL: 'info',
    ...opts.env,
  });
  const logger = createLogger('info', 'test', logStream);
  const taskSink = runtimeSink(logger);
  // The app's own pool, made here so the tests read and arrange rows (and watch its queries) through it.
  const knex = createKnex(databaseUrl, { keepWarm: true });
  const boot = await bootstrapOn(config, logger, knex);
  if (!shared) taskSink.attach(boot.context.stores.tasks, opts.logFlushMs ?? 50);
  const server: Server = await new Promise((resolve) => {
    const s = createApp(boot.context).listen(opts.port ?? 0, '127.0.0.1', () => resolve(s));
  });
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const request = httpClient(baseUrl);

  const login = async (username: string, password: string) => {
    const r = await request('POST', '/api/auth/login', { form: { username, password } });
    if (r.status !== 200) throw new Error(`login of ${username} failed: ${r.status} ${r.text}`);
    return r.body.access_token as string;
  };

  let workerHandle: WorkerHandle | undefined;
  let running: Promise<void> | undefined;
  const startWorker = async () => {
    if (workerHandle) return;
    workerHandle = await createWorker({
      config,
      stores: boot.context.stores,
      keyring: boot.context.keyring,
      logger,
      workflowBundlePath: inject('workflowBundlePath'),
      flushTaskLogs: () => taskSink.flush(),
    });
    running = workerHandle.worker.run();
  };
  const stopWorker = async () => {
    if (!workerHandle) return;
    const { worker, connection } = workerHandle;
    workerHandle = undefined;
    if (worker.getState() === 'RUNNING') worker.shutdown();
    await running;
    await connection.close();
  };
  if (opts.worker && !shared) await startWorker();

  const harness: Harness = {
    config,
    boot,
    knex,
    baseUrl,
    databaseUrl,
    request,
    adminToken: await login(ADMIN.username, ADMIN.password),
    login,
    as:
      (token) =>
      <T = any>(method: string, path: string, o: RequestOptions = {}) =>
        request<T>(method, path, { ...o, token }),
    startWorker,
    stopWorker,
    async waitForTask(id, until = (t) => ['SUCCEEDED', 'FAILED', 'CANCELLED'].includes(t.status), timeoutMs = 45_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const r = await request('GET', `/api/tasks/${id}`, { token: harness.adminToken });
        // A finished row is written just before the workflow closes: also wait for the close
        // event, so a test reading the logs sees the whole history.
        if (r.status === 200 && until(r.body) && (await workflowClosedOrAbsent(boot.context.temporal, id, r.body.status))) return r.body;
        if (Date.now() > deadline) throw new Error(`task ${id} did not reach the expected state: ${JSON.stringify(r.body)}`);
        await new Promise((res) => setTimeout(res, 200));
      }
    },
    async close() {
      await stopWorker();
      await taskSink.flush();
      server.closeAllConnections();
      await new Promise((res) => server.close(() => res(undefined)));
      await boot.close();
      if (shared) return;
      const a = knexFactory({ client: 'pg', connection: adminUrl, pool: { min: 0, max: 1 } });
      await a.raw(`drop database if exists ${dbName} with (force)`);
      await a.destroy();
    },
  };
  return harness;
}

async function workflowClosedOrAbsent(temporal: Bootstrapped['context']['temporal'], id: string, status: string): Promise<boolean> {
  if (!['SUCCEEDED', 'FAILED', 'CANCELLED'].includes(status)) return true;
  try {
    return (await temporal.workflow.getHandle(id).describe()).status.name !== 'RUNNING';
  } catch {
    return true; // never started (cancelled before it reached Temporal)
  }
}

export function waitFor<T>(fn: () => Promise<T | undefined | false>, timeoutMs = 30_000, what = 'condition'): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  return (async () => {
    for (;;) {
      const v = await fn();
      if (v) return v;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 150));
    }
  })();
}
