import type { Knex } from 'knex';
import type { TaskStore } from '../db/tasks/store.ts';
import type { Config } from '../lib/config.ts';
import type { Keyring } from '../lib/crypto.ts';
import type { Logger } from '../lib/logger.ts';
import type { SupersetClient } from '../lib/superset/client.ts';

/** What every activity factory receives: built once per worker process. */
export interface ActivityDeps {
  knex: Knex;
  /** The tasks and their logs (the only way activities touch them). */
  tasks: TaskStore;
  config: Config;
  logger: Logger;
  /** Encrypts and decrypts secrets at rest (environment passwords). */
  keyring: Keyring;
  /**
   * The project's Superset client for an environment id (pooled per environment): one resource
   * per kind (`superset.dashboards.export(ids)`). The migration engine's narrow port over it is
   * `upstreamFor(deps, envId)` (migration/superset-upstream.ts).
   */
  superset(envId: string): Promise<SupersetClient>;
}

/** Most a dashboard bundle may unpack to, from BUNDLE_MAX_MB. */
export function maxBundleBytes(deps: Pick<ActivityDeps, 'config'>): number {
  return Math.floor(deps.config.BUNDLE_MAX_MB * 1024 * 1024);
}
