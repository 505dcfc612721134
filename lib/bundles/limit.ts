import type { Config } from '../config.ts';

/** Most a dashboard bundle may unpack to, from BUNDLE_MAX_MB: the one reckoning for the API and the activities. */
export function maxBundleBytes(config: Pick<Config, 'BUNDLE_MAX_MB'>): number {
  return Math.floor(config.BUNDLE_MAX_MB * 1024 * 1024);
}
