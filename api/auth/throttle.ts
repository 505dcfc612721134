import type { Knex } from 'knex';
import { TooManyRequestsError } from '../../lib/errors.ts';

/**
 * Failed-login throttling. Each key (account, address) counts failures in a 15-minute window;
 * past the threshold it is locked for a delay that doubles per further failure, capped at 15
 * minutes, so an attacker slows guessing down but can never lock a user out for good.
 */
const WINDOW_SECONDS = 15 * 60;
const MAX_LOCK_SECONDS = 15 * 60;
const LIMITS = { account: 5, address: 30 };

export type ThrottleKey = { kind: 'account' | 'address'; value: string };
const keyOf = (k: ThrottleKey) => `${k.kind}:${k.value.toLowerCase()}`;

export async function assertNotThrottled(knex: Knex, keys: ThrottleKey[]): Promise<void> {
  const rows = await knex('login_throttle')
    .whereIn('key', keys.map(keyOf))
    .whereRaw('locked_until > now()')
    .select('key', knex.raw('ceil(extract(epoch from locked_until - now()))::int as wait'));
  if (rows.length) {
    const wait = Math.max(...rows.map((r) => Number(r.wait)), 1);
    throw new TooManyRequestsError(`Too many failed sign-ins; try again in ${wait} s`, wait);
  }
}

export async function recordFailure(knex: Knex, keys: ThrottleKey[]): Promise<void> {
  for (const k of keys) {
    const limit = LIMITS[k.kind];
    await knex.raw(
      `insert into login_throttle (key, failures, window_started_at) values (?, 1, now())
       on conflict (key) do update set
         failures = case when login_throttle.window_started_at < now() - make_interval(secs => ?) then 1 else login_throttle.failures + 1 end,
         window_started_at = case when login_throttle.window_started_at < now() - make_interval(secs => ?) then now() else login_throttle.window_started_at end`,
      [keyOf(k), WINDOW_SECONDS, WINDOW_SECONDS],
    );
    await knex.raw(
      `update login_throttle set locked_until = now() + make_interval(secs => least(?, power(2, failures - ?)::int))
       where key = ? and failures >= ?`,
      [MAX_LOCK_SECONDS, limit, keyOf(k), limit],
    );
  }
}

export async function clearFailures(knex: Knex, key: ThrottleKey): Promise<void> {
  await knex('login_throttle')
    .where({ key: keyOf(key) })
    .delete();
}
