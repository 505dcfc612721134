/**
 * The one retry policy of Superset calls: which calls may be asked again, how long to wait
 * between tries (exponential backoff with jitter, within a bound of attempts), and who hears of
 * each retry. Only an idempotent call (a read, an export, a chart-data query) is asked again, and
 * only for what passes by itself (classifySupersetFailure's `retryable`). The sleep and the
 * randomness are injected, so tests never wait on the wall clock.
 */
import { classifySupersetFailure, SupersetGatewayError } from '../errors.ts';
import type { ClientLogger, RetryEvent, RetryHooks, RetryPolicy } from './options.ts';

export type { RetryEvent, RetryHooks } from './options.ts';

const timer = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** The wait before attempt `attempt + 1`: base × 2^(attempt-1), capped, then "equal jitter" (half fixed, half random). */
export function backoffDelay(policy: Pick<RetryPolicy, 'baseDelayMs' | 'maxDelayMs'>, attempt: number, random: number): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(ceiling / 2 + (ceiling / 2) * random);
}

export class Retrier {
  private readonly policy: RetryPolicy;
  private readonly host: string;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly random: () => number;
  private readonly onRetry?: (event: RetryEvent) => void;
  private readonly logger?: ClientLogger;

  constructor(host: string, policy: RetryPolicy, hooks: RetryHooks = {}, logger?: ClientLogger) {
    this.host = host;
    this.policy = policy;
    this.sleep = hooks.sleep ?? timer;
    this.random = hooks.random ?? Math.random;
    this.onRetry = hooks.onRetry;
    this.logger = logger;
  }

  /**
   * Runs `attempt` until it succeeds, fails for good, or the bound is reached. A call that is not
   * idempotent is tried once: its answer is not proof that it did not land. A gateway that still
   * answers after the last attempt is a SupersetGatewayError saying how many attempts were made.
   */
  async run<T>(spec: { method: string; path: string; idempotent: boolean }, attempt: () => Promise<T>): Promise<T> {
    const attempts = spec.idempotent ? Math.max(1, this.policy.attempts) : 1;
    for (let n = 1; ; n++) {
      try {
        return await attempt();
      } catch (err) {
        const failure = classifySupersetFailure(err);
        const again = n < attempts && failure?.retryable === true && (failure.reason !== 'timeout' || this.policy.onTimeout);
        if (!again) throw n > 1 && err instanceof SupersetGatewayError ? err.afterAttempts(n) : err;
        const delayMs = backoffDelay(this.policy, n, this.random());
        const answer = err instanceof SupersetGatewayError ? err.gateway.answer : (err as Error).message;
        const event: RetryEvent = {
          host: this.host,
          method: spec.method,
          path: spec.path,
          attempt: n,
          attempts,
          reason: failure.reason,
          answer,
          delayMs,
        };
        this.logger?.warn(
          { superset: this.host, path: spec.path, attempt: n, reason: failure.reason, delay_ms: delayMs },
          'superset call failed, retrying',
        );
        this.onRetry?.(event);
        await this.sleep(delayMs);
      }
    }
  }
}

/** A retry in words, for a task's log. */
export function describeRetry(e: RetryEvent): string {
  return `Superset at ${e.host}: ${e.method} ${e.path} attempt ${e.attempt} of ${e.attempts} failed (${e.answer}); trying again in ${(e.delayMs / 1000).toFixed(1)} s`;
}

/** The policy from the validated configuration (lib/config.ts). */
export function retryPolicyFrom(cfg: {
  SUPERSET_RETRY_ATTEMPTS: number;
  SUPERSET_RETRY_BASE_MS: number;
  SUPERSET_RETRY_MAX_MS: number;
}): Partial<RetryPolicy> {
  return { attempts: cfg.SUPERSET_RETRY_ATTEMPTS, baseDelayMs: cfg.SUPERSET_RETRY_BASE_MS, maxDelayMs: cfg.SUPERSET_RETRY_MAX_MS };
}
