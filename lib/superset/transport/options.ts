/** How a client is tuned: its logger, retries, size caps, connections, and where it may connect. */
import type { EgressPolicy } from '../../egress/policy.ts';

export interface ClientLogger {
  debug(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
}

export interface RetryPolicy {
  /** Attempts for a GET, the first included (default 3). Mutating calls are tried once. */
  attempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /** Retry a GET that hit its deadline (default false: a caller waiting on the API should not wait 3x). */
  onTimeout: boolean;
}

export interface SupersetClientOptions {
  logger?: ClientLogger;
  retry?: Partial<RetryPolicy>;
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
  /** Where connections may go (lib/egress/policy.ts); none: anywhere. */
  egress?: EgressPolicy;
}

export const DEFAULT_RETRY: RetryPolicy = { attempts: 3, baseDelayMs: 150, maxDelayMs: 2_000, onTimeout: false };

/** How long probed capabilities are trusted before the release is read again (a changed release re-probes). */
export const CAPABILITIES_RECHECK_MS = 5 * 60_000;
