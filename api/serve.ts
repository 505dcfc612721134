import type { Config } from '../lib/config.ts';
import type { Logger } from '../lib/logger.ts';
import { createApp } from './app.ts';
import { serveMetrics } from '../lib/telemetry/metrics-server.ts';
import { bootstrap } from './bootstrap.ts';

export interface ServingApi {
  /** Stops listening, drops open connections, then closes the pools and the Temporal client. */
  close(): Promise<void>;
}

/** Bootstraps the API (migrations, seeds, Temporal client), starts its reconciler and listens. */
export async function serveApi(config: Config, logger: Logger, databaseUrl: string): Promise<ServingApi> {
  const boot = await bootstrap(config, logger, databaseUrl);
  boot.reconciler.start();
  const server = createApp(boot.context).listen(config.PORT, config.HOST);
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  }).catch(async (err: unknown) => {
    await boot.close();
    throw err;
  });
  // The API's metrics on a listener of its own (METRICS_PORT), never on the public one.
  const metrics = config.METRICS_PORT === undefined ? undefined : await serveMetrics(config.METRICS_HOST, config.METRICS_PORT);
  if (metrics) logger.info({ metrics: `http://${metrics.address}/metrics` }, 'API metrics served');
  let closing: Promise<void> | undefined;
  return {
    close: () =>
      (closing ??= (async () => {
        server.close();
        server.closeAllConnections();
        await metrics?.close();
        await boot.close();
      })()),
  };
}
