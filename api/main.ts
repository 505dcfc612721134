import { loadConfig } from '../lib/config.ts';
import { detached } from '../lib/detached.ts';
import { createLogger } from '../lib/logger.ts';
import { resolveDatabaseUrl } from '../lib/stack-file.ts';
import { serveApi } from './serve.ts';

/** `npm run api`: the HTTP API alone (scale it separately from workers). */
async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger(config.LOG_LEVEL, 'switchyard-api', undefined, config.LOG_FORMAT);
  const api = await serveApi(config, logger, resolveDatabaseUrl(config));
  logger.info({ url: `http://${config.HOST}:${config.PORT}`, docs: `http://${config.HOST}:${config.PORT}/api/docs` }, 'API listening');
  const stop = async () => {
    logger.info('API stopping');
    await api.close();
    process.exit(0);
  };
  // Detached: a signal handler cannot be awaited; a failed close is logged (the process then stays until killed).
  const onSignal = () => {
    detached('stopping the API', stop(), logger);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
