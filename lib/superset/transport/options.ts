/** How a client is tuned: its logger, retries, size caps, connections, and where it may connect. */
import type { EgressPolicy } from '../../egress/policy.ts';
import type { SupersetFailureReason } from '../errors.ts';
import type { CircuitBreaker } from './circuit.ts';

export interface ClientLogger {
  debug(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
}

export interface RetryPolicy {
  /**
   * Attempts for an idempotent call (a GET, a chart-data query), the first included (default 4).
   * Other mutating calls are tried once: an import is asked again only by its activity, after
   * Superset's state shows the first attempt did not land (domain/migration/apply.ts).
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
  /** Wraps every HTTP exchange with the instance (metrics and trace spans: lib/telemetry/superset.ts). */
  observe?: ExchangeObserver;
  /**
   * The instance's circuit breaker (./circuit.ts): when given, an exchange is refused at once
   * while it is open. The API's clients have one; the worker's do not (docs/environments.md).
   */
  circuit?: CircuitBreaker;
  /** Deadlines shorter than the environment's `timeout_seconds` for what is small by nature (the API's: SYNCHRONOUS_DEADLINES). */
  deadlines?: Partial<Deadlines>;
}

export interface Deadlines {
  /** Opening the connection: TCP and the TLS handshake. */
  connectMs: number;
  /** The session's own exchanges: login, token refresh, CSRF token. */
  sessionMs: number;
}

/**
 * The API's deadlines: a person waits on its answer, and a Superset that takes longer than this
 * to accept a connection or to hand out a token is not serving anyone. Each is capped by the
 * environment's own `timeout_seconds`; every other call keeps that timeout (an export or a
 * chart-data query may take it legitimately).
 */
export const SYNCHRONOUS_DEADLINES: Deadlines = { connectMs: 5_000, sessionMs: 10_000 };

/** Runs one exchange (`run`) and answers what it answers; told the call's method and API path. */
export type ExchangeObserver = <T extends { status: number }>(call: { method: string; path: string }, run: () => Promise<T>) => Promise<T>;

/** Waits of about 0.5, 1 and 2 s between four attempts: long enough for a gateway's worker to come back. */
export const DEFAULT_RETRY: RetryPolicy = { attempts: 4, baseDelayMs: 500, maxDelayMs: 8_000, onTimeout: false };

/** How long probed capabilities are trusted before the release is read again (a changed release re-probes). */
export const CAPABILITIES_RECHECK_MS = 5 * 60_000;

/** What a retry is about, as the task's log shows it. */
export interface RetryEvent {
  host: string;
  method: string;
  path: string;
  /** The attempt that failed (1-based) and how many the bound allows. */
  attempt: number;
  attempts: number;
  reason: SupersetFailureReason;
  /** What came back, in words ("nginx answered 504 Gateway Time-out after 60 s"). */
  answer: string;
  delayMs: number;
}

export interface RetryHooks {
  /** Waits `ms` (default: a timer). */
  sleep?: (ms: number) => Promise<void>;
  /** A number in [0, 1) (default Math.random). */
  random?: () => number;
  /** Told of every retry before its wait (the worker writes it into the task's log). */
  onRetry?: (event: RetryEvent) => void;
}

export interface AsyncQueryWait {
  /** Most time spent waiting for one job, in ms (default 300 000). */
  maxWaitMs: number;
  /** First pause between polls (default 250 ms), growing by half each time up to `maxPollMs` (default 2 000 ms). */
  firstPollMs: number;
  maxPollMs: number;
}

export const DEFAULT_ASYNC_WAIT: AsyncQueryWait = { maxWaitMs: 300_000, firstPollMs: 250, maxPollMs: 2_000 };
