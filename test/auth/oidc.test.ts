import http from 'node:http';
import type { AddressInfo } from 'node:net';
// @ts-expect-error oidc-provider ships no type declarations (and no @types package is installed)
import Provider from 'oidc-provider';
import type { Context } from 'koa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../api/app.ts';
import { OidcService } from '../../api/auth/oidc.ts';
import { loadConfig } from '../../lib/config.ts';
import { freePort } from '../../lib/embedded/free-port.ts';
import { httpClient } from '../support/http.ts';
import { capturedLogs, createHarness, type Harness } from '../support/harness.ts';

/**
 * OIDC single sign-on against a real OpenID provider (oidc-provider, in process on loopback):
 * the browser is simulated with fetch, manual redirects and a cookie jar; the provider's
 * development login and consent forms are submitted like a user would.
 */
const CLIENT_ID = 'switchyard-test';
const CLIENT_SECRET = 'client-secret-that-must-never-leak-0123456789';
const GROUPS_CLAIM = 'team_groups';

interface Account {
  preferred_username?: string;
  email?: string;
  name?: string;
  [GROUPS_CLAIM]?: string[];
}
const accounts: Record<string, Account> = {};

let h: Harness;
let issuer: string;
let providerServer: http.Server;
/** Every code, token and verifier seen in this file: none may show up in events, problem bodies or logs. */
const secrets = new Set<string>([CLIENT_SECRET]);
/** Bodies of every non-2xx answer of the callback and login endpoints. */
const errorBodies: string[] = [];

beforeAll(async () => {
  const apiPort = await freePort();
  const redirectUri = `http://127.0.0.1:${apiPort}/api/auth/oidc/callback`;
  providerServer = http.createServer();
  await new Promise<void>((resolve) => providerServer.listen(0, '127.0.0.1', resolve));
  issuer = `http://127.0.0.1:${(providerServer.address() as AddressInfo).port}`;
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: CLIENT_ID,
        client_secret: CLIENT_SECRET,
        redirect_uris: [redirectUri],
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    pkce: { required: () => true },
    claims: { openid: ['sub'], profile: ['preferred_username', 'name', GROUPS_CLAIM], email: ['email'] },
    cookies: { keys: ['provider-cookie-signing-key-for-tests'] },
    features: { devInteractions: { enabled: true } },
    async findAccount(_ctx: unknown, id: string) {
      if (!accounts[id]) return undefined;
      return { accountId: id, claims: async () => ({ sub: id, ...accounts[id] }) };
    },
  });
  providerServer.on('request', provider.callback());
  h = await createHarness({
    port: apiPort,
    env: {
      OIDC_ISSUER: issuer,
      OIDC_CLIENT_ID: CLIENT_ID,
      OIDC_CLIENT_SECRET: CLIENT_SECRET,
      OIDC_REDIRECT_URI: redirectUri,
      OIDC_GROUPS_CLAIM: GROUPS_CLAIM,
    },
  });
  secrets.add(h.adminToken);
});

afterAll(async () => {
  await h?.close();
  providerServer?.closeAllConnections();
  await new Promise((resolve) => providerServer?.close(resolve));
});

/** A browser's cookie jar: host-wide (cookies ignore ports), path-scoped, honouring Max-Age=0. */
class CookieJar {
  private readonly cookies = new Map<string, { value: string; path: string }>();
  store(res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      const [pair, ...attrs] = line.split(';').map((s) => s.trim());
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq);
      const value = pair.slice(eq + 1);
      const attr = (n: string) => attrs.find((a) => a.toLowerCase().startsWith(`${n}=`))?.split('=')[1];
      const expires = attr('expires');
      if (attr('max-age') === '0' || (expires && Date.parse(expires) < Date.now())) this.cookies.delete(name);
      else this.cookies.set(name, { value, path: attr('path') ?? '/' });
    }
  }
  header(url: URL): string {
    return [...this.cookies]
      .filter(([, c]) => url.pathname.startsWith(c.path))
      .map(([n, c]) => `${n}=${c.value}`)
      .join('; ');
  }
  set(name: string, value: string, path = '/'): void {
    this.cookies.set(name, { value, path });
  }
}

