// Why the fake: destinations that must be refused before any call is made.
// Where the server may connect (ALLOWED_UPSTREAM_HOSTS), for Superset environments: a base_url the
// policy refuses is a 400 and nothing is stored; a stored one the policy no longer allows, or whose
// name now resolves outside the allowed ranges, is refused when connected to (503 host_not_allowed, nothing sent);
// the connection goes to the address that was checked (DNS rebinding). And the environment test
// reports what Superset answered only as a status and a short, sanitised reason.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../lib/config.ts';
import { EgressPolicy } from '../../lib/egress/policy.ts';
import { HostNotAllowedError } from '../../lib/errors.ts';
import { SupersetClient } from '../../lib/superset/index.ts';
import { createHarness, type Harness } from '../support/harness.ts';
import { startFakeSuperset, type FakeSuperset } from '../support/fake-superset.ts';

const POLICY = 'superset.example.com, *.corp.example, 192.0.2.0/24, 2001:db8::/32';

let h: Harness;
let fake: FakeSuperset;
let port: number;
beforeAll(async () => {
  [h, fake] = await Promise.all([createHarness({ env: { ALLOWED_UPSTREAM_HOSTS: POLICY } }), startFakeSuperset()]);
  port = Number(new URL(fake.baseUrl).port);
});
afterAll(async () => {
  await h?.close();
  await fake?.close();
});

const admin = (method: string, path: string, json?: unknown) => h.request(method, path, { token: h.adminToken, json });
const envBody = (name: string, base_url: string) => ({ name, base_url, username: fake.username, password: fake.password });
const count = async () => Number((await h.knex('environments').count({ n: '*' }))[0].n);

/** An environment stored before the policy (or under another one), as an upgrade would find it. */
async function stored(name: string, baseUrl: string): Promise<string> {
  const row = await h.boot.context.stores.environments.create({
    name,
    base_url: baseUrl,
    username: fake.username,
    password: fake.password,
  });
  return row.id;
}

describe('ALLOWED_UPSTREAM_HOSTS', () => {
  it('is validated at start by its own parser: bad entries and refused configured destinations stop it', () => {
    expect(loadConfig({ ALLOWED_UPSTREAM_HOSTS: POLICY }).ALLOWED_UPSTREAM_HOSTS).toHaveLength(4);
    for (const bad of [
      '10.0.0.0/33',
      'fd00::/129',
      'exa mple.com',
      'example.com:8080',
      '*',
      'a.*.example.com',
      'http://x.example',
      '10.0.0.0/x',
    ])
      expect(() => loadConfig({ ALLOWED_UPSTREAM_HOSTS: `ok.example, ${bad}` }), bad).toThrow(ConfigError);
    expect(() => loadConfig({ ALLOWED_UPSTREAM_HOSTS: 'ok.example, 10.0.0.0/33' })).toThrow(/ALLOWED_UPSTREAM_HOSTS: '10\.0\.0\.0\/33'/);
    expect(() => loadConfig({ ALLOWED_UPSTREAM_HOSTS: POLICY, LLM_BASE_URL: 'http://127.0.0.1:11434/v1', LLM_MODEL: 'm' })).toThrow(
      /LLM_BASE_URL: 127\.0\.0\.1 is not allowed/,
    );
    expect(() =>
      loadConfig({ ALLOWED_UPSTREAM_HOSTS: 'llm.example', BACKUP_S3_BUCKET: 'b', BACKUP_S3_ENDPOINT: 'http://minio.internal:9000' }),
    ).toThrow(/BACKUP_S3_ENDPOINT/);
    expect(loadConfig({ ALLOWED_UPSTREAM_HOSTS: ' ' }).ALLOWED_UPSTREAM_HOSTS).toEqual([]);
  });

  it('decides names, wildcards, addresses and ranges (IPv4, IPv6, IPv4-mapped IPv6) with real parsers', () => {
    const p = EgressPolicy.parse(POLICY.split(','));
    expect(p.hostVerdict('SUPERSET.example.com.')).toBe('allowed');
    expect(p.hostVerdict('bi.corp.example')).toBe('allowed');
    expect(p.hostVerdict('a.b.corp.example')).toBe('allowed');
    expect(p.hostVerdict('corp.example')).toBe('by_address');
    expect(p.hostVerdict('evilcorp.example')).toBe('by_address');
    expect(p.hostVerdict('192.0.2.77')).toBe('allowed');
    expect(p.hostVerdict('[2001:db8::1]')).toBe('allowed');
    expect(p.hostVerdict('::ffff:192.0.2.9')).toBe('allowed');
    expect(p.hostVerdict('127.0.0.1')).toBe('refused');
    expect(p.hostVerdict('::1')).toBe('refused');
    expect(EgressPolicy.parse(['only.example']).hostVerdict('other.example')).toBe('refused');
    expect(EgressPolicy.OPEN.hostVerdict('anything.example')).toBe('allowed');
  });
});

