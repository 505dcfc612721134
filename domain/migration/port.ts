/**
 * What the engine needs of the activity it runs in, supplied by the activity factory
 * (activities/dashboard-migration/index.ts, activities/activity-port.ts): its log and its
 * heartbeat. The engine never reaches for Temporal's `Context` itself, so it runs wherever a
 * caller supplies these two (a test, a script).
 */

/** A log's lines; Temporal's activity log and the worker's pino logger both are one. */
export interface Log {
  debug(message: string, meta?: Record<string, unknown>): void;
  info(message: string, meta?: Record<string, unknown>): void;
  warn(message: string, meta?: Record<string, unknown>): void;
  error(message: string, meta?: Record<string, unknown>): void;
}

export interface ActivityPort {
  log: Log;
  /** Tells Temporal the activity is alive, with details a retry can read. */
  heartbeat(details?: unknown): void;
}
