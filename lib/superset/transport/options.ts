/** How a client is tuned: its logger, retries, size caps, connections, and where it may connect. */
import type { EgressPolicy } from '../../egress/policy.ts';
import type { AsyncQueryWait } from '../resources/chart-data.ts';
import type { RetryHooks } from './retry.ts';

export interface ClientLogger {
  debug(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
}

export interface RetryPolicy {
  /**
   * Attempts for an idempotent call (a GET, a chart-data query), the first included (default 4).
   * Other mutating calls are tried once: an import is asked again only by its activity, after
   * Superset's state shows the first attempt did not land (activities/dashboard-migration/apply.ts).
   */
  attempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /** Retry a GET that hit its deadline (default false: a caller waiting on the API should not wait 3x). */
  onTimeout: boolean;
}

export interface SupersetClientOptions {
  logger?: ClientLogger;
  retry?: Partial<RetryPolicy>;
  /** The retries' clock, randomness and listener (tests inject them; the worker logs into the task). */
  retryHooks?: RetryHooks;
  /** Largest JSON answer accepted (default 64 MiB). */
  maxJsonBytes?: number;
  /** Largest export/thumbnail accepted (default 512 MiB). */
  maxBinaryBytes?: number;
  /** Concurrent connections to the instance (default 8). */
  maxSockets?: number;
  /** Pages fetched at once by listAll (default 4). */
  listConcurrency?: number;
  /** How long probed capabilities are trusted before the release is read again (default CAPABILITIES_RECHECK_MS). */
  capabilitiesRecheckMs?: number;
  /** How long an asynchronous chart-data job is waited for, and how often it is polled (resources/chart-data.ts). */
  asyncQueries?: Partial<AsyncQueryWait>;
  /** Where connections may go (lib/egress/policy.ts); none: anywhere. */
  egress?: EgressPolicy;
}

/** Waits of about 0.5, 1 and 2 s between four attempts: long enough for a gateway's worker to come back. */
export const DEFAULT_RETRY: RetryPolicy = { attempts: 4, baseDelayMs: 500, maxDelayMs: 8_000, onTimeout: false };

/** How long probed capabilities are trusted before the release is read again (a changed release re-probes). */
export const CAPABILITIES_RECHECK_MS = 5 * 60_000;
