import { Runtime } from '@temporalio/worker';
import { createApp } from '../api/app.ts';
import { bootstrap } from '../api/bootstrap.ts';
import { createKnex } from '../db/knex.ts';
import { TaskStore } from '../db/tasks/store.ts';
import { loadConfig } from '../lib/config.ts';
import { createLogger } from '../lib/logger.ts';
import { WORKER_NICENESS } from '../lib/process-flags.ts';
import { resolveDatabaseUrl } from '../lib/stack-file.ts';
import { lowerBackgroundThreads } from '../lib/thread-priority.ts';
import { createWorker } from '../worker/create-worker.ts';
import { TaskLogSink } from '../worker/task-log-sink.ts';

/**
 * The embedded default (`npm start`): the API and one worker in one process, which saves the
 * memory of a second Node runtime and second copies of the Temporal client, protobuf definitions,
 * database pool and HTTP stack. The main thread serves HTTP and runs activities; Temporal's core
 * runtime and the workflow thread run at the lowest CPU priority, so the worker's backlog cannot
 * starve requests. `npm run api` and `npm run worker` stay separate processes for deployments
 * that scale them apart.
 */
async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger(config.LOG_LEVEL, 'switchyard');
  const sink = new TaskLogSink(logger);
  Runtime.install({ logger: sink });
  const databaseUrl = resolveDatabaseUrl(config);
  const boot = await bootstrap(config, logger, databaseUrl);
  // The worker's own connection pool: a request never queues behind the backlog's queries.
  const workerKnex = createKnex(databaseUrl, { poolMax: 6 });
  sink.attach(new TaskStore(workerKnex));
  const { worker, connection } = await createWorker({
    config,
    knex: workerKnex,
    logger,
    workflowBundlePath: process.env.SWITCHYARD_WORKFLOW_BUNDLE || undefined,
    // Activities share the main thread with the API: a bounded number at once keeps requests quick.
    tuning: { maxConcurrentActivityTaskExecutions: 20, maxCachedWorkflows: 100 },
  });
  boot.reconciler.start();
  const server = createApp(boot.context).listen(config.PORT, config.HOST, () => {
    logger.info({ url: `http://${config.HOST}:${config.PORT}` }, 'API listening; worker running in the same process');
  });
  const running = worker.run();
  // Threads exist once the worker runs; later ones (a new workflow thread) are caught by the repeat.
  const lower = () => lowerBackgroundThreads(WORKER_NICENESS);
  lower();
  const repeat = setInterval(lower, 5_000);
  repeat.unref();

  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    logger.info('stopping');
    server.close();
    server.closeAllConnections();
    worker.shutdown();
    await running.catch((err: unknown) => logger.warn({ err }, 'worker stopped with an error'));
    await sink.close();
    await connection.close();
    await workerKnex.destroy();
    await boot.close();
    process.exit(0);
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  running.catch((err: unknown) => {
    logger.error({ err }, 'worker failed');
    void stop();
  });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