async function go(jar: CookieJar, url: string, form?: Record<string, string>): Promise<Response> {
  const u = new URL(url);
  const headers: Record<string, string> = { cookie: jar.header(u) };
  if (form) headers['content-type'] = 'application/x-www-form-urlencoded';
  const res = await fetch(u, {
    method: form ? 'POST' : 'GET',
    headers,
    body: form ? new URLSearchParams(form) : undefined,
    redirect: 'manual',
  });
  jar.store(res);
  return res;
}

interface Flow {
  jar: CookieJar;
  state: string;
  /** The provider's redirect back to the API: the redirect URI with code, state and iss. */
  callbackUrl: string;
}

/** /api/auth/oidc/login, then the provider's login and consent pages, up to (not into) the callback. */
async function toCallback(account: string, jar = new CookieJar()): Promise<Flow> {
  const start = await go(jar, `${h.baseUrl}/api/auth/oidc/login`);
  expect(start.status).toBe(302);
  let url = new URL(start.headers.get('location')!, h.baseUrl).href;
  const state = new URL(url).searchParams.get('state')!;
  for (let hops = 0; hops < 20; hops++) {
    if (url.startsWith(`${h.baseUrl}/api/auth/oidc/callback`)) {
      secrets.add(new URL(url).searchParams.get('code') ?? '');
      return { jar, state, callbackUrl: url };
    }
    const res = await go(jar, url);
    if (res.status >= 300 && res.status < 400) {
      url = new URL(res.headers.get('location')!, url).href;
      continue;
    }
    const html = await res.text();
    expect(res.status, html).toBe(200);
    const submit = new URL(url);
    const form: Record<string, string> = html.includes('name="prompt" value="login"')
      ? { prompt: 'login', login: account, password: 'any-password' }
      : { prompt: 'consent' };
    const posted = await go(jar, submit.href, form);
    expect(posted.status, await posted.clone().text()).toBeGreaterThanOrEqual(300);
    url = new URL(posted.headers.get('location')!, submit).href;
  }
  throw new Error('the provider never redirected back');
}

async function callback(flow: Flow, url = flow.callbackUrl) {
  const res = await go(flow.jar, url);
  const text = await res.text();
  const body = text ? JSON.parse(text) : undefined;
  if (res.status >= 400) errorBodies.push(text);
  else if (body?.access_token) secrets.add(body.access_token);
  return { status: res.status, body, headers: res.headers };
}

async function signIn(account: string) {
  const flow = await toCallback(account);
  const r = await callback(flow);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return { flow, token: r.body.access_token as string, body: r.body };
}

const me = (token: string) => h.request('GET', '/api/auth/me', { token });
const userBySubject = (sub: string) => h.knex('users').where({ oidc_subject: sub }).first();
const sessionCount = async () => Number((await h.knex('sessions').count({ n: '*' }))[0].n);
const lastEvent = (type: string) => h.knex('security_events').where({ event_type: type }).orderBy('id', 'desc').first();

