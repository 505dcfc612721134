// Why the fake: expired tokens, CSRF refusals, retries and typed errors on demand.
// The Superset client against the in-process fake: auth, CSRF, retries, error typing, host safety.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  SupersetAuthError,
  SupersetClient,
  SupersetImportError,
  SupersetNotFoundError,
  SupersetUnavailableError,
  decodeRison,
  encodeRison,
  normaliseBaseUrl,
  normaliseErrorBody,
  seg,
} from '../../lib/superset/index.ts';
import { startFakeSuperset, type FakeSuperset } from '../support/fake-superset.ts';
import { available, commandRuns } from '../support/ci.ts';

let fake: FakeSuperset;
const logs: string[] = [];
const logger = {
  debug: (o: object, m?: string) => logs.push(JSON.stringify({ o, m })),
  warn: (o: object, m?: string) => logs.push(JSON.stringify({ o, m })),
};
const clients: SupersetClient[] = [];
function client(opts: { password?: string; timeoutSeconds?: number; baseUrl?: string } = {}) {
  const c = new SupersetClient(
    {
      baseUrl: opts.baseUrl ?? fake.baseUrl,
      username: fake.username,
      password: opts.password ?? fake.password,
      timeoutSeconds: opts.timeoutSeconds ?? 5,
    },
    { logger, retry: { baseDelayMs: 10 } },
  );
  clients.push(c);
  return c;
}

beforeAll(async () => {
  fake = await startFakeSuperset({ thumbnails: true });
  fake.addUser({ username: 'alice', first_name: 'Alice', last_name: 'Liddell' });
  for (let i = 0; i < 230; i++) fake.addDashboard({ title: `Dash ${i}`, slug: `dash-${i}` });
  const db = fake.addDatabase({ name: 'analytics' });
  fake.addDataset({ table: 'sales', database: db.id });
});
afterEach(() => fake.clearFailures());
afterAll(async () => {
  clients.forEach((c) => c.close());
  await fake.close();
});

describe('rison and error bodies', () => {
  it('encodes FAB queries with the rison package and escapes quotes and bangs', () => {
    const q = {
      filters: [{ col: 'dashboard_title', opr: 'title_or_slug', value: "Q1 sales's!" }],
      page: 0,
      page_size: 25,
      skip: undefined,
    };
    const text = encodeRison(q);
    expect(text).toBe("(filters:!((col:dashboard_title,opr:title_or_slug,value:'Q1 sales!'s!!')),page:0,page_size:25)");
    expect(decodeRison(text)).toEqual({ filters: q.filters, page: 0, page_size: 25 });
    expect(encodeRison([1, 2, 3])).toBe('!(1,2,3)');
  });

  it("normalises Superset's four error body formats", () => {
    expect(normaliseErrorBody({ message: 'Not found' }, 'x').message).toBe('Not found');
    expect(normaliseErrorBody({ message: { slug: ['taken'] } }, 'x')).toMatchObject({
      message: '{"slug":["taken"]}',
      extra: { slug: ['taken'] },
    });
    expect(
      normaliseErrorBody(
        { errors: [{ message: 'bad', error_type: 'GENERIC_COMMAND_ERROR', extra: { 'a.yaml': 'x', issue_codes: [] } }] },
        'x',
      ),
    ).toEqual({ message: 'bad', errorType: 'GENERIC_COMMAND_ERROR', extra: { 'a.yaml': 'x' } });
    expect(normaliseErrorBody({ error: 'boom' }, 'x').message).toBe('boom');
    expect(normaliseErrorBody({ msg: 'Token has expired' }, 'x').message).toBe('Token has expired');
    expect(normaliseErrorBody('<html>oops</html>', 'fallback').message).toBe('fallback');
  });
});

