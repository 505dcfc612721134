// The login throttle under a parallel burst, and which address it counts: X-Forwarded-For only
// from a configured trusted proxy. The throttle runs on an injected clock that only the test moves,
// so what is counted, locked and let through never depends on how fast the machine is.
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../api/app.ts';
import type { AppContext } from '../../api/context.ts';
import { AuthService } from '../../api/auth/service.ts';
import { lockSeconds } from '../../api/auth/throttle.ts';
import { TokenIssuer } from '../../api/auth/tokens.ts';
import { loadConfig } from '../../lib/config.ts';
import { createHarness, type Harness } from '../support/harness.ts';
import { createUserWithRoles } from '../support/environments.ts';
import { httpClient } from '../support/http.ts';

let h: Harness;
/** The throttle's clock: stands still unless a test moves it. */
let now = new Date('2031-03-01T08:00:00Z');
const advance = (seconds: number) => (now = new Date(now.getTime() + seconds * 1000));
const servers: Server[] = [];
/** The same app and database with the clocked throttle, reached directly (no trusted proxy). */
let direct: ReturnType<typeof httpClient>;
/** The same again behind a configured trusted proxy (this test's loopback peer). */
let viaProxy: ReturnType<typeof httpClient>;

async function serve(context: AppContext): Promise<ReturnType<typeof httpClient>> {
  const server = await new Promise<Server>((resolve) => {
    const s = createApp(context).listen(0, '127.0.0.1', () => resolve(s));
  });
  servers.push(server);
  return httpClient(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
}

beforeAll(async () => {
  h = await createHarness();
  const ctx = h.boot.context;
  const auth = new AuthService({
    identity: ctx.stores.identity,
    events: ctx.securityEvents,
    tokens: new TokenIssuer(ctx.keyring.jwtKey),
    clock: () => now,
  });
  direct = await serve({ ...ctx, auth });
  const config = { ...h.config, TRUSTED_PROXIES: loadConfig({ TRUSTED_PROXIES: '127.0.0.1/32, ::1' }).TRUSTED_PROXIES };
  viaProxy = await serve({ ...ctx, config, auth });
});
afterAll(async () => {
  for (const s of servers) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
  await h?.close();
});

const login = (username: string, password: string, headers: Record<string, string> = {}, client = direct) =>
  client('POST', '/api/auth/login', { form: { username, password }, headers });

describe('a parallel burst of wrong passwords for one account', () => {
  it('checks at most the limit, answers the rest 429 with Retry-After, never 500, and records every attempt', async () => {
    const username = 'burst-target';
    const password = `${username}-password-123`;
    await createUserWithRoles(h, username, ['Viewer']);
    const results = await Promise.all(Array.from({ length: 40 }, (_, i) => login(username, `wrong-${i}`)));
    const statuses = results.map((r) => r.status);
    const count = (s: number) => statuses.filter((x) => x === s).length;
    expect(count(500), JSON.stringify(results.find((r) => r.status === 500)?.body)).toBe(0);
    // The clock stands still during the burst, so the lock set by the fifth check (1 s) never
    // runs out while it arrives: exactly the limit is checked, however slowly the burst is served.
    expect(count(401)).toBe(5);
    expect(count(429)).toBe(35);
    for (const r of results.filter((x) => x.status === 429)) {
      expect(Number(r.headers.get('retry-after'))).toBe(1);
      expect(r.body.code).toBe('too_many_requests');
    }
    const events = await h.knex('security_events').where({ actor_username: username });
    expect(events.filter((e) => e.event_type === 'LOGIN_FAILED')).toHaveLength(5);
    expect(events.filter((e) => e.event_type === 'LOGIN_THROTTLED')).toHaveLength(35);

    // Locked even for the right password until the clock passes the lock; then it gets in.
    expect((await login(username, password)).status).toBe(429);
    advance(0.999);
    expect((await login(username, password)).status).toBe(429);
    advance(0.001);
    expect((await login(username, password)).status).toBe(200);
  });

  it('caps the lock arithmetic, whatever the number of failures', () => {
    expect(lockSeconds(4, 5)).toBe(0);
    expect(lockSeconds(5, 5)).toBe(1);
    expect(lockSeconds(7, 5)).toBe(4);
    expect(lockSeconds(40, 5)).toBe(900);
    expect(lockSeconds(2 ** 31, 5)).toBe(900);
  });

  it('survives an account with a huge failure count (the old power(2, n)::int overflowed)', async () => {
    await h.knex('login_throttle').insert({ key: 'account:huge', failures: 2_000_000_000, window_started_at: now });
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
    // The thirtieth check locked the address for 1 s. Once the clock has passed it, the next
    // failure is checked again and locks the address for 2 s, even for the right password.
    expect((await login('nobody-31', 'wrong', { 'x-forwarded-for': '198.51.100.7' }, viaProxy)).status).toBe(429);
    advance(1);
    expect((await login('nobody-31', 'wrong', { 'x-forwarded-for': '198.51.100.7' }, viaProxy)).status).toBe(401);
    const locked = await login('proxied-user', password, { 'x-forwarded-for': '198.51.100.7' }, viaProxy);
    expect(locked.status).toBe(429);
    expect(locked.headers.get('retry-after')).toBe('2');
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
