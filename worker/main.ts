import { Runtime } from '@temporalio/worker';
import { createKnex } from '../db/knex.ts';
import { createStores } from '../db/stores.ts';
import { loadConfig } from '../lib/config.ts';
import { keyringFor } from '../lib/crypto.ts';
import { createLogger } from '../lib/logger.ts';
import { resolveDatabaseUrl } from '../lib/stack-file.ts';
import { describeTemporalConnection } from '../lib/temporal-connection.ts';
import { createWorker } from './create-worker.ts';
import { TaskLogSink } from './task-log-sink.ts';
import { runtimeTelemetry, serveWorkerMetrics } from './telemetry.ts';
import { flushTracing } from '../lib/telemetry/tracing.ts';

/** `npm run worker`: one worker process; scale by running more of them. */
async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger(config.LOG_LEVEL, 'switchyard-worker', undefined, config.LOG_FORMAT);
  // The Runtime must be installed before any connection or worker exists.
  const sink = new TaskLogSink(logger);
  Runtime.install({ logger: sink, ...runtimeTelemetry(config) });
  const knex = createKnex(resolveDatabaseUrl(config));
  const keyring = keyringFor(config, (m) => logger.warn(m));
  const stores = createStores(knex, keyring);
  sink.attach(stores.tasks);
  const { worker, connection } = await createWorker({
    config,
    stores,
    keyring,
    logger,
    workflowBundlePath: process.env.SWITCHYARD_WORKFLOW_BUNDLE || undefined,
    flushTaskLogs: () => sink.flush(),
  });
  const metricsServer = await serveWorkerMetrics(config, logger);
  logger.info({ taskQueue: config.TEMPORAL_TASK_QUEUE, temporal: describeTemporalConnection(config), pid: process.pid }, 'worker started');
  try {
    await worker.run(); // resolves after SIGINT/SIGTERM drain
  } finally {
    await metricsServer?.close();
    await flushTracing();
    await sink.close();
    await connection.close();
    await knex.destroy();
    logger.info('worker stopped');
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
