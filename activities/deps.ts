import type { Knex } from 'knex';
import type { TaskStore } from '../db/tasks/store.ts';
import type { Config } from '../lib/config.ts';
import type { Keyring } from '../lib/crypto.ts';
import type { Logger } from '../lib/logger.ts';
import type { SupersetClient } from '../lib/superset/client.ts';
import type { MigrationUpstream } from './migration/upstream.ts';

/** What every activity factory receives: built once per worker process. */
export interface ActivityDeps {
  knex: Knex;
  /** The tasks and their logs (the only way activities touch them). */
  tasks: TaskStore;
  config: Config;
  logger: Logger;
  /** Encrypts and decrypts secrets at rest (environment passwords). */
  keyring: Keyring;
  /** The project's Superset client for an environment id (pooled per environment). */
  supersetClient(envId: string): Promise<SupersetClient>;
  /** The same, as the migration engine uses it. */
  superset(envId: string): Promise<MigrationUpstream>;
}

/** Most a dashboard bundle may unpack to, from BUNDLE_MAX_MB. */
export function maxBundleBytes(deps: Pick<ActivityDeps, 'config'>): number {
  return Math.floor(deps.config.BUNDLE_MAX_MB * 1024 * 1024);
}
