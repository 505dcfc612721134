// A Superset that answers chart data asynchronously, as large production instances do:
// GLOBAL_ASYNC_QUERIES on with the polling transport, a Celery worker from the instance's own
// venv, and Redis (Debian's redis-server) for the query results and the async event streams. The
// Celery broker lives in SQLAlchemy (`sqla+sqlite`): kombu's Redis transport wants a newer
// redis-py than Superset pins.
//
//   const redis = await startRedis(dir);                     // null: no redis-server here (skip)
//   const sup = await startSuperset({ ..., featureFlags: { GLOBAL_ASYNC_QUERIES: true }, extraConfig: asyncQueryConfig(dir, redis.port) });
//   const worker = await startCeleryWorker(sup);
//   ... await worker.stop(); await sup.stop(); await redis.stop();
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, openSync, readFileSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';
import { freePort } from '../../../lib/embedded/free-port.ts';
import { buildEnv, venvBin, type SupersetInstance } from './instance.ts';

export const REDIS_SERVER = '/usr/bin/redis-server';

export interface Process {
  port?: number;
  logFile: string;
  stop(): Promise<void>;
}

function stopper(child: ChildProcess): () => Promise<void> {
  return () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      const kill = setTimeout(() => child.kill('SIGKILL'), 10_000);
      child.once('exit', () => {
        clearTimeout(kill);
        resolve();
      });
      child.kill('SIGTERM');
    });
}

/** Polls `ready` every 250 ms until it holds or `ms` passed (a start-up wait, not a test's timing). */
async function until(what: string, ready: () => Promise<boolean> | boolean, ms: number, logFile: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await ready())) {
    if (Date.now() > deadline) throw new Error(`${what} did not start within ${ms / 1000} s; see ${logFile}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

function pong(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    s.setTimeout(1000, () => (s.destroy(), resolve(false)));
    s.once('error', () => resolve(false));
    s.once('connect', () => s.write('PING\r\n'));
    s.once('data', (d) => {
      s.destroy();
      resolve(d.toString().startsWith('+PONG'));
    });
  });
}

/** A throwaway redis-server on loopback (no persistence); null when there is no redis-server. */
export async function startRedis(dir: string): Promise<Process | null> {
  if (!existsSync(REDIS_SERVER)) return null;
  mkdirSync(dir, { recursive: true });
  const port = await freePort();
  const logFile = join(dir, 'redis.log');
  const out = openSync(logFile, 'a');
  const child = spawn(REDIS_SERVER, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], {
    stdio: ['ignore', out, out],
  });
  const stop = stopper(child);
  try {
    await until('redis-server', () => pong(port), 30_000, logFile);
  } catch (err) {
    await stop();
    throw err;
  }
  return { port, logFile, stop };
}

/** superset_config.py lines: async queries over Redis, the polling transport, a Celery app that runs the async tasks. */
export function asyncQueryConfig(dir: string, redisPort: number): string {
  const py = (s: string) => JSON.stringify(s);
  const cache = (db: number, prefix: string) =>
    `{"CACHE_TYPE": "RedisCache", "CACHE_DEFAULT_TIMEOUT": 600, "CACHE_KEY_PREFIX": ${py(prefix)}, "CACHE_REDIS_URL": ${py(`redis://127.0.0.1:${redisPort}/${db}`)}}`;
  return `
# ---- asynchronous queries (test/support/superset/async-instance.ts) ----
GLOBAL_ASYNC_QUERIES_TRANSPORT = "polling"
GLOBAL_ASYNC_QUERIES_JWT_SECRET = ${py('switchyard-async-test-secret-0123456789abcdef')}
GLOBAL_ASYNC_QUERIES_CACHE_BACKEND = {"CACHE_TYPE": "RedisCache", "CACHE_REDIS_HOST": "127.0.0.1", "CACHE_REDIS_PORT": ${redisPort}, "CACHE_REDIS_DB": 0, "CACHE_DEFAULT_TIMEOUT": 600}
CACHE_CONFIG = ${cache(1, 'superset_')}
DATA_CACHE_CONFIG = ${cache(2, 'superset_data_')}


class CeleryConfig:
    broker_url = ${py(`sqla+sqlite:///${join(dir, 'celery-broker.sqlite')}`)}
    result_backend = ${py(`db+sqlite:///${join(dir, 'celery-results.sqlite')}`)}
    imports = ("superset.sql_lab", "superset.tasks.async_queries")
    worker_prefetch_multiplier = 1
    task_acks_late = False
    beat_schedule = {}


CELERY_CONFIG = CeleryConfig
`;
}

/** One Celery worker (solo pool) of the instance's venv and config, ready when Celery says so. */
export async function startCeleryWorker(sup: SupersetInstance): Promise<Process> {
  const logFile = join(sup.dataDir, 'celery.log');
  const out = openSync(logFile, 'a');
  const from = existsSync(logFile) ? readFileSync(logFile).length : 0;
  const child = spawn(
    join(venvBin(sup.version), 'celery'),
    [
      '--app=superset.tasks.celery_app:app',
      'worker',
      '--pool=solo',
      '--concurrency=1',
      '--loglevel=INFO',
      '--without-gossip',
      '--without-mingle',
      '--without-heartbeat',
    ],
    { cwd: sup.dataDir, env: buildEnv(sup.version, sup.dataDir, sup.configFile), stdio: ['ignore', out, out], detached: true },
  );
  const stop = async () => {
    try {
      process.kill(-child.pid!, 'SIGTERM'); // the worker and anything it forked
    } catch {
      // already gone
    }
    await stopper(child)();
  };
  try {
    await until(
      'celery worker',
      () => {
        if (child.exitCode !== null) throw new Error(`celery worker exited with ${child.exitCode}; see ${logFile}`);
        return /celery@\S+ ready\./.test(readFileSync(logFile, 'utf8').slice(from));
      },
      180_000,
      logFile,
    );
  } catch (err) {
    await stop();
    throw err;
  }
  return { logFile, stop };
}
