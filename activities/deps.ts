import type { Stores } from '../db/stores.ts';
import type { BackupStore } from '../lib/backup-store/index.ts';
import { maxBundleBytes as bundleBudget } from '../lib/bundles/limit.ts';
import type { Config } from '../lib/config.ts';
import type { Keyring } from '../lib/crypto.ts';
import type { Logger } from '../lib/logger.ts';
import type { SupersetClient } from '../lib/superset/client.ts';

/**
 * What every activity factory receives: built once per worker process (worker/create-worker.ts),
 * and what a test would replace. Activities reach the database only through `stores`.
 */
export interface ActivityDeps {
  /** Every store, built once by the worker's createStores (db/stores.ts). */
  stores: Stores;
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
  /** The configured backup store (a directory, or the S3 bucket when BACKUP_S3_BUCKET is set), opened on first use. */
  backupStore(): BackupStore;
}

/** Most a dashboard bundle may unpack to, from BUNDLE_MAX_MB. */
export function maxBundleBytes(deps: Pick<ActivityDeps, 'config'>): number {
  return bundleBudget(deps.config);
}