describe('environments under the policy', () => {
  it('refuses a base_url outside the policy with 400 host_not_allowed and stores nothing', async () => {
    const before = await count();
    for (const url of [fake.baseUrl, `http://localhost:${port}`, `http://[::1]:${port}`, 'https://corp.example', 'http://0x7f.1/']) {
      const r = await admin('POST', '/api/environments', envBody(`refused-${before}-${url.length}`, url));
      expect(r.status, `${url}: ${r.text}`).toBe(400);
      expect(r.body.code).toBe('host_not_allowed');
      expect(r.body.errors).toEqual([{ field: 'body.base_url', message: expect.any(String) }]);
    }
    expect(await count()).toBe(before);
    expect(fake.requests).toHaveLength(0);
  });

  it('accepts allowed names, wildcard names and addresses, and refuses moving one outside the policy', async () => {
    for (const [name, url] of [
      ['by-name', 'https://superset.example.com'],
      ['by-wildcard', 'https://bi.corp.example/superset'],
      ['by-range', 'http://192.0.2.10:8088'],
      ['by-range-v6', 'http://[2001:db8::5]:8088'],
    ]) {
      const r = await admin('POST', '/api/environments', envBody(name, url));
      expect(r.status, `${url}: ${r.text}`).toBe(201);
    }
    const id = (await admin('GET', '/api/environments?page_size=100')).body.items.find((e: any) => e.name === 'by-name').id;
    const moved = await admin('PUT', `/api/environments/${id}`, { base_url: fake.baseUrl, password: fake.password });
    expect(moved.status).toBe(400);
    expect(moved.body.code).toBe('host_not_allowed');
    expect((await admin('GET', `/api/environments/${id}`)).body.base_url).toBe('https://superset.example.com');
  });

  it('refuses a stored destination the policy no longer allows when connecting (503 host_not_allowed), and sends it nothing', async () => {
    const literal = await stored('stored-literal', fake.baseUrl);
    const byName = await stored('stored-name', `http://localhost:${port}`);
    for (const id of [literal, byName]) {
      const r = await admin('GET', `/api/dashboards?env_id=${id}`);
      expect(r.status, r.text).toBe(503);
      expect(r.body.code).toBe('host_not_allowed');
      const test = await admin('POST', `/api/environments/${id}/test`);
      expect(test.status).toBe(200);
      expect(test.body).toMatchObject({ ok: false, reachable: false, login: false, error: { code: 'host_not_allowed' } });
    }
    expect(fake.requests).toHaveLength(0);
  });
});

describe('the connection goes to the checked address', () => {
  it('resolves once per connection and connects to that address; a name that now resolves elsewhere is refused', async () => {
    const answers = ['127.0.0.1', '10.9.9.9'];
    const asked: string[] = [];
    const policy = EgressPolicy.parse(['127.0.0.0/8'], {
      resolve: async (name) => {
        asked.push(name);
        return [{ address: answers.shift() ?? '10.9.9.9', family: 4 }];
      },
    });
    // The name exists only for this resolver: that the call arrives proves the socket used its answer.
    const conn = { baseUrl: `http://rebind.invalid:${port}`, username: fake.username, password: fake.password };
    const first = new SupersetClient(conn, { egress: policy, retry: { attempts: 1 } });
    const before = fake.requests.length;
    await first.login();
    expect(fake.requests.length).toBeGreaterThan(before);
    first.close();
    const second = new SupersetClient(conn, { egress: policy, retry: { attempts: 1 } });
    const seen = fake.requests.length;
    await expect(second.login()).rejects.toMatchObject({ code: 'host_not_allowed', status: 503 });
    await expect(second.login()).rejects.toBeInstanceOf(HostNotAllowedError);
    second.close();
    expect(fake.requests.length).toBe(seen);
    expect(asked.every((n) => n === 'rebind.invalid')).toBe(true);
  });
});

describe('the environment test echoes no upstream body', () => {
  const PASSWORD = 'svc-password-7f3a1c9e';
  let server: http.Server;
  let base: string;
  let login: { status: number; type: string; body: string };
  let plain: Harness;
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      if (req.url === '/static/version_info.json')
        return void res.writeHead(200, { 'content-type': 'application/json' }).end('{"version":"6.1.0"}');
      res.writeHead(login.status, { 'content-type': login.type }).end(login.body);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    plain = await createHarness();
  });
  afterAll(async () => {
    await plain?.close();
    await new Promise((r) => server?.close(r));
  });

  it('reports a refused login as a status and one short line: no newlines, markup, tokens or the password', async () => {
    const created = await plain.request('POST', '/api/environments', {
      token: plain.adminToken,
      json: { name: 'chatty', base_url: base, username: 'svc', password: PASSWORD },
    });
    expect(created.status, created.text).toBe(201);
    const test = () => plain.request('POST', `/api/environments/${created.body.id}/test`, { token: plain.adminToken });
    const token = 'ghp_0123456789abcdefghijABCDEFGHIJ012345';
    const jwt = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJlLXNpZ25hdHVyZQ';
    login = {
      status: 401,
      type: 'application/json',
      body: JSON.stringify({ message: `Invalid login.\nSession ${jwt}\r\nretry with ${token} for svc:${PASSWORD}\n${'x'.repeat(3000)}` }),
    };
    const r = await test();
    expect(r.status).toBe(200);
    const detail: string = r.body.error.detail;
    expect(r.body.error.code).toBe('upstream_auth_failed');
    expect(detail).toMatch(/^Superset refused the credentials: Superset answered HTTP 401: Invalid login\. Session \[REDACTED\]/);
    expect(detail).not.toMatch(/[\r\n]/);
    expect(detail.length).toBeLessThanOrEqual(300);
    for (const secret of [
      token,
      jwt,
      PASSWORD,
      'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx',
    ])
      expect(detail).not.toContain(secret);

    login = {
      status: 500,
      type: 'application/json',
      body: JSON.stringify({ message: '<html><body><h1>Proxy error</h1><form action="/x"></form></body></html>' }),
    };
    const html = await test();
    expect(html.body.error.code).toBe('upstream_unavailable');
    expect(html.body.error.detail).toBe('Superset failed (server error): HTTP 500 (an HTML page, not quoted)');
  });
});
