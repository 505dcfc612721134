import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { loadConfig, type Config } from '../lib/config.ts';
import { detached } from '../lib/detached.ts';
import { withDatabase } from '../lib/embedded/postgres.ts';
import { databaseOf } from '../lib/embedded/stack.ts';
import { ensureTemporalServer, startTemporalServer, TEMPORAL_SERVER_VERSION } from '../lib/embedded/temporal-server.ts';
import { createLogger, type Logger } from '../lib/logger.ts';
import { lowerPriority, NODE_FLAGS } from '../lib/process-flags.ts';
import { buildWorkflowBundle } from '../worker/build-bundle.ts';

/**
 * `npm run start:topology [-- --workers 2]`: the production shape on one machine. PostgreSQL
 * (embedded, or DATABASE_URL's server), the real Temporal server on it (not the dev server), the
 * API process without a worker, and N worker processes. Ctrl-C stops all in reverse order.
 */
export interface Topology {
  base: string;
  databaseUrl: string;
  temporalAddress: string;
  workers: ChildProcess[];
  api: ChildProcess;
  /** Starts one more worker process. */
  addWorker(): ChildProcess;
  stop(): Promise<void>;
}

export async function startTopology(opts: { env: NodeJS.ProcessEnv; workers: number; logger: Logger; logDir?: string }): Promise<Topology> {
  const config: Config = loadConfig(opts.env);
  const stops: Array<() => Promise<void>> = [];
  const stopAll = async () => {
    for (const s of stops.reverse()) await s().catch((err: unknown) => opts.logger.warn({ err }, 'stop failed'));
    stops.length = 0;
  };
  try {
    const databaseUrl = await databaseOf(config, opts.logger, stops);
    const temporal = await startTemporalOn(databaseUrl, config, opts.logger, stops);
    const bundle = await buildWorkflowBundle(path.join(config.SWITCHYARD_DATA_DIR, 'workflow-bundle.js'));
    const env = { ...opts.env, DATABASE_URL: databaseUrl, TEMPORAL_ADDRESS: temporal.address, SWITCHYARD_WORKFLOW_BUNDLE: bundle };
    const spawnEntry = (entry: string, flags: readonly string[], name: string) => {
      const out = opts.logDir ? fs.openSync(path.join(opts.logDir, `${name}.log`), 'w') : 'inherit';
      const child = spawn(process.execPath, [...flags, entry], { env, stdio: ['ignore', out, 'inherit'] });
      if (typeof out === 'number') fs.closeSync(out);
      stops.push(() => stopChild(child));
      return child;
    };
    const api = spawnEntry('api/main.ts', NODE_FLAGS.api, 'api');
    const base = `http://${config.HOST}:${config.PORT}`;
    // The API applies the migrations before it listens; workers start after it answers (its
    // readiness waits for a polling worker, so it is checked after them).
    await until(
      async () => (await fetch(`${base}/api/health`)).ok,
      180_000,
      'the API',
      () => api.exitCode,
    );
    const workers: ChildProcess[] = [];
    const addWorker = () => {
      const w = spawnEntry('worker/main.ts', NODE_FLAGS.worker, `worker-${workers.length + 1}`);
      lowerPriority(w.pid!);
      workers.push(w);
      return w;
    };
    for (let i = 0; i < opts.workers; i++) addWorker();
    if (opts.workers > 0)
      await until(
        async () => (await fetch(`${base}/api/ready`)).ok,
        180_000,
        'a polling worker',
        () => api.exitCode,
      );
    return { base, databaseUrl, temporalAddress: temporal.address, workers, api, addWorker, stop: stopAll };
  } catch (err) {
    await stopAll();
    throw err;
  }
}

/** A Temporal server on PostgreSQL (its stop pushed onto `stops`). */
async function startTemporalOn(databaseUrl: string, config: Config, logger: Logger, stops: Array<() => Promise<void>>) {
  // Temporal's two databases sit beside Switchyard's on the same server, as the same user.
  const temporal = await startTemporalServer({
    tools: ensureTemporalServer({ log: (m) => logger.info(m) }),
    adminUrl: withDatabase(databaseUrl, 'postgres'),
    dir: path.join(config.SWITCHYARD_DATA_DIR, 'temporal-server'),
    port: config.TEMPORAL_PORT,
    namespace: config.TEMPORAL_NAMESPACE,
    // Not at lower priority, unlike the dev server of `npm start`: starved by other load, its
    // answers to the workers' completions passed their 10-second timeout (bench:topology at a
    // load average of 15-25 on 2 cores) and every task stalled.
  });
  stops.push(temporal.stop);
  logger.info({ address: temporal.address }, 'Temporal server (PostgreSQL) ready');
  return temporal;
}

async function until(fn: () => Promise<boolean>, timeoutMs: number, what: string, exited: () => number | null): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await fn().catch(() => false))) {
    if (exited() !== null) throw new Error(`${what} exited with code ${exited()} before it was ready`);
    if (Date.now() > deadline) throw new Error(`${what} did not answer within ${timeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

function stopChild(c: ChildProcess): Promise<void> {
  if (c.exitCode !== null || c.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    c.once('exit', () => resolve());
    c.kill('SIGTERM');
    setTimeout(() => c.kill('SIGKILL'), 15_000).unref();
  });
}

async function main(): Promise<void> {
  const i = process.argv.indexOf('--workers');
  const workers = i > 0 ? Number(process.argv[i + 1]) : 2;
  if (!Number.isInteger(workers) || workers < 1) throw new Error('--workers takes a whole number of worker processes, 1 or more');
  const config = loadConfig();
  const logger = createLogger(config.LOG_LEVEL, 'switchyard-topology', undefined, config.LOG_FORMAT);
  const topo = await startTopology({ env: process.env, workers, logger });
  let stopping = false;
  const stop = async (code: number) => {
    if (stopping) return;
    stopping = true;
    await topo.stop();
    process.exit(code);
  };
  // Detached: a signal or exit handler cannot be awaited; a failed stop is logged (the process then stays until killed).
  process.on('SIGINT', () => detached('stopping', stop(0), logger));
  process.on('SIGTERM', () => detached('stopping', stop(0), logger));
  for (const c of [topo.api, ...topo.workers])
    c.once('exit', () => {
      if (stopping) return;
      logger.error('a Switchyard process exited; stopping the rest');
      detached('stopping', stop(1), logger);
    });
  process.stdout.write(
    `\n  Switchyard (production topology) is running:\n    Web console    ${topo.base}/\n    API            ${topo.base}/api (no worker inside)\n` +
      `    Workers        ${workers} processes (pids ${topo.workers.map((w) => w.pid).join(', ')})\n    Temporal       ${topo.temporalAddress} (server ${TEMPORAL_SERVER_VERSION} on PostgreSQL)\n  Press Ctrl-C to stop.\n\n`,
  );
}

if (import.meta.main) {
  main().catch((err) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  });
}
