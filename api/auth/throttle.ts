import type { Knex } from 'knex';

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
export const LIMITS = { account: 5, address: 30 };

export type ThrottleKey = { kind: 'account' | 'address'; value: string };
const keyOf = (k: ThrottleKey) => `${k.kind}:${k.value.toLowerCase()}`;

export function lockSeconds(attempts: number, limit: number): number {
  if (attempts < limit) return 0;
  return Math.min(MAX_LOCK_SECONDS, 2 ** Math.min(attempts - limit, MAX_EXPONENT));
}

interface Row {
  key: string;
  failures: number;
  window_started_at: Date;
  locked_until: Date | null;
  now: Date;
}

/**
 * Counts one attempt on every key, or none when a key is locked: then the answer is how many
 * seconds to wait. Rows are locked in key order, so concurrent logins never deadlock.
 */
export async function reserveAttempt(knex: Knex, keys: ThrottleKey[]): Promise<{ allowed: true } | { allowed: false; waitSeconds: number }> {
  const limits = new Map(keys.map((k) => [keyOf(k), LIMITS[k.kind]]));
  const names = [...limits.keys()].sort();
  return knex.transaction(async (trx) => {
    await trx.raw('insert into login_throttle (key) select unnest(?::text[]) order by 1 on conflict (key) do nothing', [names]);
    const { rows } = (await trx.raw(
      `select key, failures, window_started_at, locked_until, now() as now
       from login_throttle where key = any(?::text[]) order by key for update`,
      [names],
    )) as { rows: Row[] };
    const now = rows[0].now.getTime();
    const fresh = (r: Row) => r.window_started_at.getTime() >= now - WINDOW_SECONDS * 1000;
    const waits = rows.filter((r) => fresh(r) && r.locked_until && r.locked_until.getTime() > now).map((r) => r.locked_until!.getTime() - now);
    if (waits.length) return { allowed: false as const, waitSeconds: Math.max(1, Math.ceil(Math.max(...waits) / 1000)) };
    for (const r of rows) {
      const attempts = fresh(r) ? r.failures + 1 : 1;
      const lock = lockSeconds(attempts, limits.get(r.key)!);
      await trx('login_throttle')
        .where({ key: r.key })
        .update({
          failures: attempts,
          window_started_at: fresh(r) ? r.window_started_at : trx.fn.now(),
          locked_until: lock ? trx.raw('now() + make_interval(secs => ?)', [lock]) : null,
        });
    }
    return { allowed: true as const };
  });
}

/**
 * A successful sign-in: the account starts afresh; the address gets its attempt back (other
 * people's failures behind the same address still count), and loses a lock only that attempt set.
 */
export async function releaseAttempt(knex: Knex, account: ThrottleKey, address: ThrottleKey): Promise<void> {
  await knex('login_throttle')
    .where({ key: keyOf(account) })
    .delete();
  await knex.raw(
    `update login_throttle set failures = greatest(failures - 1, 0),
       locked_until = case when failures - 1 >= ? then locked_until end
     where key = ?`,
    [LIMITS[address.kind], keyOf(address)],
  );
}
