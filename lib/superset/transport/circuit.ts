/**
 * One environment's circuit breaker: the one decider of "is this Superset down right now", so a
 * synchronous request that meets an outage answers at once instead of each of its items finding
 * it out again through its own retries.
 *
 * - closed: every exchange goes out. `failuresToOpen` consecutive faults open it; a decisive
 *   fault (./circuit-faults.ts) opens it at once. Any answer that is not a fault closes the count.
 * - open: no exchange goes out; each is refused with SupersetCircuitOpenError naming the fault
 *   that opened it and when. After `openMs` the next exchange is let through as the one probe.
 * - half-open: that probe is in flight; every other exchange is refused. Its answer closes the
 *   circuit, its fault opens it for another `openMs`.
 *
 * Time is the injected clock's (`now`), so tests move it instead of waiting. A hand-written state
 * machine rather than a library's: cockatiel and opossum read the wall clock (or run timers)
 * themselves, and the three states take fewer lines than an adapter would.
 */
import { SupersetCircuitOpenError, type SupersetUnavailableError } from '../errors.ts';

export type CircuitState = 'closed' | 'half_open' | 'open';

export interface CircuitPolicy {
  /** Consecutive faults that open the circuit (a decisive one opens it alone). */
  failuresToOpen: number;
  /** How long it stays open before one exchange is let through as a probe. */
  openMs: number;
}

/**
 * The policy for clients whose idempotent calls are tried `retryAttempts` times: one more fault
 * in a row than one call's own tries, so a single request whose retries all fail (one path
 * refused, a reset keep-alive socket) stays that request's failure, while a second request that
 * fails too opens the circuit. 30 s before a probe.
 */
export function circuitPolicyFor(retryAttempts: number): CircuitPolicy {
  return { failuresToOpen: Math.max(1, retryAttempts) + 1, openMs: 30_000 };
}

/** Told of every change of state and of every refused exchange (the metrics: lib/telemetry/upstream.ts). */
export interface CircuitListener {
  state(state: CircuitState): void;
  rejected(): void;
}

/** How one exchange ended, for the breaker: an answer, a fault (counted, or decisive), or neither (nothing was sent, a bug). */
export type ExchangeVerdict =
  { kind: 'answered' } | { kind: 'fault'; decisive: boolean; error: SupersetUnavailableError } | { kind: 'neutral' };

/** What admit() hands the exchange: settle it exactly once with the exchange's verdict. */
export interface Admission {
  settle(verdict: ExchangeVerdict): void;
}

export class CircuitBreaker {
  private readonly host: string;
  private readonly policy: CircuitPolicy;
  private readonly now: () => number;
  private readonly listener?: CircuitListener;
  private failures = 0;
  private openedAt: number | undefined;
  private probing = false;
  private lastFault: { error: SupersetUnavailableError; at: number } | undefined;
  private reported: CircuitState = 'closed';

  constructor(host: string, opts: { policy: CircuitPolicy; now?: () => number; listener?: CircuitListener }) {
    this.host = host;
    this.policy = opts.policy;
    this.now = opts.now ?? Date.now;
    this.listener = opts.listener;
    this.listener?.state('closed');
  }

  /** The state now: open turns half-open once `openMs` has passed (the next exchange probes). */
  get state(): CircuitState {
    if (this.openedAt === undefined) return 'closed';
    return this.probing || this.now() - this.openedAt >= this.policy.openMs ? 'half_open' : 'open';
  }

  /** Lets one exchange go out, or throws SupersetCircuitOpenError for `call` when the circuit refuses it. */
  admit(call: { method: string; path: string }): Admission {
    const state = this.state;
    if (state === 'open' || (state === 'half_open' && this.probing)) {
      this.listener?.rejected();
      throw this.openError(call);
    }
    const probe = state === 'half_open';
    if (probe) {
      this.probing = true;
      this.report();
    }
    let settled = false;
    return {
      settle: (verdict) => {
        if (settled) return;
        settled = true;
        if (probe) this.probing = false;
        this.record(verdict);
      },
    };
  }

  /** What an exchange meets while the circuit is open; also thrown by the exchange whose fault opened it, so its retries stop. */
  openError(call: { method: string; path: string }): SupersetCircuitOpenError {
    const fault = this.lastFault!;
    const retryAt = (this.openedAt ?? fault.at) + this.policy.openMs;
    return new SupersetCircuitOpenError(this.host, fault.error, new Date(fault.at), new Date(retryAt), call);
  }

  /** Somebody saw the instance answer (a connection test): the circuit closes now. */
  reset(): void {
    this.failures = 0;
    this.openedAt = undefined;
    this.probing = false;
    this.report();
  }

  private record(verdict: ExchangeVerdict): void {
    if (verdict.kind === 'neutral') return this.report();
    if (verdict.kind === 'answered') return this.reset();
    this.lastFault = { error: verdict.error, at: this.now() };
    this.failures = verdict.decisive ? this.policy.failuresToOpen : this.failures + 1;
    if (this.openedAt !== undefined || this.failures >= this.policy.failuresToOpen) this.openedAt = this.now();
    this.report();
  }

  private report(): void {
    const state = this.state;
    if (state === this.reported) return;
    this.reported = state;
    this.listener?.state(state);
  }
}
