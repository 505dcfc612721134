import type { Knex } from 'knex';
import type { Config } from '../lib/config.ts';
import type { Logger } from '../lib/logger.ts';

/** What every activity factory receives: built once per worker process. */
export interface ActivityDeps {
  knex: Knex;
  config: Config;
  logger: Logger;
}
