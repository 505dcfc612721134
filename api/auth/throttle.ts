import type { LoginThrottleStore, ThrottleCounter } from '../../db/identity/index.ts';

/**
 * Failed-login throttling. Each key (account, address) counts sign-in attempts in a 15-minute
 * window; from the limit on it is locked for a delay that doubles per further attempt, capped at
 * 15 minutes, so an attacker slows guessing down but can never lock a user out for good.
 *
 * An attempt is counted *before* its password is checked, in one transaction holding the rows'
 * locks (reserve). So a burst of parallel guesses cannot all pass a check made before any of
 * them was counted: at most `limit` of them are ever checked, the rest are refused. A correct
 * password gives its attempt back (release).
 */
const WINDOW_SECONDS = 15 * 60;
const MAX_LOCK_SECONDS = 15 * 60;
/** 2^10 s already exceeds the 15-minute cap: the exponent stops there, so the delay never overflows. */
const MAX_EXPONENT = 10;
/**
 * Attempts per window: failed sign-ins per account and per address, and single sign-on starts per
 * address (each start stores a login state, asked for without any credentials).
 */
export const LIMITS = { account: 5, address: 30, oidc_start: 30 };

export type ThrottleKey = { kind: keyof typeof LIMITS; value: string };
const keyOf = (k: ThrottleKey) => `${k.kind}:${k.value.toLowerCase()}`;

export function lockSeconds(attempts: number, limit: number): number {
  if (attempts < limit) return 0;
  return Math.min(MAX_LOCK_SECONDS, 2 ** Math.min(attempts - limit, MAX_EXPONENT));
}

export type Reservation = { allowed: true } | { allowed: false; waitSeconds: number };

export class LoginThrottle {
  private readonly store: LoginThrottleStore;
  private readonly clock?: () => Date;

  /** `clock` replaces the database's clock (tests); without it windows and locks follow PostgreSQL's now(). */
  constructor(store: LoginThrottleStore, clock?: () => Date) {
    this.store = store;
    this.clock = clock;
  }

  /**
   * Counts one attempt on every key, or none when a key is locked: then the answer is how many
   * seconds to wait. The decision and its write happen under the counters' row locks.
   */
  reserve(keys: ThrottleKey[]): Promise<Reservation> {
    const limits = new Map(keys.map((k) => [keyOf(k), LIMITS[k.kind]]));
    return this.store.decide<Reservation>(
      [...limits.keys()],
      (counters: ThrottleCounter[], at: Date) => {
        const now = at.getTime();
        const fresh = (c: ThrottleCounter) => c.window_started_at.getTime() >= now - WINDOW_SECONDS * 1000;
        const waits = counters
          .filter((c) => fresh(c) && c.locked_until && c.locked_until.getTime() > now)
          .map((c) => c.locked_until!.getTime() - now);
        if (waits.length)
          return { result: { allowed: false, waitSeconds: Math.max(1, Math.ceil(Math.max(...waits) / 1000)) }, updates: [] };
        const updates = counters.map((c) => {
          const attempts = fresh(c) ? c.failures + 1 : 1;
          return { key: c.key, failures: attempts, restartWindow: !fresh(c), lockSeconds: lockSeconds(attempts, limits.get(c.key)!) };
        });
        return { result: { allowed: true }, updates };
      },
      this.clock?.(),
    );
  }

  /**
   * A successful sign-in: the account starts afresh; the address gets its attempt back (other
   * people's failures behind the same address still count), and loses a lock only that attempt set.
   */
  async release(account: ThrottleKey, address: ThrottleKey): Promise<void> {
    await this.store.clear(keyOf(account));
    await this.store.giveBack(keyOf(address), LIMITS[address.kind]);
  }
}