describe('OIDC login redirect', () => {
  it('redirects to the provider with state, nonce and PKCE S256, keeping the state server-side', async () => {
    const jar = new CookieJar();
    const res = await go(jar, `${h.baseUrl}/api/auth/oidc/login`);
    expect(res.status).toBe(302);
    const loc = new URL(res.headers.get('location')!);
    expect(loc.origin).toBe(issuer);
    const q = loc.searchParams;
    expect(q.get('response_type')).toBe('code');
    expect(q.get('client_id')).toBe(CLIENT_ID);
    expect(q.get('redirect_uri')).toBe(h.config.OIDC_REDIRECT_URI);
    expect(q.get('scope')).toBe('openid profile email');
    expect(q.get('code_challenge_method')).toBe('S256');
    expect(q.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(q.get('nonce')).toBeTruthy();
    const row = await h
      .knex('oidc_login_states')
      .where({ state: q.get('state') })
      .first();
    expect(row).toMatchObject({ nonce: q.get('nonce'), consumed_at: null });
    expect(row.code_verifier).not.toBe(q.get('code_challenge'));
    expect(res.headers.getSetCookie().join()).toMatch(
      /switchyard_oidc_state=[^;]+; Path=\/api\/auth\/oidc; Max-Age=600; HttpOnly; SameSite=Lax/,
    );
    secrets.add(row.code_verifier);
  });
});

describe('OIDC sign-in round trip', () => {
  it('provisions the user just in time and returns a token that works on /api/auth/me', async () => {
    accounts['sub-alice'] = { preferred_username: 'alice', email: 'alice@corp.example', name: 'Alice Adams', [GROUPS_CLAIM]: [] };
    expect(await userBySubject('sub-alice')).toBeUndefined();
    const { token, body } = await signIn('sub-alice');
    expect(body).toMatchObject({ token_type: 'bearer', expires_in: 1800 });
    const user = await userBySubject('sub-alice');
    expect(user).toMatchObject({
      username: 'alice',
      auth_source: 'oidc',
      oidc_issuer: issuer,
      email: 'alice@corp.example',
      display_name: 'Alice Adams',
      password_hash: null,
      active: true,
    });
    const r = await me(token);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ id: user.id, username: 'alice', auth_source: 'oidc', roles: [], permissions: [] });
    const session = await h.knex('sessions').where({ user_id: user.id }).first();
    expect(session.via).toBe('oidc');
    const ev = await lastEvent('OIDC_LOGIN');
    expect(ev).toMatchObject({ outcome: 'success', actor_id: user.id, actor_username: 'alice' });
    expect(ev.detail).toMatchObject({ subject: 'sub-alice', provisioned: true, roles: [] });
  });

  it('finds the same user on the next login (no duplicate) and refreshes email and display name', async () => {
    accounts['sub-alice'] = { ...accounts['sub-alice'], email: 'alice.adams@corp.example', name: 'Alice B. Adams' };
    const before = await userBySubject('sub-alice');
    const { token } = await signIn('sub-alice');
    expect(await h.knex('users').where({ oidc_subject: 'sub-alice' })).toHaveLength(1);
    const after = await userBySubject('sub-alice');
    expect(after).toMatchObject({ id: before.id, username: 'alice', email: 'alice.adams@corp.example', display_name: 'Alice B. Adams' });
    expect((await me(token)).body.email).toBe('alice.adams@corp.example');
    expect((await lastEvent('OIDC_LOGIN')).detail.provisioned).toBe(false);
  });

  it('does not take over a local account with the same name: the OIDC user gets a suffix', async () => {
    const created = await h.request('POST', '/api/admin/users', {
      token: h.adminToken,
      json: { username: 'carol', password: 'carol-local-password-1', roles: ['Operator'] },
    });
    expect(created.status, created.text).toBe(201);
    accounts['sub-carol'] = { preferred_username: 'Carol', email: 'carol@corp.example', [GROUPS_CLAIM]: [] };
    const { token } = await signIn('sub-carol');
    const oidcCarol = await userBySubject('sub-carol');
    expect(oidcCarol.username).toBe('Carol-2');
    const local = await h.knex('users').where({ id: created.body.id }).first();
    expect(local).toMatchObject({ username: 'carol', auth_source: 'local', oidc_subject: null });
    expect((await me(token)).body).toMatchObject({ username: 'Carol-2', roles: [] });
    // The local account still signs in with its password and keeps its roles.
    const localToken = await h.login('carol', 'carol-local-password-1');
    expect((await me(localToken)).body.roles).toEqual(['Operator']);
  });

  it('falls back to email, then sub, for the username', async () => {
    accounts['sub-dave'] = { email: 'dave@corp.example' };
    accounts['sub-erin-only'] = {};
    await signIn('sub-dave');
    await signIn('sub-erin-only');
    expect((await userBySubject('sub-dave')).username).toBe('dave@corp.example');
    expect((await userBySubject('sub-erin-only')).username).toBe('sub-erin-only');
  });
});

