import type { RuntimeOptions } from '@temporalio/worker';
import type { Config } from '../lib/config.ts';
import type { Logger } from '../lib/logger.ts';
import { serveMetrics, type MetricsServer } from '../lib/telemetry/metrics-server.ts';

const hostPort = (host: string, port: number) => `${host.includes(':') ? `[${host}]` : host}:${port}`;

/**
 * The Temporal SDK's own worker metrics (poll latency, schedule-to-start, slots, sticky cache...)
 * through its core runtime's Prometheus exporter, which serves `/metrics` on its own address
 * (TEMPORAL_METRICS_PORT): names end in `_total`, `_seconds` as Prometheus expects.
 */
export function runtimeTelemetry(config: Config): Pick<RuntimeOptions, 'telemetryOptions'> {
  if (config.TEMPORAL_METRICS_PORT === undefined) return {};
  return {
    telemetryOptions: {
      metrics: {
        prometheus: {
          bindAddress: hostPort(config.METRICS_HOST, config.TEMPORAL_METRICS_PORT),
          countersTotalSuffix: true,
          unitSuffix: true,
          useSecondsForDurations: true,
        },
      },
    },
  };
}

/** The worker's own metrics (tasks finished, Superset, git and LLM calls) on WORKER_METRICS_PORT, when set. */
export async function serveWorkerMetrics(config: Config, logger: Logger): Promise<MetricsServer | undefined> {
  if (config.WORKER_METRICS_PORT === undefined) return undefined;
  const server = await serveMetrics(config.METRICS_HOST, config.WORKER_METRICS_PORT);
  logger.info(
    {
      metrics: `http://${server.address}/metrics`,
      ...(config.TEMPORAL_METRICS_PORT !== undefined ? { temporalMetrics: `http://${hostPort(config.METRICS_HOST, config.TEMPORAL_METRICS_PORT)}/metrics` } : {}),
    },
    'worker metrics served',
  );
  return server;
}
