import { NativeConnection, Worker, type ActivityInterceptorsFactory, type WorkerOptions } from '@temporalio/worker';
import { createActivities } from '../activities/index.ts';
import type { Stores } from '../db/stores.ts';
import { createBackupStore, type BackupStore } from '../lib/backup-store/index.ts';
import type { Keyring } from '../lib/crypto.ts';
import type { Config } from '../lib/config.ts';
import type { Logger } from '../lib/logger.ts';
import { egressPolicy } from '../lib/egress/policy.ts';
import { SupersetClientPool } from '../lib/superset/pool.ts';
import { retryPolicyFrom } from '../lib/superset/transport/retry.ts';
import { logRetryInTask } from '../activities/superset-retries.ts';
import { startTracing } from '../lib/telemetry/tracing.ts';
import { supersetObserver } from '../lib/telemetry/upstream.ts';
import { activityScope, activityTracing, workflowSpanSinks } from './telemetry.ts';
import { temporalConnectionOptions } from '../lib/temporal-connection.ts';

export const WORKFLOWS_PATH = new URL('../workflows/index.ts', import.meta.url).pathname;
/** Bundled with the workflows wherever they are bundled (build-bundle.ts, the tests' setup): their part of a task's trace. */
export const WORKFLOW_INTERCEPTOR_MODULES = [new URL('../workflows/tracing.ts', import.meta.url).pathname];

export interface WorkerHandle {
  worker: Worker;
  connection: NativeConnection;
}

/** One worker on the configured task queue; a pre-built bundle skips webpack at start. */
export async function createWorker(deps: {
  config: Config;
  /** The process's stores (createStores, called once by whoever starts the worker). */
  stores: Stores;
  /** The keyring the stores were built with. */
  keyring: Keyring;
  logger: Logger;
  workflowBundlePath?: string;
  taskQueue?: string;
  /** Capacity settings that differ by deployment (the all-in-one process runs fewer activities at once). */
  tuning?: Pick<WorkerOptions, 'maxConcurrentActivityTaskExecutions' | 'maxCachedWorkflows'>;
  /** Stores the task log lines logged so far (the Runtime's TaskLogSink); awaited as each activity ends. */
  flushTaskLogs?: () => Promise<void>;
}): Promise<WorkerHandle> {
  const { config, stores, keyring, logger } = deps;
  let backups: BackupStore | undefined;
  // One pooled Superset client per environment for every activity of this worker.
  // Each Superset call is logged at debug with its time (LOG_LEVEL=debug).
  const supersets = new SupersetClientPool(stores.environments.connections(), {
    logger,
    egress: egressPolicy(config),
    retry: retryPolicyFrom(config),
    retryHooks: { onRetry: logRetryInTask },
    observerFor: supersetObserver,
  });
  const forEnvironment = (envId: string) => supersets.client(envId);
  const tracing = await startTracing(config, 'switchyard-worker');
  const connection = await NativeConnection.connect(temporalConnectionOptions(config));
  const source: Pick<WorkerOptions, 'workflowsPath' | 'workflowBundle'> = deps.workflowBundlePath
    ? { workflowBundle: { codePath: deps.workflowBundlePath } }
    : { workflowsPath: WORKFLOWS_PATH };
  const worker = await Worker.create({
    connection,
    namespace: config.TEMPORAL_NAMESPACE,
    taskQueue: deps.taskQueue ?? config.TEMPORAL_TASK_QUEUE,
    ...source,
    activities: createActivities({
      stores,
      config,
      logger,
      keyring,
      superset: forEnvironment,
      backupStore: () => (backups ??= createBackupStore(config)),
    }),
    interceptors: {
      activity: [activityScope, ...(tracing ? [activityTracing] : []), ...(deps.flushTaskLogs ? [flushLogsAtEnd(deps.flushTaskLogs)] : [])],
      ...(deps.workflowBundlePath ? {} : { workflowModules: WORKFLOW_INTERCEPTOR_MODULES }),
    },
    sinks: workflowSpanSinks(tracing),
    shutdownGraceTime: '10 seconds',
    // Bounded sticky cache: memory stays flat under a burst of tasks (replay covers evictions).
    maxCachedWorkflows: 200,
    ...deps.tuning,
  });
  return { worker, connection };
}

/**
 * An activity's log lines are stored before its end is reported: the task's own lines then come
 * before the history events that follow them (its completion, the task's end) for anyone reading
 * the log, instead of arriving in the sink's next batch.
 */
function flushLogsAtEnd(flush: () => Promise<void>): ActivityInterceptorsFactory {
  return () => ({
    inbound: {
      async execute(input, next) {
        try {
          return await next(input);
        } finally {
          // Logs are best-effort: a database that does not answer must not hold the activity's end.
          let timer: NodeJS.Timeout | undefined;
          await Promise.race([flush().catch(() => undefined), new Promise((r) => (timer = setTimeout(r, LOG_FLUSH_WAIT_MS)))]);
          clearTimeout(timer);
        }
      },
    },
  });
}

/** The longest an activity's end waits for its log lines to be stored. */
const LOG_FLUSH_WAIT_MS = 2_000;