describe('group to role mapping', () => {
  it('maps provider groups to roles on every login and replaces the previous set', async () => {
    const roles = await h.request('GET', '/api/admin/roles', { token: h.adminToken });
    expect(roles.status, roles.text).toBe(200);
    const viewer = roles.body.items.find((r: any) => r.name === 'Viewer');
    const mapped = await h.request('POST', '/api/admin/group-mappings', {
      token: h.adminToken,
      json: { group_name: 'analysts', role_id: viewer.id },
    });
    expect(mapped.status, mapped.text).toBe(201);

    accounts['sub-frank'] = { preferred_username: 'frank', [GROUPS_CLAIM]: ['analysts', 'unmapped-group'] };
    const first = await signIn('sub-frank');
    const r = await me(first.token);
    expect(r.body.roles).toEqual(['Viewer']);
    expect(r.body.permissions).toEqual(expect.arrayContaining(['tasks:READ', 'dashboards:READ']));
    expect(r.body.permissions).not.toContain('tasks:WRITE');
    const [, payload] = first.token.split('.');
    expect(JSON.parse(Buffer.from(payload, 'base64url').toString()).roles).toEqual(['Viewer']);
    expect((await lastEvent('OIDC_LOGIN')).detail).toMatchObject({ groups: ['analysts', 'unmapped-group'], roles: ['Viewer'] });

    // A role given by hand is replaced by the mapped set at the next login.
    const frank = await userBySubject('sub-frank');
    const operator = roles.body.items.find((x: any) => x.name === 'Operator');
    await h.knex('user_roles').insert({ user_id: frank.id, role_id: operator.id });
    await signIn('sub-frank');
    expect((await h.knex('user_roles').where({ user_id: frank.id })).map((x) => x.role_id)).toEqual([viewer.id]);

    // Leaving every mapped group: no roles, but still signed in.
    accounts['sub-frank'][GROUPS_CLAIM] = ['unmapped-group'];
    const later = await signIn('sub-frank');
    const r2 = await me(later.token);
    expect(r2.status).toBe(200);
    expect(r2.body.roles).toEqual([]);
    expect(r2.body.permissions).toEqual([]);
  });
});

describe('rejected callbacks change nothing', () => {
  it('rejects a forged state (400) with or without a matching cookie', async () => {
    const sessions = await sessionCount();
    const jar = new CookieJar();
    const forged = {
      jar,
      state: 'forged-state-value',
      callbackUrl: `${h.baseUrl}/api/auth/oidc/callback?code=forged-code&state=forged-state-value`,
    };
    const noCookie = await callback(forged);
    expect(noCookie.status).toBe(400);
    expect(noCookie.headers.get('content-type')).toContain('application/problem+json');
    expect(noCookie.body.code).toBe('oidc_state_invalid');
    jar.set('switchyard_oidc_state', 'forged-state-value');
    const withCookie = await callback(forged);
    expect(withCookie.status).toBe(400);
    expect(withCookie.body.code).toBe('oidc_state_invalid');
    expect((await lastEvent('OIDC_LOGIN_FAILED')).detail).toEqual({ reason: 'state_unknown' });
    expect(await sessionCount()).toBe(sessions);
  });

  it('rejects a callback from another browser (state not bound to it)', async () => {
    accounts['sub-gina'] = { preferred_username: 'gina' };
    const flow = await toCallback('sub-gina');
    const r = await callback({ ...flow, jar: new CookieJar() });
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('oidc_state_invalid');
    expect((await lastEvent('OIDC_LOGIN_FAILED')).detail).toEqual({ reason: 'state_not_bound' });
    expect(await userBySubject('sub-gina')).toBeUndefined();
    // The rightful browser can still finish.
    expect((await callback(flow)).status).toBe(200);
  });

  it('rejects a replayed code and state (4xx, no second session)', async () => {
    accounts['sub-hank'] = { preferred_username: 'hank' };
    const flow = await toCallback('sub-hank');
    expect((await callback(flow)).status).toBe(200);
    const sessions = await sessionCount();
    flow.jar.set('switchyard_oidc_state', flow.state, '/api/auth/oidc'); // even with the binding cookie replayed
    const replay = await callback(flow);
    expect(replay.status).toBe(400);
    expect(replay.body.code).toBe('oidc_state_invalid');
    expect((await lastEvent('OIDC_LOGIN_FAILED')).detail).toEqual({ reason: 'state_consumed' });
    expect(await sessionCount()).toBe(sessions);
  });

  it('rejects a code injected into another login (PKCE and nonce bind the code to its login)', async () => {
    accounts['sub-ivan'] = { preferred_username: 'ivan' };
    const victim = await toCallback('sub-ivan');
    const attacker = await toCallback('sub-ivan');
    const injected = new URL(attacker.callbackUrl);
    injected.searchParams.set('code', new URL(victim.callbackUrl).searchParams.get('code')!);
    const r = await callback(attacker, injected.href);
    expect(r.status).toBe(401);
    expect(r.body.code).toBe('oidc_login_failed');
    expect((await lastEvent('OIDC_LOGIN_FAILED')).detail.reason).toBe('code_rejected');
    expect(await userBySubject('sub-ivan')).toBeUndefined();
  });

  it('rejects an ID token whose nonce does not match the stored one (401, no user, no session)', async () => {
    accounts['sub-judy'] = { preferred_username: 'judy', [GROUPS_CLAIM]: ['analysts'] };
    const flow = await toCallback('sub-judy');
    await h.knex('oidc_login_states').where({ state: flow.state }).update({ nonce: 'a-different-nonce' });
    const sessions = await sessionCount();
    const r = await callback(flow);
    expect(r.status).toBe(401);
    expect(r.body.code).toBe('oidc_login_failed');
    const ev = await lastEvent('OIDC_LOGIN_FAILED');
    expect(ev.detail).toMatchObject({
      reason: 'id_token_claim_mismatch',
      error: { code: 'OAUTH_JWT_CLAIM_COMPARISON_FAILED', claim: 'nonce' },
    });
    expect(await userBySubject('sub-judy')).toBeUndefined();
    expect(await sessionCount()).toBe(sessions);
  });

  it('rejects an expired state (older than 10 minutes)', async () => {
    accounts['sub-kate'] = { preferred_username: 'kate' };
    const flow = await toCallback('sub-kate');
    await h
      .knex('oidc_login_states')
      .where({ state: flow.state })
      .update({ created_at: new Date(Date.now() - 11 * 60_000) });
    const r = await callback(flow);
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('oidc_state_invalid');
    expect((await lastEvent('OIDC_LOGIN_FAILED')).detail).toEqual({ reason: 'state_expired' });
    expect(await userBySubject('sub-kate')).toBeUndefined();
  });

  it('refuses a disabled OIDC user without touching roles or sessions', async () => {
    const alice = await userBySubject('sub-alice');
    await h.knex('users').where({ id: alice.id }).update({ active: false });
    const sessions = await sessionCount();
    const flow = await toCallback('sub-alice');
    const r = await callback(flow);
    expect(r.status).toBe(401);
    expect(r.body.code).toBe('oidc_login_failed');
    expect((await lastEvent('OIDC_LOGIN_FAILED')).detail).toEqual({ reason: 'account_disabled' });
    expect(await sessionCount()).toBe(sessions);
    await h.knex('users').where({ id: alice.id }).update({ active: true });
  });

  it('answers 400 when the callback has no state', async () => {
    const r = await h.request('GET', '/api/auth/oidc/callback?code=abc');
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('validation_failed');
  });
});

