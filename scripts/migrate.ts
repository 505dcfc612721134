import { createKnex, migrateLatest } from '../db/knex.ts';
import { loadConfig } from '../lib/config.ts';
import { createLogger } from '../lib/logger.ts';
import { resolveDatabaseUrl } from '../lib/stack-file.ts';

/**
 * `node scripts/migrate.ts`: applies pending migrations to DATABASE_URL and exits (0 when the
 * schema is current). The Helm chart runs it as each pod's init step with the API's migrations at
 * start turned off (DATABASE_MIGRATE_AT_START=false); migrators started together queue on one
 * lock, so the first applies and the others find nothing to do.
 */
async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger(config.LOG_LEVEL, 'switchyard-migrate', undefined, config.LOG_FORMAT);
  // Two connections: one holds the migration lock, knex migrates on the other.
  const knex = createKnex(resolveDatabaseUrl(config), { poolMax: 2 });
  try {
    const applied = await migrateLatest(knex);
    if (applied.length) logger.info({ applied }, 'database migrated');
    else logger.info('database schema current');
  } finally {
    await knex.destroy();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