describe('requests stay on the environment host', () => {
  it('accepts only http(s) base URLs without credentials, query or fragment', () => {
    expect(normaliseBaseUrl('https://bi.example.com/superset/')).toBe('https://bi.example.com/superset');
    for (const bad of ['ftp://x', 'https://u:p@x', 'https://x/?a=1', 'https://x/#f', 'not a url'])
      expect(() => normaliseBaseUrl(bad)).toThrow();
  });

  it('builds path segments only from integers and plain tokens', () => {
    expect(seg(12)).toBe('12');
    expect(seg('a-b_c')).toBe('a-b_c');
    for (const bad of ['../x', 'a/b', '%2e%2e', 'http://evil', '', -1, 1.5]) expect(() => seg(bad as never)).toThrow(TypeError);
  });

  it('refuses a thumbnail redirect to another host', async () => {
    let hits = 0;
    const evil = http.createServer((_req, res) => {
      hits++;
      res.end('x');
    });
    await new Promise<void>((r) => evil.listen(0, '127.0.0.1', r));
    const evilUrl = `http://127.0.0.1:${(evil.address() as AddressInfo).port}`;
    const redirector = http.createServer((req, res) => {
      if (req.url === '/api/v1/security/login') {
        res.writeHead(200, { 'content-type': 'application/json' });
        return res.end(JSON.stringify({ access_token: 'a.b.c' }));
      }
      res.writeHead(302, { location: `${evilUrl}/api/v1/dashboard/1/thumbnail/x/` });
      res.end();
    });
    await new Promise<void>((r) => redirector.listen(0, '127.0.0.1', r));
    try {
      const c = client({ baseUrl: `http://127.0.0.1:${(redirector.address() as AddressInfo).port}` });
      await expect(c.dashboardThumbnail(1)).rejects.toThrow(/redirect refused/);
      await expect(c.getDashboard(1)).rejects.toMatchObject({ upstreamStatus: 302 });
      expect(hits).toBe(0);
    } finally {
      redirector.close();
      evil.close();
    }
  });
});