describe('login starts per address', () => {
  it('refuses starts beyond the limit with 429 and Retry-After, storing no state, until the lock ends on the injected clock', async () => {
    let now = new Date('2031-03-01T08:00:00Z');
    const ctx = h.boot.context;
    const oidc = new OidcService({ config: h.config, auth: ctx.auth, logger: ctx.logger, clock: () => now });
    // Behind a trusted proxy (this loopback peer), so X-Forwarded-For names each test address.
    const config = { ...h.config, TRUSTED_PROXIES: loadConfig({ TRUSTED_PROXIES: '127.0.0.1/32' }).TRUSTED_PROXIES };
    const server = await new Promise<http.Server>((resolve) => {
      const s = createApp({ ...ctx, config, oidc }).listen(0, '127.0.0.1', () => resolve(s));
    });
    const request = httpClient(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    const start = (address: string) => request('GET', '/api/auth/oidc/login', { headers: { 'x-forwarded-for': address } });
    const states = async () => Number((await h.knex('oidc_login_states').count({ n: '*' }))[0].n);
    try {
      for (let i = 0; i < 30; i++) expect((await start('198.51.100.7')).status).toBe(302);
      const before = await states();
      const refused = await start('198.51.100.7');
      expect(refused.status).toBe(429);
      expect(refused.body.code).toBe('too_many_requests');
      expect(refused.headers.get('retry-after')).toBe('1');
      expect(await states()).toBe(before);
      expect((await h.knex('security_events').where({ event_type: 'LOGIN_THROTTLED' }).orderBy('id', 'desc').first()).detail).toEqual({
        via: 'oidc',
      });
      // Another address is not held up by this one.
      expect((await start('198.51.100.8')).status).toBe(302);
      // The lock doubles per further start and ends with the clock, not with the wall clock.
      now = new Date(now.getTime() + 1_500);
      expect((await start('198.51.100.7')).status).toBe(302);
      const again = await start('198.51.100.7');
      expect(again.status).toBe(429);
      expect(again.headers.get('retry-after')).toBe('2');
      // A new window (15 minutes on) starts the count afresh.
      now = new Date(now.getTime() + 16 * 60_000);
      expect((await start('198.51.100.7')).status).toBe(302);
      expect((await start('198.51.100.7')).status).toBe(302);
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });
});

describe('OIDC configuration', () => {
  it('accepts plain http only for loopback issuers and reports an unreachable provider as 503', async () => {
    const deps = { knex: h.knex, auth: h.boot.context.auth, logger: h.boot.context.logger };
    expect(() => new OidcService({ ...deps, config: { ...h.config, OIDC_ISSUER: 'http://idp.example.com/realms/x' } })).toThrow(
      /plain http is accepted only for 127\.0\.0\.1 and localhost/,
    );
    const dead = new OidcService({ ...deps, config: { ...h.config, OIDC_ISSUER: `http://127.0.0.1:${await freePort()}` } });
    await expect(dead.startLogin({ ip: '192.0.2.1' } as Context)).rejects.toMatchObject({ status: 503, code: 'upstream_unavailable' });
  });

  it('asks the provider only where ALLOWED_UPSTREAM_HOSTS allows: refused at start, and at connect time', async () => {
    expect(() =>
      loadConfig({ ALLOWED_UPSTREAM_HOSTS: 'idp.example.com', OIDC_ISSUER: issuer, OIDC_CLIENT_ID: CLIENT_ID, OIDC_REDIRECT_URI: issuer }),
    ).toThrow(/OIDC_ISSUER: 127\.0\.0\.1 is not allowed by ALLOWED_UPSTREAM_HOSTS/);
    const deps = { auth: h.boot.context.auth, logger: h.boot.context.logger };
    const fenced = new OidcService({ ...deps, config: { ...h.config, ALLOWED_UPSTREAM_HOSTS: ['192.0.2.0/24'] } });
    await expect(fenced.startLogin({ ip: '192.0.2.200' } as Context)).rejects.toMatchObject({ status: 503, code: 'host_not_allowed' });
    const allowed = new OidcService({ ...deps, config: { ...h.config, ALLOWED_UPSTREAM_HOSTS: ['127.0.0.0/8'] } });
    expect((await allowed.startLogin({ ip: '192.0.2.201' } as Context)).url).toContain(`${issuer}/`);
  });

  it('documents both endpoints in the OpenAPI document', async () => {
    const doc = (await h.request('GET', '/api/openapi.json')).body;
    expect(doc.paths['/api/auth/oidc/login'].get.responses).toHaveProperty('302');
    expect(doc.paths['/api/auth/oidc/callback'].get.responses).toHaveProperty('200');
    expect(doc.paths['/api/auth/oidc/callback'].get.parameters.map((p: any) => p.name)).toEqual(expect.arrayContaining(['code', 'state']));
  });

  it('answers 404 oidc_not_configured on both endpoints when OIDC_ISSUER is unset', async () => {
    const plain = await createHarness();
    try {
      for (const path of ['/api/auth/oidc/login', '/api/auth/oidc/callback?code=x&state=y']) {
        const r = await plain.request('GET', path);
        expect(r.status, path).toBe(404);
        expect(r.headers.get('content-type')).toContain('application/problem+json');
        expect(r.body.code).toBe('oidc_not_configured');
      }
    } finally {
      await plain.close();
    }
  });
});

describe('no secrets leak', () => {
  it('keeps codes, tokens, verifiers and the client secret out of security events, problem bodies and logs', async () => {
    for (const row of await h.knex('oidc_login_states').select('code_verifier')) secrets.add(row.code_verifier);
    const events = JSON.stringify(await h.knex('security_events'));
    expect(events).toContain('OIDC_LOGIN');
    expect(errorBodies.length).toBeGreaterThan(5);
    const logs = capturedLogs.join('\n');
    for (const s of secrets) {
      if (!s) continue;
      expect(events).not.toContain(s);
      for (const b of errorBodies) expect(b).not.toContain(s);
      expect(logs).not.toContain(s);
    }
  });
});
