import type { Config } from '../lib/config.ts';
import type { Logger } from '../lib/logger.ts';
import { createApp } from './app.ts';
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
  let closing: Promise<void> | undefined;
  return {
    close: () =>
      (closing ??= (async () => {
        server.close();
        server.closeAllConnections();
        await boot.close();
      })()),
  };
}
