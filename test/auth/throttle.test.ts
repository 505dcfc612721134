// The login throttle under a parallel burst, and which address it counts: X-Forwarded-For only
// from a configured trusted proxy.
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../api/app.ts';
import { lockSeconds } from '../../api/auth/throttle.ts';
import { loadConfig } from '../../lib/config.ts';
import { createHarness, type Harness } from '../support/harness.ts';
import { createUserWithRoles } from '../support/environments.ts';
import { httpClient } from '../support/http.ts';

let h: Harness;
/** The same app and database behind a configured trusted proxy (this test's loopback peer). */
let proxied: Server;
let viaProxy: ReturnType<typeof httpClient>;

beforeAll(async () => {
  h = await createHarness();
  const config = { ...h.config, TRUSTED_PROXIES: loadConfig({ TRUSTED_PROXIES: '127.0.0.1/32, ::1' }).TRUSTED_PROXIES };
  proxied = await new Promise((resolve) => {
    const s = createApp({ ...h.boot.context, config }).listen(0, '127.0.0.1', () => resolve(s));
  });
  viaProxy = httpClient(`http://127.0.0.1:${(proxied.address() as AddressInfo).port}`);
});
afterAll(async () => {
  proxied?.closeAllConnections();
  await new Promise((r) => proxied?.close(r));
  await h?.close();
});

const login = (username: string, password: string, headers: Record<string, string> = {}, client = h.request) =>
  client('POST', '/api/auth/login', { form: { username, password }, headers });

describe('a parallel burst of wrong passwords for one account', () => {
  it('checks at most the limit, answers the rest 429 with Retry-After, never 500, and records every attempt', async () => {
    const username = 'burst-target';
    const password = `${username}-password-123`;
    await createUserWithRoles(h, username, ['Viewer']);
    const started = Date.now();
    const results = await Promise.all(Array.from({ length: 40 }, (_, i) => login(username, `wrong-${i}`)));
    const seconds = (Date.now() - started) / 1000;
    const statuses = results.map((r) => r.status);
    const count = (s: number) => statuses.filter((x) => x === s).length;
    expect(count(500), JSON.stringify(results.find((r) => r.status === 500)?.body)).toBe(0);
    // The limit, plus one more check each time a lock (1 s, then 2 s, 4 s ...) ran out while the
    // burst was still arriving: none on a quiet machine, one or two when the suite loads it.
    expect(count(401), `${seconds} s`).toBeLessThanOrEqual(5 + Math.floor(Math.log2(seconds + 1)));
    expect(count(401)).toBeGreaterThanOrEqual(1);
    expect(count(401) + count(429)).toBe(40);
    for (const r of results.filter((x) => x.status === 429)) {
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(r.body.code).toBe('too_many_requests');
    }
    const events = await h.knex('security_events').where({ actor_username: username });
    expect(events.filter((e) => e.event_type === 'LOGIN_FAILED')).toHaveLength(count(401));
    expect(events.filter((e) => e.event_type === 'LOGIN_THROTTLED')).toHaveLength(count(429));

    // The lock expires: the right password gets in once it has (at most a few seconds here).
    const deadline = Date.now() + 20_000;
    let ok = await login(username, password);
    while (ok.status === 429 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 1000 * Number(ok.headers.get('retry-after'))));
      ok = await login(username, password);
    }
    expect(ok.status).toBe(200);
  });

  it('caps the lock arithmetic, whatever the number of failures', () => {
    expect(lockSeconds(4, 5)).toBe(0);
    expect(lockSeconds(5, 5)).toBe(1);
    expect(lockSeconds(7, 5)).toBe(4);
    expect(lockSeconds(40, 5)).toBe(900);
    expect(lockSeconds(2 ** 31, 5)).toBe(900);
  });

  it('survives an account with a huge failure count (the old power(2, n)::int overflowed)', async () => {
    await h.knex('login_throttle').insert({ key: 'account:huge', failures: 2_000_000_000, window_started_at: new Date() });
    const r = await login('huge', 'whatever');
    expect(r.status).toBe(401);
    const again = await login('huge', 'whatever');
    expect(again.status).toBe(429);
    expect(Number(again.headers.get('retry-after'))).toBeGreaterThan(800);
  });
});

describe('the client address', () => {
  it('ignores X-Forwarded-For from a peer that is not a trusted proxy', async () => {
    expect(h.config.TRUSTED_PROXIES).toEqual([]);
    const r = await login('forger', 'nope', { 'x-forwarded-for': '203.0.113.66', 'user-agent': 'forger/1' });
    expect(r.status).toBe(401);
    const ev = await h.knex('security_events').where({ actor_username: 'forger' }).first();
    expect(ev.ip).toMatch(/127\.0\.0\.1/);
    expect(await h.knex('login_throttle').where('key', 'like', '%203.0.113.66%')).toHaveLength(0);
  });

  it("honours a trusted proxy's X-Forwarded-For: one locked-out client does not lock out the others behind the proxy", async () => {
    const password = 'proxied-user-password-123';
    await createUserWithRoles(h, 'proxied-user', ['Viewer']);
    // 35 parallel failures from one client behind the proxy (different accounts): 30 are checked.
    const burst = await Promise.all(
      Array.from({ length: 35 }, (_, i) => login(`nobody-${i}`, 'wrong', { 'x-forwarded-for': '198.51.100.7' }, viaProxy)),
    );
    expect(burst.filter((r) => r.status === 401)).toHaveLength(30);
    expect(burst.filter((r) => r.status === 429)).toHaveLength(5);
    // The next failure is checked and locks the address for 2 s, even for the right password.
    expect((await login('nobody-31', 'wrong', { 'x-forwarded-for': '198.51.100.7' }, viaProxy)).status).toBe(401);
    const locked = await login('proxied-user', password, { 'x-forwarded-for': '198.51.100.7' }, viaProxy);
    expect(locked.status).toBe(429);
    // Another client behind the same proxy signs in, and the events name the real client.
    const other = await login('proxied-user', password, { 'x-forwarded-for': '198.51.100.8' }, viaProxy);
    expect(other.status, other.text).toBe(200);
    const ev = await h.knex('security_events').where({ actor_username: 'proxied-user', event_type: 'LOGIN' }).orderBy('id', 'desc').first();
    expect(ev.ip).toBe('198.51.100.8');
    // A forged extra hop in front is not believed beyond the proxy: the proxy's own entry wins.
    const chained = await login('nobody-x', 'wrong', { 'x-forwarded-for': '10.9.9.9, 198.51.100.9' }, viaProxy);
    expect(chained.status).toBe(401);
    const chainedEv = await h.knex('security_events').where({ actor_username: 'nobody-x' }).first();
    expect(chainedEv.ip).toBe('198.51.100.9');
  });
});
