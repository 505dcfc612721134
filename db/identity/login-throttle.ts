/**
 * The login-throttle store: the only code that reads or writes `login_throttle`, one counter per
 * key (an account or an address). The policy (limits, window, lock length) belongs to the
 * caller; the store gives it the counters under row locks, so a decision and its write are one
 * atomic step however many sign-ins race.
 */
import type { Knex } from 'knex';

export interface ThrottleCounter {
  key: string;
  failures: number;
  window_started_at: Date;
  locked_until: Date | null;
}

/** A counter's new state: `restartWindow` starts its window now; `lockSeconds` 0 clears the lock. */
export interface ThrottleCounterUpdate {
  key: string;
  failures: number;
  restartWindow: boolean;
  lockSeconds: number;
}

export type ThrottleDecision<T> = { result: T; updates: ThrottleCounterUpdate[] };

export class LoginThrottleStore {
  private readonly knex: Knex;

  constructor(knex: Knex) {
    this.knex = knex;
  }

  /**
   * In one transaction: creates missing counters for `keys`, locks them in key order (concurrent
   * callers never deadlock), lets `decide` see them and the clock, and writes the updates it
   * returns before the locks are released. The clock is the database's unless `at` is given (a
   * caller with an injected clock); windows and locks are then written from `at` too.
   */
  async decide<T>(keys: readonly string[], decide: (counters: ThrottleCounter[], now: Date) => ThrottleDecision<T>, at?: Date): Promise<T> {
    const names = [...keys].sort();
    return this.knex.transaction(async (trx) => {
      await trx.raw('insert into login_throttle (key) select unnest(?::text[]) order by 1 on conflict (key) do nothing', [names]);
      const { rows } = (await trx.raw(
        `select key, failures, window_started_at, locked_until, now() as now
         from login_throttle where key = any(?::text[]) order by key for update`,
        [names],
      )) as { rows: Array<ThrottleCounter & { now: Date }> };
      const now = at ?? rows[0].now;
      const clock = at ? trx.raw('?::timestamptz', [at.toISOString()]) : trx.fn.now();
      const { result, updates } = decide(
        rows.map(({ now: _now, ...counter }) => counter),
        now,
      );
      for (const u of updates) {
        await trx('login_throttle')
          .where({ key: u.key })
          .update({
            failures: u.failures,
            ...(u.restartWindow ? { window_started_at: clock } : {}),
            locked_until: u.lockSeconds ? trx.raw('? + make_interval(secs => ?)', [clock, u.lockSeconds]) : null,
          });
      }
      return result;
    });
  }

  /** Forgets the key's counter. */
  async clear(key: string): Promise<void> {
    await this.knex('login_throttle').where({ key }).delete();
  }

  /**
   * Takes one attempt off the key's counter; its lock stays only while the count is still at or
   * above `limit` (so a lock set by other attempts survives).
   */
  async giveBack(key: string, limit: number): Promise<void> {
    await this.knex.raw(
      `update login_throttle set failures = greatest(failures - 1, 0),
         locked_until = case when failures - 1 >= ? then locked_until end
       where key = ?`,
      [limit, key],
    );
  }
}
