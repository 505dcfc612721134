// Edges every route shares: methods a path does not serve, OPTIONS, text PostgreSQL cannot
// store, and one answer (404) for an environment id that cannot exist.
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../support/harness.ts';
import type { RequestOptions } from '../support/http.ts';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => h?.close());

const admin = (method: string, path: string, opts: RequestOptions = {}) => h.request(method, path, { ...opts, token: h.adminToken });

/** node:http, since fetch refuses TRACE. */
function raw(
  method: string,
  path: string,
  token?: string,
): Promise<{ status: number; headers: http.IncomingHttpHeaders; text: string; body: any }> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${h.baseUrl}${path}`, { method, headers: token ? { authorization: `Bearer ${token}` } : {} }, (res) => {
      let text = '';
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, text, body: text ? JSON.parse(text) : undefined }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('unsupported methods and OPTIONS', () => {
  it('answers 405 with Allow and a problem body for a method a path does not serve', async () => {
    for (const [method, path] of [
      ['TRACE', '/api/tasks'],
      ['TRACE', '/api/health'],
      ['PATCH', '/api/environments'],
      ['DELETE', '/api/auth/login'],
      ['PUT', '/api/openapi.json'],
    ]) {
      const r = await raw(method, path, h.adminToken);
      expect(r.status, `${method} ${path}: ${r.text}`).toBe(405);
      expect(r.headers['content-type']).toContain('application/problem+json');
      expect(r.body).toMatchObject({ status: 405, code: 'method_not_allowed' });
      expect(r.headers.allow).toContain('OPTIONS');
    }
    expect((await raw('TRACE', '/api/tasks')).headers.allow).toBe('HEAD, GET, OPTIONS');
    expect((await raw('DELETE', '/api/auth/login')).headers.allow).toBe('POST, OPTIONS');
  });

  it('answers OPTIONS with 204 and Allow, without credentials, and 404 for a path no route serves', async () => {
    const r = await h.request('OPTIONS', '/api/environments/some-id');
    expect(r.status).toBe(204);
    expect(r.headers.get('allow')).toBe('HEAD, GET, PUT, DELETE, OPTIONS');
    expect(r.text).toBe('');
    expect((await h.request('OPTIONS', '/api/no-such-thing')).status).toBe(404);
    expect((await raw('TRACE', '/api/no-such-thing')).status).toBe(404);
  });
});

describe('NUL characters and unpaired surrogates', () => {
  it('are a 400 naming the field, before any query, wherever they come in', async () => {
    const cases: Array<[string, string, RequestOptions, string]> = [
      ['POST', '/api/auth/login', { form: { username: 'ad\u0000min', password: 'x' } }, 'body.username'],
      ['POST', '/api/auth/login', { form: { username: 'admin', password: 'pass\u0000word' } }, 'body.password'],
      [
        'POST',
        '/api/admin/users',
        { token: h.adminToken, json: { username: 'nul-user', password: 'long-enough-password\u0000' } },
        'body.password',
      ],
      [
        'PUT',
        '/api/admin/users/00000000-0000-4000-8000-000000000000',
        { token: h.adminToken, json: { display_name: 'a\u0000b' } },
        'body.display_name',
      ],
      [
        'POST',
        '/api/admin/users',
        { token: h.adminToken, json: { username: 'x', password: 'long-enough-password', 'ro\u0000les': [] } },
        'body.ro\u0000les',
      ],
      [
        'POST',
        '/api/admin/users',
        { token: h.adminToken, json: { username: 'nul-user2', password: 'long-enough-password', roles: ['\ud800'] } },
        'body.roles.0',
      ],
      ['GET', '/api/tasks?owner=%00', { token: h.adminToken }, 'query.owner'],
      ['GET', '/api/admin/security-events?actor=a%00b', { token: h.adminToken }, 'query.actor'],
      ['GET', '/api/auth/oidc/callback?code=%00&state=%00', {}, 'query.code'],
      ['GET', '/api/tasks/%00', { token: h.adminToken }, 'path'],
      ['GET', '/api/environments/abc%00', { token: h.adminToken }, 'path'],
    ];
    for (const [method, path, opts, field] of cases) {
      const r = await h.request(method, path, opts);
      expect(r.status, `${method} ${path} ${JSON.stringify(opts.json ?? opts.form)}: ${r.text}`).toBe(400);
      expect(r.body.code).toBe('validation_failed');
      expect(r.body.errors).toEqual([{ field, message: expect.stringContaining('NUL') }]);
    }
    expect(await h.knex('users').whereLike('username', 'nul-user%')).toHaveLength(0);
  });
});

describe('an environment id that is not a UUID', () => {
  it('is an unknown environment (404) for migrations and backups, like everywhere else', async () => {
    const migrate = await admin('POST', '/api/dashboards/migrate', {
      json: { source_env_id: 'not-a-uuid', target_env_id: 'also-not', dashboard_ids: [1] },
    });
    expect(migrate.status, migrate.text).toBe(404);
    expect(migrate.body.code).toBe('not_found');
    const backup = await admin('POST', '/api/dashboards/backup', { json: { env_id: 'not-a-uuid', dashboard_ids: [1] } });
    expect(backup.status, backup.text).toBe(404);
    // Still 400 for what is wrong whatever the environments are.
    expect(
      (await admin('POST', '/api/dashboards/migrate', { json: { source_env_id: 'a', target_env_id: 'b', dashboard_ids: [] } })).status,
    ).toBe(400);
    expect(
      (await admin('POST', '/api/dashboards/migrate', { json: { source_env_id: 'a', target_env_id: 'a', dashboard_ids: [1] } })).status,
    ).toBe(400);
  });
});

describe('what the fuzzer found', () => {
  it('reads security-event bounds as instants: any ISO offset is fine, a year PostgreSQL cannot hold is a 400, never a 500', async () => {
    const ok = await admin(
      'GET',
      `/api/admin/security-events?since=${encodeURIComponent('0301-11-04T04:15:19.53194Z')}&until=${encodeURIComponent('0912-03-28T18:42:44.3570-21:57')}`,
    );
    expect(ok.status, ok.text).toBe(200);
    const year0 = await admin('GET', `/api/admin/security-events?since=${encodeURIComponent('0000-01-01T00:00:00Z')}`);
    expect(year0.status, year0.text).toBe(400);
    expect(year0.body.errors[0].field).toBe('query.since');
    const key = await admin('POST', '/api/admin/api-keys', {
      json: { name: 'far', permissions: ['tasks:READ'], expires_at: '9999-12-30T23:59:59-21:57' },
    });
    expect(key.status, key.text).toBe(201);
  });

  it('bounds the OIDC callback to what fits in a request: printable ASCII within limits, else 400', async () => {
    for (const q of [
      `code=${'a'.repeat(2049)}&state=s`,
      `code=${encodeURIComponent('Ü'.repeat(10))}&state=s`,
      'state=' + encodeURIComponent('\u0001'),
    ]) {
      const r = await h.request('GET', `/api/auth/oidc/callback?${q}`);
      expect(r.status, q.slice(0, 40)).toBe(400);
      expect(r.body.code).toBe('validation_failed');
    }
  });
});
