// The legacy chart endpoint's sign-in (lib/superset/transport/legacy-session.ts) against a
// stand-in Superset: the /login/ page's csrf_token and session cookie, the form POST, the signed-in
// cookie on /superset/explore_json/ only, one sign-in again on a 401, and SSO-only or refusing
// Superset as a typed error the chart check calls not verifiable. Real Superset:
// test/dashboard-migration/examples-verification.test.ts.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runLegacyChart } from '../../domain/migration/chart-check/superset.ts';
import { detached } from '../../lib/detached.ts';
import { SupersetAuthError, SupersetClient, SupersetLegacySignInError } from '../../lib/superset/index.ts';
import { readLoginPage } from '../../lib/superset/transport/legacy-session.ts';

const PASSWORD = 'pa55-word&=';

/** What the stand-in saw and how it behaves. */
const state = {
  authType: 1,
  /** Every signed-in session is forgotten (a restart with a new SECRET_KEY). */
  forgetSessions: false,
  /** explore_json refuses even fresh sessions. */
  alwaysRefuse: false,
  signIns: 0,
  loginPages: 0,
  loginForms: [] as Array<Record<string, string>>,
  exploreCookies: [] as string[],
  apiCookies: [] as string[],
  sessions: new Set<string>(),
  anonymous: new Map<string, string>(),
};
let n = 0;

function cookieOf(req: IncomingMessage): string | undefined {
  return /(?:^|;\s*)session=([^;]+)/.exec(req.headers.cookie ?? '')?.[1];
}

function body(req: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    let s = '';
    req.on('data', (c: Buffer) => (s += c.toString('utf8')));
    req.on('end', () => resolve(s));
  });
}

async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://x');
  const json = (status: number, value: unknown): void =>
    void res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(value));
  if (url.pathname === '/login/' && req.method === 'GET') {
    state.loginPages++;
    const anon = `anon${++n}`;
    const token = `tok${n}`;
    state.anonymous.set(anon, token);
    const bootstrap = JSON.stringify({ common: { conf: { AUTH_TYPE: state.authType } } }).replace(/"/g, '&quot;');
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'set-cookie': `session=${anon}; HttpOnly; Path=/` });
    res.end(
      `<html><head><input type="hidden" name="csrf_token" id="csrf_token" value="${token}"/></head><body><div id="app" data-bootstrap="${bootstrap}"></div></body></html>`,
    );
    return;
  }
  if (url.pathname === '/login/' && req.method === 'POST') {
    const form = Object.fromEntries(new URLSearchParams(await body(req)));
    state.loginForms.push(form);
    const anon = cookieOf(req);
    const ok =
      req.headers['content-type'] === 'application/x-www-form-urlencoded' &&
      anon !== undefined &&
      state.anonymous.get(anon) === form.csrf_token &&
      form.username === 'admin' &&
      form.password === PASSWORD;
    if (!ok) return void res.writeHead(302, { location: '/login/?next=' }).end();
    state.signIns++;
    const signed = `user${++n}`;
    state.sessions.add(signed);
    res.writeHead(302, { location: '/superset/welcome/', 'set-cookie': `session=${signed}; HttpOnly; Path=/` }).end();
    return;
  }
  if (url.pathname === '/superset/explore_json/') {
    const s = cookieOf(req) ?? '';
    state.exploreCookies.push(s);
    if (state.forgetSessions) {
      state.sessions.clear();
      state.forgetSessions = false;
    }
    if (req.headers.authorization || state.alwaysRefuse || !state.sessions.has(s))
      return json(401, { message: 'Access is Denied', severity: 'danger' });
    const fd = JSON.parse(url.searchParams.get('form_data') ?? '{}') as { slice_id?: number };
    return json(200, { status: 'success', colnames: ['state', 'count'], coltypes: [1, 0], rowcount: 3, slice_id: fd.slice_id, data: [] });
  }
  if (url.pathname === '/api/v1/security/login') return json(200, { access_token: 'a.b.c' });
  if (url.pathname === '/api/v1/chart/7') {
    state.apiCookies.push(req.headers.cookie ?? '');
    return json(200, { result: { id: 7 } });
  }
  json(404, { message: 'Not found' });
}