describe('TLS', () => {
  // Locally a missing openssl skips this case; under CI=true (.ci/run installs it) it fails the run.
  const hasOpenssl = available('openssl', commandRuns('openssl', ['version']), "install Debian's openssl (.ci/run does)");

  it.skipIf(!hasOpenssl)('verifies certificates unless verify_tls is false', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sy-tls-'));
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-keyout',
        `${dir}/key.pem`,
        '-out',
        `${dir}/cert.pem`,
        '-days',
        '1',
        '-subj',
        '/CN=127.0.0.1',
      ],
      {
        stdio: 'ignore',
      },
    );
    const server = https.createServer({ key: fs.readFileSync(`${dir}/key.pem`), cert: fs.readFileSync(`${dir}/cert.pem`) }, (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"version": "9.9.9"}');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const baseUrl = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const strict = new SupersetClient({ baseUrl, username: 'a', password: 'b' }, { retry: { attempts: 1 } });
      const err = await strict.version().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(SupersetUnavailableError);
      expect((err as Error).message).toMatch(/TLS certificate not trusted/);
      strict.close();
      const lax = new SupersetClient({ baseUrl, username: 'a', password: 'b', verifyTls: false });
      expect(await lax.version()).toBe('9.9.9');
      lax.close();
    } finally {
      server.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('authentication and CSRF', () => {
  it('logs in once, sends Accept: application/json, and keeps secrets out of its log', async () => {
    const c = client();
    const mark = fake.mark();
    const [a, b] = await Promise.all([c.listDashboards({ pageSize: 5 }), c.listDashboards({ pageSize: 5, page: 1 })]);
    expect(a.count).toBe(230);
    expect(b.result.map((d) => d.id)).not.toEqual(a.result.map((d) => d.id));
    expect(fake.count('/api/v1/security/login', mark)).toBe(1);
    const mine = fake.requests.slice(mark).filter((r) => r.path.startsWith('/api/v1/dashboard'));
    expect(mine.every((r) => r.accept === 'application/json' && r.authorized)).toBe(true);
    const text = logs.join('\n');
    expect(text).not.toContain(fake.password);
    expect(text).not.toMatch(/eyJ[A-Za-z0-9_-]{10,}/);
  });

  it('logs in again when Superset stops accepting its token', async () => {
    const c = client();
    await c.listDashboards({ pageSize: 1 });
    fake.revokeTokens();
    const mark = fake.mark();
    expect((await c.listDashboards({ pageSize: 1 })).count).toBe(230);
    expect(fake.count('/api/v1/security/login', mark)).toBe(1);
  });

  it('renews an expiring access token from the refresh token instead of logging in again', async () => {
    const shortLived = await startFakeSuperset({ tokenTtlSeconds: 10 }); // within the 30 s renewal margin
    try {
      const c = client({ baseUrl: shortLived.baseUrl });
      await c.listDashboards();
      await c.listDashboards();
      expect(shortLived.count('/api/v1/security/login')).toBe(1);
      expect(shortLived.count('/api/v1/security/refresh')).toBe(1);
      expect(shortLived.requests.filter((r) => r.path === '/api/v1/dashboard/').every((r) => r.authorized)).toBe(true);
    } finally {
      await shortLived.close();
    }
  });

  it('refuses bad credentials with a typed auth error', async () => {
    await expect(client({ password: 'wrong' }).listDashboards()).rejects.toBeInstanceOf(SupersetAuthError);
  });

  it('sends the CSRF token, session cookie and Referer on mutating calls, and renews a stale token once', async () => {
    const c = client();
    await c.importBundle('dashboard', Buffer.from('PK\x03\x04rest'), { overwrite: true });
    expect(fake.count('/api/v1/security/csrf_token/')).toBeGreaterThan(0);
    const mark = fake.mark();
    (c as unknown as { csrf: string }).csrf = 'stale';
    await c.importBundle('dashboard', Buffer.from('PK\x03\x04rest'), { overwrite: true });
    expect(fake.count('/api/v1/security/csrf_token/', mark)).toBe(1);
    expect(fake.count('/api/v1/dashboard/import/', mark)).toBe(2); // 302 to /login/, renewed, then OK
  });

  it('fetches the CSRF token ahead on request, beside reads, and the write then carries it without asking', async () => {
    const c = client();
    const mark = fake.mark();
    // The read is answered only once the token was asked for: a client that fetched it after the read (or never)
    // never gets its answer, and the test's own timeout fails it. No timer decides.
    const tokenAsked = fake.seen({ method: 'GET', path: '/api/v1/security/csrf_token/' });
    fake.hold({ method: 'GET', path: '/api/v1/database/' }, tokenAsked);
    try {
      c.prepareWrites();
      await c.databases.list();
    } finally {
      fake.clearFailures();
    }
    const writeMark = fake.mark();
    await c.importBundle('dashboard', Buffer.from('PK\x03\x04rest'), { overwrite: true });
    expect(fake.count('/api/v1/security/csrf_token/', mark)).toBe(1);
    expect(fake.count('/api/v1/security/csrf_token/', writeMark)).toBe(0);
  });
});

describe('typed errors, retries and deadlines', () => {
  it('raises SupersetImportError with per-file messages on a refused import', async () => {
    const err = await client()
      .importBundle('dashboard', Buffer.from('PK\x03\x04rest'), { overwrite: false })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SupersetImportError);
    expect((err as SupersetImportError).status).toBe(422);
    expect((err as SupersetImportError).files).toEqual({
      'dashboards/x.yaml': 'Dashboard already exists and `overwrite=true` was not passed',
    });
  });

  it('maps 404 to SupersetNotFoundError', async () => {
    await expect(client().getDashboard(99999)).rejects.toBeInstanceOf(SupersetNotFoundError);
  });

  it('retries a GET on 502/503 with backoff, never a POST that writes', async () => {
    const c = client();
    await c.listDashboards({ pageSize: 1 });
    fake.fail({ path: '/api/v1/dashboard/' }, '502', 2);
    let mark = fake.mark();
    expect((await c.listDashboards({ pageSize: 1 })).count).toBe(230);
    expect(fake.count('/api/v1/dashboard/', mark)).toBe(3);

    fake.fail({ path: '/api/v1/dashboard/import/' }, '503', 1);
    mark = fake.mark();
    await expect(c.importBundle('dashboard', Buffer.from('PK\x03\x04rest'))).rejects.toMatchObject({
      reason: 'server_error',
      upstreamStatus: 503,
    });
    expect(fake.count('/api/v1/dashboard/import/', mark)).toBe(1);
    // A chart-data query is a POST that only reads: asked again.
    fake.fail({ path: '/api/v1/chart/data' }, '503', 1);
    mark = fake.mark();
    expect((await c.chartData({ datasource: { id: 1, type: 'table' }, queries: [{}] })).result).toHaveLength(1);
    expect(fake.count('/api/v1/chart/data', mark)).toBe(2);
  });

  it('turns timeouts, resets, 5xx and garbage into SupersetUnavailableError', async () => {
    // The fake never answers a 'timeout' request, so only it times out; 10 s bounds the answered ones against a hang.
    const c = client({ timeoutSeconds: 10 });
    await c.listDashboards({ pageSize: 1 });
    const cases: Array<[Parameters<FakeSuperset['fail']>[1], string]> = [
      ['timeout', 'timeout'],
      ['reset', 'network'],
      ['500', 'server_error'],
      ['garbage', 'bad_response'],
      ['html', 'bad_response'],
      ['empty', 'bad_response'],
    ];
    for (const [mode, reason] of cases) {
      fake.clearFailures();
      fake.fail({ path: '/api/v1/dashboard/' }, mode);
      const before = fake.mark();
      const err = await c.listDashboards({ pageSize: 1 }).catch((e: unknown) => e);
      expect(err, mode).toBeInstanceOf(SupersetUnavailableError);
      expect((err as SupersetUnavailableError).reason, mode).toBe(reason);
      expect((err as SupersetUnavailableError).status).toBe(503);
      // One attempt: timeouts are not retried by default (counted, not timed: a loaded machine is slow, not wrong).
      if (mode === 'timeout') expect(fake.count('/api/v1/dashboard/', before)).toBe(1);
    }
  });
});

describe('lists, thumbnails, accounts', () => {
  it('pages through a whole list a few pages at a time', async () => {
    const all = await client().listAll<{ id: number }>('dashboard', { columns: ['id'] });
    expect(all).toHaveLength(230);
    expect(new Set(all.map((d) => d.id)).size).toBe(230);
  });

  it('follows the digest redirect on the same host and answers computing, then the image', async () => {
    const c = client();
    expect(await c.dashboardThumbnail(1)).toMatchObject({ status: 'computing', retryAfterSeconds: 5 });
    fake.dashboards[0].thumbnail = 'ready';
    const ready = await c.dashboardThumbnail(1);
    expect(ready.status).toBe('ready');
    if (ready.status === 'ready') {
      expect(ready.contentType).toBe('image/png');
      expect(ready.bytes.subarray(1, 4).toString()).toBe('PNG');
    }
  });

  it('resolves a username exactly, trimmed and case-insensitively, with display-name aliases', async () => {
    const c = client();
    expect(await c.resolveUsername('  ALICE ')).toEqual({
      ids: [2],
      aliases: ['Alice Liddell'],
      exact: true,
      candidates: [{ id: 2, display_name: 'Alice Liddell', email: 'alice@example.com' }],
    });
    expect((await c.resolveUsername('ali')).ids).toEqual([]);
    expect((await c.findAccounts('lidd'))[0]).toMatchObject({ id: 2, username: 'alice', display_name: 'Alice Liddell' });
  });

  it('reads every account in one security-API call, and the related owners where that API is closed', async () => {
    const users = /^\/api\/v1\/security\/users\/$/;
    const mark = fake.mark();
    const open = await client().users.all();
    expect(open.usernames).toBe(true);
    expect(open.accounts.find((a) => a.id === 2)).toMatchObject({ username: 'alice', display_name: 'Alice Liddell' });
    // One page (2 before: a probe of one row, then the list).
    expect(fake.count(users, mark)).toBe(1);
    const off = await startFakeSuperset({ securityApi: false });
    try {
      off.addDashboard({ title: 'Owned', owners: [1] });
      const c = client({ baseUrl: off.baseUrl });
      const closed = await c.users.all();
      expect(closed.usernames).toBe(false);
      expect(closed.accounts.length).toBeGreaterThan(0);
      expect(closed.accounts.every((a) => a.username === null)).toBe(true);
    } finally {
      await off.close();
    }
  });
});

describe('capabilities', () => {
  it('probes what the instance can do once, keeps it with the release, and probes again only when the release changed', async () => {
    const f = await startFakeSuperset({
      version: '5.0.0',
      thumbnails: true,
      filterColumns: { dataset: ['id', 'table_name'], chart: ['id'] },
    });
    const off = await startFakeSuperset({ thumbnails: false, securityApi: false });
    try {
      f.addDashboard({ title: 'One' });
      off.addDashboard({ title: 'One' });
      const c = new SupersetClient({ baseUrl: f.baseUrl, username: f.username, password: f.password }, { capabilitiesRecheckMs: 0 });
      clients.push(c);
      const first = await c.capabilities();
      expect(first).toMatchObject({
        version: '5.0.0',
        lists: { dataset: { filters: ['id', 'table_name'] }, chart: { filters: ['id'] }, dashboard: { filters: null } },
        security_api: true,
        thumbnails: true,
      });
      const probes = () => f.count(/\/_info$/);
      const n = probes();
      // Same release: kept (only the version file is read again).
      expect(await c.capabilities()).toBe(first);
      expect(probes()).toBe(n);
      f.setVersion('6.0.0');
      const upgraded = await c.capabilities();
      expect(upgraded.version).toBe('6.0.0');
      expect(probes()).toBe(n + 3);

      const plain = new SupersetClient({ baseUrl: off.baseUrl, username: off.username, password: off.password });
      clients.push(plain);
      expect(await plain.capabilities()).toMatchObject({ security_api: false, thumbnails: false });
    } finally {
      await Promise.all([f.close(), off.close()]);
    }
  });
});

describe("Flask-AppBuilder's shared list filters", () => {
  it('never runs two list calls of one endpoint at once, so each gets its own filters', async () => {
    const racy = await startFakeSuperset({ fabFilterRace: true });
    try {
      const u = racy.addUser({ username: 'u' }).id;
      for (let i = 0; i < 30; i++) racy.addDashboard({ title: `R${i}`, owners: i < 10 ? [u] : [1] });
      const filters = (userId: number) => [{ col: 'owners', opr: 'rel_m_m', value: userId }];
      // The fake reproduces the race: plain concurrent requests see each other's filters.
      const c = client({ baseUrl: racy.baseUrl });
      await c.login();
      const token = (c as unknown as { auth: { accessToken: string } }).auth.accessToken;
      const raw = (userId: number) =>
        fetch(`${racy.baseUrl}/api/v1/dashboard/?q=${encodeURIComponent(encodeRison({ filters: filters(userId), page_size: 100 }))}`, {
          headers: { authorization: `Bearer ${token}`, accept: 'application/json' },
        }).then(async (r) => ((await r.json()) as { count: number }).count);
      const rawCounts = await Promise.all([raw(u), raw(1), raw(u), raw(1)]);
      expect(rawCounts).not.toEqual([10, 20, 10, 20]);
      // Through the client: correct every time.
      const counts = await Promise.all([u, 1, u, 1, u, 1].map((id) => c.listDashboards({ filters: filters(id) }).then((r) => r.count)));
      expect(counts).toEqual([10, 20, 10, 20, 10, 20]);
    } finally {
      await racy.close();
    }
  });
});
