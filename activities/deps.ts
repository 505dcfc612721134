import type { Knex } from 'knex';
import type { Config } from '../lib/config.ts';
import type { Logger } from '../lib/logger.ts';
import type { MigrationUpstream } from './migration/upstream.ts';

/** What every activity factory receives: built once per worker process. */
export interface ActivityDeps {
  knex: Knex;
  config: Config;
  logger: Logger;
  /** A Superset client for an environment id, as the migration engine uses it. */
  superset(envId: string): Promise<MigrationUpstream>;
}
