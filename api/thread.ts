import { parentPort } from 'node:worker_threads';
import { loadConfig } from '../lib/config.ts';
import { createLogger } from '../lib/logger.ts';
import { resolveDatabaseUrl } from '../lib/stack-file.ts';
import { serveApi } from './serve.ts';

/**
 * The API inside a worker thread of the all-in-one process (started by api/in-thread.ts): its own
 * event loop, so the worker's activities on the main thread never hold a request up.
 * Messages: it posts 'listening' once it serves; on 'stop' it closes and posts 'stopped'.
 */
const port = parentPort;
if (!port) throw new Error('api/thread.ts runs only as a worker thread (see api/in-thread.ts)');
const config = loadConfig();
const logger = createLogger(config.LOG_LEVEL, 'switchyard', undefined, config.LOG_FORMAT);
const api = await serveApi(config, logger, resolveDatabaseUrl(config));
port.on('message', (message: unknown) => {
  if (message !== 'stop') return;
  void api.close().then(
    () => {
      port.postMessage('stopped');
      port.close();
    },
    (err: unknown) => {
      logger.warn({ err }, 'API stopped with an error');
      port.postMessage('stopped');
      port.close();
    },
  );
});
port.postMessage('listening');