let server: Server;
let base: string;
const logged: string[] = [];
const logger = {
  debug: (o: object, m?: string) => void logged.push(JSON.stringify(o) + (m ?? '')),
  warn: (o: object, m?: string) => void logged.push(JSON.stringify(o) + (m ?? '')),
};
const newClient = (password = PASSWORD) =>
  new SupersetClient({ baseUrl: base, username: 'admin', password }, { logger, retry: { attempts: 1 } });

beforeAll(async () => {
  // Detached: a request handler cannot be awaited; a failing one is printed (and its test fails on the answer).
  server = createServer((req, res) => detached('the fake login server', handle(req, res), console));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));
beforeEach(() => {
  Object.assign(state, {
    authType: 1,
    forgetSessions: false,
    alwaysRefuse: false,
    signIns: 0,
    loginPages: 0,
    loginForms: [],
    exploreCookies: [],
    apiCookies: [],
  });
  logged.length = 0;
});

describe('legacy session', () => {
  it("signs in through the /login/ form once (its csrf_token and cookie), and sends that session's cookie to explore_json only", async () => {
    const client = newClient();
    try {
      const [a, b] = await Promise.all([client.charts.legacyData(7), client.charts.legacyData(8)]);
      expect(a).toMatchObject({ status: 'success', colnames: ['state', 'count'], rowcount: 3, slice_id: 7 });
      expect(b.slice_id).toBe(8);
      await client.charts.legacyData(9);
      expect(state.signIns).toBe(1);
      expect(state.loginForms).toEqual([{ username: 'admin', password: PASSWORD, csrf_token: expect.stringMatching(/^tok\d+$/) }]);
      expect(new Set(state.exploreCookies).size).toBe(1);
      expect(state.exploreCookies[0]).toMatch(/^user\d+$/);
      // The API's calls keep their own cookies: the signed-in session does not travel with the JWT.
      await client.charts.get(7);
      expect(state.apiCookies[0]).not.toContain(state.exploreCookies[0]);
      expect(logged.join('\n')).not.toContain(PASSWORD);
      expect(logged.join('\n')).not.toContain(state.exploreCookies[0]);
    } finally {
      client.close();
    }
  });

  it('signs in again once when explore_json answers 401, and gives up with the refusal when the new session is refused too', async () => {
    const client = newClient();
    try {
      await client.charts.legacyData(7);
      state.forgetSessions = true;
      expect((await client.charts.legacyData(7)).status).toBe('success');
      expect(state.signIns).toBe(2);
      state.alwaysRefuse = true;
      await expect(client.charts.legacyData(7)).rejects.toBeInstanceOf(SupersetAuthError);
      expect(state.signIns).toBe(3);
    } finally {
      client.close();
    }
  });

  it('a Superset signing in through OAuth only, or refusing the form, fails with SupersetLegacySignInError; the chart check calls the chart not verifiable', async () => {
    state.authType = 4;
    const sso = newClient();
    const refused = newClient('wrong');
    try {
      await expect(sso.charts.legacyData(7)).rejects.toThrow(/signs people in through OAuth only/);
      expect(state.loginForms).toEqual([]);
      expect(await runLegacyChart(sso, 7)).toEqual({
        unverifiable: expect.stringMatching(/needs a sign-in through Superset's login form: .*OAuth only/),
      });
      expect(state.loginPages).toBe(1); // the next chart is not signed in for again
      state.authType = 1;
      const err = await refused.charts.legacyData(7).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(SupersetLegacySignInError);
      expect((err as Error).message).toMatch(
        /did not accept the environment's credentials on its login form \(POST \/login\/ answered 302\)/,
      );
      expect(await runLegacyChart(refused, 7)).toHaveProperty('unverifiable');
    } finally {
      sso.close();
      refused.close();
    }
  });

  it("reads the login page's csrf_token and AUTH_TYPE with an HTML parser (entities decoded)", () => {
    expect(
      readLoginPage(
        '<INPUT name="csrf_token" value="a&amp;b"><div data-bootstrap="{&quot;common&quot;:{&quot;conf&quot;:{&quot;AUTH_TYPE&quot;:5}}}">',
      ),
    ).toEqual({
      csrfToken: 'a&b',
      authType: 5,
    });
    expect(readLoginPage('<form><input name="username"></form>')).toEqual({});
  });
});
