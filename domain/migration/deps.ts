/**
 * What the engine needs of the worker: built once per worker process and handed in by the
 * activity factory. The activities' own `ActivityDeps` (activities/deps.ts) is a superset of it.
 */
import type { Stores } from '../../db/stores.ts';
import { maxBundleBytes as bundleBudget } from '../../lib/bundles/limit.ts';
import type { Config } from '../../lib/config.ts';
import type { Logger } from '../../lib/logger.ts';
import type { SupersetClient } from '../../lib/superset/client.ts';

export interface MigrationDeps {
  /** Every store, built once by the worker's createStores (db/stores.ts). */
  stores: Stores;
  config: Config;
  logger: Logger;
  /** The project's Superset client for an environment id (pooled per environment); the engine's narrow port over it is upstreamFor (./superset-upstream.ts). */
  superset(envId: string): Promise<SupersetClient>;
}

/** Most a dashboard bundle may unpack to, from BUNDLE_MAX_MB. */
export function maxBundleBytes(deps: Pick<MigrationDeps, 'config'>): number {
  return bundleBudget(deps.config);
}
