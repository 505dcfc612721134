import fs from 'node:fs';
import { Runtime } from '@temporalio/worker';
import { startApiThread } from '../api/in-thread.ts';
import { createKnex } from '../db/knex.ts';
import { createStores } from '../db/stores.ts';
import { loadConfig } from '../lib/config.ts';
import { keyringFor } from '../lib/crypto.ts';
import { createLogger, resolveLogFormat } from '../lib/logger.ts';
import { detached } from '../lib/detached.ts';
import { API_THREAD_HEAP, WORKER_NICENESS } from '../lib/process-flags.ts';
import { resolveDatabaseUrl } from '../lib/stack-file.ts';
import { lowerBackgroundThreads } from '../lib/thread-priority.ts';
import { createWorker } from '../worker/create-worker.ts';
import { TaskLogSink } from '../worker/task-log-sink.ts';
import { runtimeTelemetry, serveWorkerMetrics } from '../worker/telemetry.ts';
import { flushTracing } from '../lib/telemetry/tracing.ts';

/**
 * The embedded default (`npm start`): the API and one worker in one process, which saves the
 * memory of a second Node runtime. The API runs in a worker thread with its own event loop at
 * normal priority; the main thread runs the Temporal worker and its activities, and it, Temporal's
 * core runtime and the workflow threads run at the lowest CPU priority, so the worker's backlog
 * can neither hold a request up on an event loop nor take the CPU from it. `npm run api` and
 * `npm run worker` stay separate processes for deployments that scale them apart.
 */
/** The worker's threads and this main thread lowered to the worker's niceness, now and every 5 s as new ones start. */
async function lowerWorkerThreads(): Promise<void> {
  // A thread takes its creator's nice value: libuv's pool (the API's crypto and file reads),
  // started on first use, must start before the main thread is lowered.
  await fs.promises.stat(import.meta.dirname);
  // Threads exist once the worker runs; later ones (a new workflow thread) are caught by the repeat.
  const lower = () => lowerBackgroundThreads(WORKER_NICENESS, { mainThread: true });
  lower();
  const repeat = setInterval(lower, 5_000);
  repeat.unref();
}

async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger(config.LOG_LEVEL, 'switchyard', undefined, config.LOG_FORMAT);
  // The API's thread has no terminal of its own (its stdout is piped through this thread): it is told what this one decided.
  process.env.LOG_FORMAT = resolveLogFormat(config.LOG_FORMAT);
  const sink = new TaskLogSink(logger);
  Runtime.install({ logger: sink, ...runtimeTelemetry(config) });
  const knex = createKnex(resolveDatabaseUrl(config), { poolMax: 6 });
  const keyring = keyringFor(config, (m) => logger.warn(m));
  const stores = createStores(knex, keyring);
  sink.attach(stores.tasks);
  // The API first: it applies the database migrations the worker's stores rely on.
  const api = await startApiThread(API_THREAD_HEAP);
  logger.info({ url: `http://${config.HOST}:${config.PORT}` }, 'API listening (its own thread); worker starting in this process');
  const { worker, connection } = await createWorker({
    config,
    stores,
    keyring,
    logger,
    workflowBundlePath: process.env.SWITCHYARD_WORKFLOW_BUNDLE || undefined,
    tuning: { maxConcurrentActivityTaskExecutions: 20, maxCachedWorkflows: 100 },
    flushTaskLogs: () => sink.flush(),
  });
  const metricsServer = await serveWorkerMetrics(config, logger);
  const running = worker.run();
  await lowerWorkerThreads();

  let stopping = false;
  const stop = async (code = 0) => {
    if (stopping) return;
    stopping = true;
    logger.info('stopping');
    await api.stop();
    // Temporal's runtime may have begun draining on the same signal.
    if (worker.getState() === 'RUNNING') worker.shutdown();
    await running.catch((err: unknown) => logger.warn({ err }, 'worker stopped with an error'));
    await metricsServer?.close();
    await flushTracing();
    await sink.close();
    await connection.close();
    await knex.destroy();
    process.exit(code);
  };
  process.on('SIGINT', () => detached('stopping', stop(), logger)); // detached: a signal handler cannot await; a failed stop is logged
  process.on('SIGTERM', () => detached('stopping', stop(), logger));
  running.catch((err: unknown) => {
    logger.error({ err }, 'worker failed');
    detached('stopping', stop(1), logger);
  });
  api.ended.catch((err: unknown) => {
    logger.error({ err }, 'the API thread failed');
    detached('stopping', stop(1), logger);
  });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
