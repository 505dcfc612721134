import { loadConfig } from '../lib/config.ts';
import { createLogger } from '../lib/logger.ts';
import { resolveDatabaseUrl } from '../lib/stack-file.ts';
import { createApp } from './app.ts';
import { bootstrap } from './bootstrap.ts';

/** `npm run api`: the HTTP API alone (scale it separately from workers). */
async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger(config.LOG_LEVEL, 'switchyard-api');
  const boot = await bootstrap(config, logger, resolveDatabaseUrl(config));
  boot.reconciler.start();
  const server = createApp(boot.context).listen(config.PORT, config.HOST, () => {
    logger.info({ url: `http://${config.HOST}:${config.PORT}`, docs: `http://${config.HOST}:${config.PORT}/api/docs` }, 'API listening');
  });
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    logger.info('API stopping');
    server.close();
    server.closeAllConnections();
    await boot.close();
    process.exit(0);
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
