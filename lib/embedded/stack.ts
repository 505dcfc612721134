import path from 'node:path';
import type { SearchAttributeSpec } from '../temporal.ts';
import { startEmbeddedPostgres } from './postgres.ts';
import type { Config } from '../config.ts';
import type { Logger } from '../logger.ts';
import { lowerPriority } from '../process-flags.ts';
import { writeStackFile } from '../stack-file.ts';
import { temporalAddress } from '../temporal.ts';
import { ensureTemporalCli } from './temporal-cli.ts';
import { startTemporalDevServer } from './temporal-dev-server.ts';

export interface Infra {
  databaseUrl: string;
  temporalAddress: string;
  temporalUiUrl?: string;
  stop(): Promise<void>;
}

/**
 * PostgreSQL and Temporal on embedded defaults, each replaced by its external counterpart when
 * DATABASE_URL or TEMPORAL_ADDRESS is set.
 */
export async function startInfra(
  config: Config,
  logger: Logger,
  opts: { searchAttributes: readonly SearchAttributeSpec[] },
): Promise<Infra> {
  const stops: Array<() => Promise<void>> = [];
  try {
    const databaseUrl = await databaseOf(config, logger, stops);
    let address = temporalAddress(config);
    let uiUrl = config.TEMPORAL_UI_URL;
    if (!config.TEMPORAL_ADDRESS) {
      const cli = ensureTemporalCli({ explicit: config.TEMPORAL_CLI, log: (m) => logger.info(m) });
      const server = await startTemporalDevServer({
        cli,
        port: config.TEMPORAL_PORT,
        uiPort: config.TEMPORAL_UI_PORT,
        dbFile: path.join(config.SWITCHYARD_DATA_DIR, 'temporal', 'temporal.sqlite'),
        namespace: config.TEMPORAL_NAMESPACE,
        searchAttributes: opts.searchAttributes,
        logFile: path.join(config.SWITCHYARD_DATA_DIR, 'temporal', 'server.log'),
      });
      stops.push(server.stop);
      // Background machinery yields the CPU to the API and PostgreSQL on a small machine.
      lowerPriority(server.pid);
      address = server.address;
      uiUrl = server.uiUrl;
      logger.info({ address, ui: uiUrl }, 'Temporal dev server ready');
    }
    writeStackFile(config, { databaseUrl, temporalAddress: address, temporalUiUrl: uiUrl });
    return {
      databaseUrl,
      temporalAddress: address,
      temporalUiUrl: uiUrl,
      async stop() {
        for (const s of stops.reverse()) await s().catch((err: unknown) => logger.warn({ err }, 'stop failed'));
      },
    };
  } catch (err) {
    // expected: stopping what started is best effort: the start's own error is rethrown below.
    for (const s of stops.reverse()) await s().catch(() => undefined);
    throw err;
  }
}

/** The configured database, else an embedded PostgreSQL started for it (its stop pushed onto `stops`). */
export async function databaseOf(config: Config, logger: Logger, stops: Array<() => Promise<void>>): Promise<string> {
  if (config.DATABASE_URL) return config.DATABASE_URL;
  const pg = await startEmbeddedPostgres({
    dataDir: path.join(config.SWITCHYARD_DATA_DIR, 'postgres'),
    port: config.EMBEDDED_POSTGRES_PORT,
    logger,
    database: 'switchyard',
  });
  stops.push(pg.stop);
  return pg.url;
}
