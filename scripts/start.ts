import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { loadConfig, type Config } from '../lib/config.ts';
import { detached } from '../lib/detached.ts';
import { startInfra } from '../lib/embedded/stack.ts';
import { createLogger } from '../lib/logger.ts';
import { lowerPriority, NODE_FLAGS } from '../lib/process-flags.ts';
import { SEARCH_ATTRIBUTES } from '../contracts/search-attributes.ts';
import { buildWeb } from './build-web.ts';

/**
 * `npm start`: embedded PostgreSQL, the Temporal dev server with its web UI, and Switchyard: the
 * API and one worker in one process (scripts/all-in-one.ts, the lighter default), or with
 * `--split` in two processes as a scaled deployment runs them. Ctrl-C stops all in reverse order.
 * `npm run infra` (argument `--infra-only`) starts just PostgreSQL and Temporal.
 */
async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger(config.LOG_LEVEL, 'switchyard', undefined, config.LOG_FORMAT);
  const infraOnly = process.argv.includes('--infra-only');
  const infra = await startInfra(config, logger, { searchAttributes: SEARCH_ATTRIBUTES });
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: infra.databaseUrl,
    TEMPORAL_ADDRESS: infra.temporalAddress,
    ...(infra.temporalUiUrl ? { TEMPORAL_UI_URL: infra.temporalUiUrl } : {}),
  };
  const children: ChildProcess[] = [];
  let stopping = false;
  const stop = async (code = 0) => {
    if (stopping) return;
    stopping = true;
    logger.info('stopping Switchyard');
    await Promise.all(children.map(stopChild));
    await infra.stop();
    process.exit(code);
  };
  process.on('SIGINT', () => detached('stopping', stop(), logger)); // detached: a signal handler cannot await; a failed stop is logged
  process.on('SIGTERM', () => detached('stopping', stop(), logger));

  if (!infraOnly) {
    // The web console is served by the API from web/dist: (re)built here when missing or stale.
    if (await buildWeb({ ifStale: true })) logger.info('web console built into web/dist');
    const bundle = path.join(config.SWITCHYARD_DATA_DIR, 'workflow-bundle.js');
    await run(process.execPath, ['worker/build-bundle.ts', bundle]);
    env.SWITCHYARD_WORKFLOW_BUNDLE = bundle;
    const entries: ReadonlyArray<readonly [string, readonly string[]]> = process.argv.includes('--split')
      ? [
          ['worker/main.ts', NODE_FLAGS.worker],
          ['api/main.ts', NODE_FLAGS.api],
        ]
      : [['scripts/all-in-one.ts', NODE_FLAGS.allInOne]];
    for (const [entry, flags] of entries) {
      const child = spawn(process.execPath, [...flags, entry], { env, stdio: 'inherit' });
      if (entry.startsWith('worker/')) lowerPriority(child.pid!);
      child.once('exit', (code) => {
        if (!stopping) {
          logger.error({ entry, code }, 'a Switchyard process exited; stopping the rest');
          detached('stopping', stop(1), logger);
        }
      });
      children.push(child);
    }
  }
  process.stdout.write(banner(config, infra, infraOnly));
}

/** SIGTERM, then SIGKILL if it has not exited 15 s later; resolves when it has exited. */
function stopChild(c: ChildProcess): Promise<void> {
  return new Promise<void>((resolve) => {
    if (c.exitCode !== null) return resolve();
    c.once('exit', () => resolve());
    c.kill('SIGTERM');
    setTimeout(() => c.kill('SIGKILL'), 15_000).unref();
  });
}

/** Where everything started listens. */
function banner(config: Config, infra: { temporalAddress: string; temporalUiUrl?: string }, infraOnly: boolean): string {
  const api = `http://${config.HOST}:${config.PORT}`;
  return (
    [
      '',
      '  Switchyard is starting:',
      infraOnly ? '' : `    Web console    ${api}/`,
      infraOnly ? '' : `    API            ${api}/api  (docs: ${api}/api/docs, OpenAPI: ${api}/api/openapi.json)`,
      `    PostgreSQL     ${config.DATABASE_URL ? 'external (DATABASE_URL)' : `embedded on 127.0.0.1:${config.EMBEDDED_POSTGRES_PORT}`}`,
      `    Temporal       ${infra.temporalAddress}${infra.temporalUiUrl ? `  (web UI: ${infra.temporalUiUrl})` : ''}`,
      '  Press Ctrl-C to stop.',
      '',
    ]
      .filter((l) => l !== '')
      .join('\n') + '\n\n'
  );
}

function run(cmd: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const c = spawn(cmd, args, { stdio: 'inherit' });
    c.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${cmd} ${args.join(' ')} exited with ${code}`))));
  });
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
