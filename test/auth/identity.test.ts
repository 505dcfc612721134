import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../api/app.ts';
import { AuthService } from '../../api/auth/service.ts';
import { TokenIssuer } from '../../api/auth/tokens.ts';
import { ADMIN, capturedLogs, createHarness, type Harness } from '../support/harness.ts';
import { httpClient, type HttpResponse, type RequestOptions } from '../support/http.ts';

let h: Harness;
/** Every response of this file except the two that must carry a secret (login, key creation). */
const transcript: string[] = [];
const secrets = new Set<string>([ADMIN.password]);

async function call(method: string, path: string, opts: RequestOptions = {}, client = h.request): Promise<HttpResponse> {
  const r = await client(method, path, opts);
  const carriesSecret =
    (path === '/api/auth/login' && r.status === 200) || (path === '/api/admin/api-keys' && method === 'POST' && r.status === 201);
  if (!carriesSecret) transcript.push(`${method} ${path} ${r.status} ${r.text} ${JSON.stringify([...r.headers])}`);
  return r;
}
const admin = (m: string, p: string, o: RequestOptions = {}) => call(m, p, { ...o, token: h.adminToken });

async function login(username: string, password: string, headers?: Record<string, string>, client = h.request) {
  secrets.add(password);
  const r = await call('POST', '/api/auth/login', { form: { username, password }, headers }, client);
  if (r.status === 200) secrets.add(r.body.access_token);
  return r;
}

async function createUser(username: string, roles: string[], password = `${username}-password-123`) {
  secrets.add(password);
  const r = await admin('POST', '/api/admin/users', { json: { username, password, roles, email: `${username}@example.com` } });
  expect(r.status, r.text).toBe(201);
  const t = await login(username, password);
  return { id: r.body.id as string, token: t.body.access_token as string, password };
}

beforeAll(async () => {
  h = await createHarness();
  secrets.add(h.adminToken);
});
afterAll(async () => h?.close());

describe('password login, current user and logout', () => {
  it('returns a bearer token for good credentials and a 401 problem for bad ones', async () => {
    const ok = await login(ADMIN.username, ADMIN.password);
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ token_type: 'bearer', expires_in: 1800 });
    const [, payload] = ok.body.access_token.split('.');
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString());
    expect(Object.keys(claims)).toEqual(expect.arrayContaining(['sub', 'roles', 'scope', 'sid', 'jti', 'exp']));
    expect(claims.roles).toEqual(['Admin']);
    expect(claims.scope).toBe('admin');
    const bad = await login(ADMIN.username, 'wrong-password');
    expect(bad.status).toBe(401);
    expect(bad.body.code).toBe('unauthenticated');
    const unknown = await login('nobody-here', 'whatever-password');
    expect(unknown.status).toBe(401);
    expect(unknown.body.detail).toBe(bad.body.detail); // no hint which usernames exist
  });

  it('rejects a login without the form fields with a 400 naming them', async () => {
    const r = await call('POST', '/api/auth/login', { form: { username: 'admin' } });
    expect(r.status).toBe(400);
    expect(r.body.errors).toEqual([{ field: 'body.password', message: 'password is required' }]);
  });

  it('refuses garbage, foreign and expired-looking tokens', async () => {
    for (const token of ['not-a-jwt', 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl']) {
      const r = await call('GET', '/api/auth/me', { token });
      expect(r.status).toBe(401);
    }
    expect((await call('GET', '/api/auth/me', { headers: { authorization: 'Basic abc' } })).status).toBe(401);
  });

  it('describes the caller with roles and effective permissions, and records the read', async () => {
    const u = await createUser('opal', ['Operator']);
    const me = await call('GET', '/api/auth/me', { token: u.token });
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ username: 'opal', roles: ['Operator'], auth_source: 'local', email: 'opal@example.com' });
    expect(me.body.permissions).toContain('dashboards:MIGRATE');
    expect(me.body.permissions).not.toContain('clean_release:APPROVE');
    expect(me.body).not.toHaveProperty('password_hash');
    const ev = await h.knex('security_events').where({ event_type: 'CURRENT_USER_READ', actor_username: 'opal' });
    expect(ev).toHaveLength(1);
  });

  it('revokes the session on logout: the same token is refused afterwards', async () => {
    const u = await createUser('leo', ['Viewer']);
    expect((await call('GET', '/api/auth/me', { token: u.token })).status).toBe(200);
    const out = await call('POST', '/api/auth/logout', { token: u.token });
    expect(out.status).toBe(200);
    const after = await call('GET', '/api/auth/me', { token: u.token });
    expect(after.status).toBe(401);
    expect(after.body.detail).toMatch(/session has ended/);
    const [event] = await h.knex('security_events').where({ event_type: 'LOGOUT', actor_username: 'leo' });
    expect(event.outcome).toBe('success');
    // A fresh login works again.
    expect((await login('leo', u.password)).status).toBe(200);
  });

  it('throttles repeated failures per account without locking the user out for good', async () => {
    const u = await createUser('tara', ['Viewer']);
    // The same app and database with the throttle on a clock only this test moves (as in
    // throttle.test.ts): the one-second lock can neither run out while a slow machine serves the
    // failures (the right password then got 200, not 429) nor need a pause to end.
    let now = new Date('2031-03-01T08:00:00Z');
    const ctx = h.boot.context;
    const auth = new AuthService({
      identity: ctx.stores.identity,
      events: ctx.securityEvents,
      tokens: new TokenIssuer(ctx.keyring.jwtKey),
      clock: () => now,
    });
    const server = await new Promise<Server>((resolve) => {
      const s = createApp({ ...ctx, auth }).listen(0, '127.0.0.1', () => resolve(s));
    });
    const clocked = httpClient(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    try {
      for (let i = 0; i < 5; i++) expect((await login('tara', `wrong-${i}`, undefined, clocked)).status).toBe(401);
      const locked = await login('tara', u.password, undefined, clocked);
      expect(locked.status).toBe(429);
      expect(Number(locked.headers.get('retry-after'))).toBe(1);
      expect(locked.body.code).toBe('too_many_requests');
      // The first lock lasts one second (and doubles per further failure, capped at 15 minutes).
      now = new Date(now.getTime() + 1000);
      expect((await login('tara', u.password, undefined, clocked)).status).toBe(200);
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
    const events = await h.knex('security_events').where({ actor_username: 'tara' }).orderBy('id');
    expect(events.filter((e) => e.event_type === 'LOGIN_FAILED')).toHaveLength(5);
    expect(events.map((e) => e.event_type)).toContain('LOGIN_THROTTLED');
  });
});

describe('admin: users', () => {
  it('creates, lists, updates and deletes local users', async () => {
    const u = await createUser('uma', ['Viewer']);
    const list = await admin('GET', '/api/admin/users?search=uma');
    expect(list.body.items.map((x: any) => x.username)).toEqual(['uma']);
    expect(list.body.items[0]).not.toHaveProperty('password_hash');
    const upd = await admin('PUT', `/api/admin/users/${u.id}`, { json: { roles: ['Operator', 'ReleaseManager'], display_name: 'Uma U.' } });
    expect(upd.status).toBe(200);
    expect(upd.body.roles).toEqual(['Operator', 'ReleaseManager']);
    // Role changes apply to the next request, not the next login.
    expect((await call('GET', '/api/auth/me', { token: u.token })).body.permissions).toContain('clean_release:APPROVE');
    const pw = await admin('PUT', `/api/admin/users/${u.id}`, { json: { password: 'a-brand-new-password' } });
    secrets.add('a-brand-new-password');
    expect(pw.status).toBe(200);
    expect((await call('GET', '/api/auth/me', { token: u.token })).status).toBe(401); // sessions ended
    const del = await admin('DELETE', `/api/admin/users/${u.id}`);
    expect(del.body).toEqual({ id: u.id, deleted: true });
    expect((await admin('DELETE', `/api/admin/users/${u.id}`)).status).toBe(404);
  });

  it.each([
    [{ username: 'x1', password: 'short' }, 'body.password', 400],
    [{ username: 'bad name', password: 'long-enough-password' }, 'body.username', 400],
    [{ username: 'x2', password: 'long-enough-password', roles: ['Wizard'] }, 'body.roles', 400],
    [{ username: 'x3', password: 'long-enough-password', email: 'not-an-email' }, 'body.email', 400],
    [{ username: 'x4', password: 'long-enough-password', is_superuser: true }, 'body', 400],
  ])('rejects %j (%s) and creates nothing', async (body, field, status) => {
    const before = await h.knex('users').count({ n: '*' });
    const r = await admin('POST', '/api/admin/users', { json: body });
    expect(r.status).toBe(status);
    expect(r.body.errors.map((e: any) => e.field)).toContain(field);
    expect(await h.knex('users').count({ n: '*' })).toEqual(before);
  });

  it('answers 409 for a taken username (any case), 404 for unknown ids, 400 for malformed ids', async () => {
    expect((await admin('POST', '/api/admin/users', { json: { username: 'ADMIN', password: 'long-enough-password' } })).status).toBe(409);
    const missing = '00000000-0000-4000-8000-000000000000';
    expect((await admin('PUT', `/api/admin/users/${missing}`, { json: { display_name: 'x' } })).status).toBe(404);
    expect((await admin('DELETE', `/api/admin/users/${missing}`)).status).toBe(404);
    expect((await admin('PUT', '/api/admin/users/not-a-uuid', { json: {} })).status).toBe(400);
  });

  it('never removes the last admin and never lets an admin delete themselves', async () => {
    const me = await admin('GET', '/api/auth/me');
    expect((await admin('DELETE', `/api/admin/users/${me.body.id}`)).body.code).toBe('self_delete');
    const demote = await admin('PUT', `/api/admin/users/${me.body.id}`, { json: { roles: ['Viewer'] } });
    expect(demote.status).toBe(409);
    expect(demote.body.code).toBe('last_admin');
    expect((await admin('GET', '/api/auth/me')).body.roles).toEqual(['Admin']);
  });
});

describe('admin: roles and group mappings', () => {
  it('creates, renames and deletes a role, with security events', async () => {
    const r = await admin('POST', '/api/admin/roles', {
      json: { name: 'Auditor', permissions: ['tasks:READ', 'tasks:READ', 'dashboards:READ'] },
    });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ name: 'Auditor', builtin: false, permissions: ['dashboards:READ', 'tasks:READ'] });
    const u = await admin('PUT', `/api/admin/roles/${r.body.id}`, { json: { name: 'Auditors', permissions: ['tasks:READ'] } });
    expect(u.body).toMatchObject({ name: 'Auditors', permissions: ['tasks:READ'] });
    expect((await admin('DELETE', `/api/admin/roles/${r.body.id}`)).status).toBe(200);
    expect((await admin('DELETE', `/api/admin/roles/${r.body.id}`)).status).toBe(404);
    const types = (await h.knex('security_events').whereIn('event_type', ['ROLE_CREATED', 'ROLE_UPDATED', 'ROLE_DELETED'])).map(
      (e) => e.event_type,
    );
    expect(types).toEqual(['ROLE_CREATED', 'ROLE_UPDATED', 'ROLE_DELETED']);
  });

  it('rejects duplicate names, unknown permissions, built-in edits and unknown ids', async () => {
    expect((await admin('POST', '/api/admin/roles', { json: { name: 'viewer' } })).status).toBe(409);
    const unknown = await admin('POST', '/api/admin/roles', { json: { name: 'Ghost', permissions: ['tasks:FLY'] } });
    expect(unknown.status).toBe(400);
    expect(unknown.body.errors[0]).toMatchObject({ field: 'body.permissions.0', message: "unknown permission 'tasks:FLY'" });
    expect((await admin('POST', '/api/admin/roles', { json: { name: '' } })).status).toBe(400);
    expect(await h.knex('roles').where({ name: 'Ghost' })).toHaveLength(0);
    const viewer = (await admin('GET', '/api/admin/roles')).body.items.find((x: any) => x.name === 'Viewer');
    expect((await admin('PUT', `/api/admin/roles/${viewer.id}`, { json: { permissions: [] } })).body.code).toBe('builtin_role');
    expect((await admin('DELETE', `/api/admin/roles/${viewer.id}`)).status).toBe(409);
    expect((await admin('PUT', '/api/admin/roles/00000000-0000-4000-8000-000000000000', { json: { name: 'X' } })).status).toBe(404);
    expect((await admin('DELETE', '/api/admin/roles/not-a-uuid')).status).toBe(400);
  });

  it('maps directory groups to roles', async () => {
    const viewer = (await admin('GET', '/api/admin/roles')).body.items.find((x: any) => x.name === 'Viewer');
    const m = await admin('POST', '/api/admin/group-mappings', { json: { group_name: 'analysts', role_id: viewer.id } });
    expect(m.status).toBe(201);
    expect(m.body).toMatchObject({ group_name: 'analysts', role_name: 'Viewer' });
    expect((await admin('POST', '/api/admin/group-mappings', { json: { group_name: 'analysts', role_id: viewer.id } })).status).toBe(409);
    expect(
      (await admin('POST', '/api/admin/group-mappings', { json: { group_name: 'x', role_id: '00000000-0000-4000-8000-000000000000' } }))
        .status,
    ).toBe(400);
    expect((await admin('GET', '/api/admin/group-mappings')).body.items).toHaveLength(1);
    expect((await admin('DELETE', `/api/admin/group-mappings/${m.body.id}`)).status).toBe(200);
    expect((await admin('DELETE', `/api/admin/group-mappings/${m.body.id}`)).status).toBe(404);
  });
});

describe('admin: API keys', () => {
  it('creates a key shown once, authenticates with exactly its permissions, and revokes it at once', async () => {
    const c = await admin('POST', '/api/admin/api-keys', { json: { name: 'ci', permissions: ['tasks:READ'] } });
    expect(c.status).toBe(201);
    // The spec names the one-time secret `raw_key`; `key` stays as a deprecated alias of the same value.
    const key: string = c.body.raw_key;
    secrets.add(key);
    expect(key).toMatch(/^sy_/);
    expect(c.body.key).toBe(key);
    const row = await h.knex('api_keys').where({ id: c.body.id }).first();
    expect(row.key_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(row.key_hash).not.toContain(key);
    const list = await admin('GET', '/api/admin/api-keys');
    expect(list.body.items[0]).not.toHaveProperty('key_hash');
    expect(list.body.items[0]).not.toHaveProperty('key');
    expect(list.body.items[0]).not.toHaveProperty('raw_key');
    const created = (await call('GET', '/api/openapi.json')).body.paths['/api/admin/api-keys'].post.responses['201'].content[
      'application/json'
    ].schema;
    expect(created.required).toContain('raw_key');
    expect(created.properties.key.deprecated).toBe(true);
    expect(created.properties.raw_key.deprecated).toBeUndefined();
    expect(list.text).not.toContain(key);

    expect((await call('GET', '/api/tasks', { apiKey: key })).status).toBe(200);
    expect((await call('POST', '/api/tasks/selfcheck', { apiKey: key, json: {} })).status).toBe(403);
    expect((await call('GET', '/api/admin/users', { apiKey: key })).status).toBe(403);

    const rev = await admin('DELETE', `/api/admin/api-keys/${c.body.id}`);
    expect(rev.status).toBe(200);
    expect(rev.body).toMatchObject({ id: c.body.id, active: false });
    expect((await call('GET', '/api/tasks', { apiKey: key })).status).toBe(401);
    expect((await admin('DELETE', `/api/admin/api-keys/${c.body.id}`)).status).toBe(404);
    expect((await admin('DELETE', '/api/admin/api-keys/00000000-0000-4000-8000-000000000000')).status).toBe(404);
    expect(await h.knex('api_keys').where({ id: c.body.id })).toHaveLength(1); // kept for audit
    const types = (await h.knex('security_events').whereIn('event_type', ['API_KEY_CREATED', 'API_KEY_REVOKED'])).map((e) => e.event_type);
    expect(types).toEqual(['API_KEY_CREATED', 'API_KEY_REVOKED']);
  });

  it('needs a name and at least one known permission', async () => {
    for (const body of [
      { name: 'x', permissions: [] },
      { name: '', permissions: ['tasks:READ'] },
      { name: 'x', permissions: ['root:ALL'] },
      { name: 'x' },
    ]) {
      const r = await admin('POST', '/api/admin/api-keys', { json: body });
      expect(r.status, JSON.stringify(body)).toBe(400);
    }
    expect(await h.knex('api_keys').where({ name: 'x' })).toHaveLength(0);
  });

  it('lets a key holding admin:settings:WRITE manage keys, but not users', async () => {
    const c = await admin('POST', '/api/admin/api-keys', { json: { name: 'ops-bot', permissions: ['admin:settings:WRITE'] } });
    secrets.add(c.body.key);
    expect((await call('GET', '/api/admin/api-keys', { apiKey: c.body.key })).status).toBe(200);
    expect((await call('GET', '/api/admin/users', { apiKey: c.body.key })).status).toBe(403);
    expect((await call('GET', '/api/tasks', { apiKey: 'sy_made-up-key' })).status).toBe(401);
  });
});

describe('permission matrix', () => {
  const endpoints: Array<[string, string, unknown?]> = [
    ['GET', '/api/admin/users'],
    ['POST', '/api/admin/users', { username: 'mx-new', password: 'long-enough-password' }],
    ['PUT', '/api/admin/users/00000000-0000-4000-8000-000000000000', { display_name: 'x' }],
    ['DELETE', '/api/admin/users/00000000-0000-4000-8000-000000000000'],
    ['GET', '/api/admin/roles'],
    ['POST', '/api/admin/roles', { name: 'mx-role' }],
    ['PUT', '/api/admin/roles/00000000-0000-4000-8000-000000000000', { name: 'y' }],
    ['DELETE', '/api/admin/roles/00000000-0000-4000-8000-000000000000'],
    ['GET', '/api/admin/group-mappings'],
    ['POST', '/api/admin/group-mappings', { group_name: 'g', role_id: '00000000-0000-4000-8000-000000000000' }],
    ['DELETE', '/api/admin/group-mappings/00000000-0000-4000-8000-000000000000'],
    ['GET', '/api/admin/api-keys'],
    ['POST', '/api/admin/api-keys', { name: 'mx', permissions: ['tasks:READ'] }],
    ['DELETE', '/api/admin/api-keys/00000000-0000-4000-8000-000000000000'],
    ['GET', '/api/admin/security-events'],
    ['GET', '/api/admin/permissions'],
    ['POST', '/api/tasks/selfcheck', {}],
  ];
  const tokens: Record<string, string> = {};

  beforeAll(async () => {
    for (const role of ['Operator', 'Viewer', 'ReleaseManager'])
      tokens[role] = (await createUser(`mx-${role.toLowerCase()}`, [role])).token;
    tokens.NoRole = (await createUser('mx-norole', [])).token;
  });

  it('lets only admins through: 401 without credentials, 403 for every other role', async () => {
    for (const [method, path, body] of endpoints) {
      const json = body === undefined ? undefined : body;
      expect((await call(method, path, { json })).status, `anonymous ${method} ${path}`).toBe(401);
      for (const [role, token] of Object.entries(tokens)) {
        const r = await call(method, path, { json, token });
        expect(r.status, `${role} ${method} ${path}`).toBe(403);
        expect(r.body.code).toBe('forbidden');
      }
      const a = await admin(method, path, { json });
      expect([200, 201, 202, 400, 404], `Admin ${method} ${path}: ${a.text}`).toContain(a.status);
      expect(a.status === 404 || a.status === 400 || a.status < 300).toBe(true);
    }
  });
});

describe('permission matrix: people and their API keys', () => {
  // A person of each role and a key they made (holding every permission they held then, and
  // admin:settings:WRITE, which minting needed and they have since lost). The key acts for them:
  // it answers as them, never does more than they may now, and their requests and its are one
  // person's for approvals.
  const ROLES = ['Viewer', 'Operator', 'ReleaseManager', 'Admin'] as const;
  type Role = (typeof ROLES)[number];
  const people = {} as Record<Role, { id: string; username: string; token: string; key: string; keyId: string }>;
  let envId: string;
  const UNKNOWN = '00000000-0000-4000-8000-000000000000';

  beforeAll(async () => {
    const minter = await admin('POST', '/api/admin/roles', { json: { name: 'KeyMinter', permissions: ['admin:settings:WRITE'] } });
    expect(minter.status, minter.text).toBe(201);
    const catalogue = (await admin('GET', '/api/admin/permissions')).body.items.map((p: any) => p.name) as string[];
    for (const role of ROLES) {
      const username = `pk-${role.toLowerCase()}`;
      const u = await createUser(username, role === 'Admin' ? ['Admin'] : [role, 'KeyMinter']);
      const held = (await call('GET', '/api/auth/me', { token: u.token })).body.permissions as string[];
      const k = await call('POST', '/api/admin/api-keys', {
        token: u.token,
        json: { name: `${username}-ci`, permissions: role === 'Admin' ? catalogue : held },
      });
      expect(k.status, k.text).toBe(201);
      secrets.add(k.body.key);
      if (role !== 'Admin') expect((await admin('PUT', `/api/admin/users/${u.id}`, { json: { roles: [role] } })).status).toBe(200);
      people[role] = { id: u.id, username, token: u.token, key: k.body.key, keyId: k.body.id };
    }
    const [row] = await h
      .knex('environments')
      .insert({ name: 'pk-prod', base_url: 'http://prod.invalid', username: 'svc', password_encrypted: 'v1:x:y:z' })
      .returning('id');
    envId = row.id as string;
  });

  const both = (role: Role) => [
    { via: 'password', opts: { token: people[role].token } },
    { via: 'key', opts: { apiKey: people[role].key } },
  ];

  it('answers as the person: /api/auth/me names them, with exactly their permissions now', async () => {
    for (const role of ROLES) {
      const person = await call('GET', '/api/auth/me', { token: people[role].token });
      const key = await call('GET', '/api/auth/me', { apiKey: people[role].key });
      expect(key.body, role).toMatchObject({ id: people[role].keyId, username: people[role].username, auth_method: 'api_key', roles: [] });
      expect(key.body.permissions, role).toEqual([...person.body.permissions].sort());
      expect(key.body.permissions.includes('admin:settings:WRITE'), role).toBe(role === 'Admin');
    }
  });

  it('lets a key through exactly where its creator may go now (keys never carry the Admin role itself)', async () => {
    const probes: Array<{
      what: string;
      method: string;
      path: string;
      json?: unknown;
      expect: Record<Role, number>;
      keyOnly?: Partial<Record<Role, number>>;
    }> = [
      {
        what: 'list API keys (admin:settings:WRITE)',
        method: 'GET',
        path: '/api/admin/api-keys',
        expect: { Viewer: 403, Operator: 403, ReleaseManager: 403, Admin: 200 },
      },
      {
        what: 'list tasks (tasks:READ)',
        method: 'GET',
        path: '/api/tasks',
        expect: { Viewer: 200, Operator: 200, ReleaseManager: 200, Admin: 200 },
      },
      {
        what: 'create a schedule (schedules:WRITE, dashboards:BACKUP)',
        method: 'POST',
        path: '/api/schedules',
        json: { name: 'pk', kind: 'backup', params: { env_id: UNKNOWN }, interval_seconds: 60 },
        expect: { Viewer: 403, Operator: 404, ReleaseManager: 403, Admin: 404 },
      },
      {
        what: 'validate an environment (dashboards:VALIDATE)',
        method: 'POST',
        path: `/api/environments/${UNKNOWN}/validate`,
        json: {},
        expect: { Viewer: 403, Operator: 404, ReleaseManager: 404, Admin: 404 },
      },
      {
        what: 'a validate schedule (schedules:WRITE, dashboards:VALIDATE)',
        method: 'POST',
        path: '/api/schedules',
        json: { name: 'pk-validate', kind: 'validate', params: { env_id: UNKNOWN }, interval_seconds: 60 },
        expect: { Viewer: 403, Operator: 404, ReleaseManager: 403, Admin: 404 },
      },
      {
        what: 'register a release candidate (clean_release:WRITE)',
        method: 'POST',
        path: '/api/v2/clean-release/candidates',
        json: { name: 'pk', target_env_id: UNKNOWN, sources: [{ kind: 'backup', backup_id: UNKNOWN }] },
        expect: { Viewer: 403, Operator: 404, ReleaseManager: 404, Admin: 404 },
      },
      {
        what: 'list users (role Admin)',
        method: 'GET',
        path: '/api/admin/users',
        expect: { Viewer: 403, Operator: 403, ReleaseManager: 403, Admin: 200 },
        keyOnly: { Admin: 403 },
      },
      // Protection is an administrator's call (admin:settings:WRITE), whoever may edit environments.
      // Admin comes last: its call protects the environment, the next probe clears it again.
      {
        what: 'protect an environment (admin:settings:WRITE)',
        method: 'PUT',
        path: `/api/environments/{env}`,
        json: { protected: true },
        expect: { Viewer: 403, Operator: 403, ReleaseManager: 403, Admin: 200 },
      },
      {
        what: "clear an environment's protection (admin:settings:WRITE)",
        method: 'PUT',
        path: `/api/environments/{env}`,
        json: { protected: false },
        expect: { Viewer: 403, Operator: 403, ReleaseManager: 403, Admin: 200 },
      },
      {
        what: 'a dictionary query through SQL Lab (datasets:WRITE)',
        method: 'POST',
        path: '/api/datasets/map-columns',
        json: { env_id: UNKNOWN, source_type: 'sqllab', database_id: 1, dataset_ids: [1], sql: 'SELECT 1 AS column_name', dry_run: true },
        expect: { Viewer: 403, Operator: 404, ReleaseManager: 403, Admin: 404 },
      },
      // The review loop: opening and refreshing a pull request, and the webhook that deploys a merge.
      {
        what: 'open a pull request (pull_requests:OPEN)',
        method: 'POST',
        path: '/api/git/dashboards/1/pull-requests',
        json: { env_id: UNKNOWN, branch: 'pk', title: 'pk', target_env_id: UNKNOWN },
        expect: { Viewer: 403, Operator: 404, ReleaseManager: 404, Admin: 404 },
      },
      {
        what: 'refresh a pull request (pull_requests:UPDATE)',
        method: 'POST',
        path: '/api/git/dashboards/1/pull-requests/1/refresh',
        json: { env_id: UNKNOWN },
        expect: { Viewer: 403, Operator: 404, ReleaseManager: 404, Admin: 404 },
      },
      {
        what: "set a git config's webhook (pull_requests:MERGE_DEPLOY)",
        method: 'PUT',
        path: `/api/git/configs/${UNKNOWN}/webhook`,
        json: { secret: 'pk-webhook-secret-0123456789' },
        expect: { Viewer: 403, Operator: 403, ReleaseManager: 404, Admin: 404 },
      },
      {
        what: "a provider's webhook delivery (public: its signature decides)",
        method: 'POST',
        path: `/api/git/webhooks/${UNKNOWN}`,
        json: {},
        expect: { Viewer: 404, Operator: 404, ReleaseManager: 404, Admin: 404 },
      },
      {
        what: 'what uses a table (datasets:READ, every role here holds it)',
        method: 'GET',
        path: `/api/environments/${UNKNOWN}/impact?table=orders`,
        expect: { Viewer: 404, Operator: 404, ReleaseManager: 404, Admin: 404 },
      },
      // Personal spaces stay with the person signed in.
      {
        what: 'own profile preferences',
        method: 'GET',
        path: '/api/profile/preferences',
        expect: { Viewer: 200, Operator: 200, ReleaseManager: 200, Admin: 200 },
        keyOnly: { Viewer: 403, Operator: 403, ReleaseManager: 403, Admin: 403 },
      },
    ];
    for (const p of probes)
      for (const role of ROLES)
        for (const { via, opts } of both(role)) {
          const r = await call(p.method, p.path.replace('{env}', envId), { ...opts, json: p.json });
          const expected = via === 'key' ? (p.keyOnly?.[role] ?? p.expect[role]) : p.expect[role];
          expect(r.status, `${role} by ${via}: ${p.what}: ${r.text}`).toBe(expected);
        }
  });

  it("shows a browser check's screenshots (the service account's view) to the task's requester and admins only, never to a shared cache", async () => {
    const id = 'migration-pk-screenshots';
    await h.knex('tasks').insert({
      id,
      type: 'migration',
      status: 'SUCCEEDED',
      owner_id: people.Operator.id,
      owner_username: people.Operator.username,
      env_ids: [envId],
      workflow_type: 'migrationWorkflow',
      workflow_input: JSON.stringify({}),
    });
    const shot = await h.boot.context.stores.browserScreenshots.save({
      taskId: id,
      dashboardId: 7,
      side: 'target',
      png: Buffer.from('png'),
    });
    // Every role reads the task (tasks:READ); only the requester (by password or key) and an admin signed in see the picture.
    const see: Record<Role, { password: number; key: number }> = {
      Viewer: { password: 403, key: 403 },
      Operator: { password: 200, key: 200 },
      ReleaseManager: { password: 403, key: 403 },
      Admin: { password: 200, key: 403 },
    };
    for (const role of ROLES)
      for (const { via, opts } of both(role)) {
        expect((await call('GET', `/api/tasks/${id}`, opts)).status, `${role} by ${via}: the task`).toBe(200);
        const r = await call('GET', `/api/tasks/${id}/screenshots/${shot}`, opts);
        expect(r.status, `${role} by ${via}: ${r.text}`).toBe(see[role][via as 'password' | 'key']);
        if (r.status === 200) expect(r.headers.get('cache-control'), `${role} by ${via}`).toMatch(/no-store/);
      }
  });

  it('lets only an administrator repoint a protected environment (its URL, account, password or TLS), by password or key', async () => {
    const [row] = await h
      .knex('environments')
      .insert({ name: 'pk-protected', base_url: 'http://prod.invalid', username: 'svc', password_encrypted: 'v1:x:y:z', protected: true })
      .returning('id');
    const id = row.id as string;
    const before = await h.knex('environments').where({ id }).first();
    // Admins hold admin:settings:WRITE, the permission that decides protection; their keys carry it too.
    const may: Record<Role, number> = { Viewer: 403, Operator: 403, ReleaseManager: 403, Admin: 200 };
    const secret = 'repointed-password-0123456789';
    secrets.add(secret);
    for (const role of ROLES)
      for (const { via, opts } of both(role)) {
        const r = await call('PUT', `/api/environments/${id}`, {
          ...opts,
          json: { base_url: 'http://127.0.0.1:9/elsewhere', password: secret },
        });
        expect(r.status, `${role} by ${via}: ${r.text}`).toBe(may[role]);
        if (role !== 'Admin')
          expect(await h.knex('environments').where({ id }).first(), `${role} by ${via}: nothing changed`).toEqual(before);
        if (role === 'Operator') expect(r.body.code ?? r.body.type, `${role} by ${via}`).toMatch(/protection_admin_only/);
      }
    expect((await h.knex('environments').where({ id }).first()).base_url).toBe('http://127.0.0.1:9/elsewhere');
  });

  it("records what a key starts as its creator's, naming the key in the task's log", async () => {
    for (const role of ROLES) {
      const r = await call('POST', '/api/dashboards/backup', { apiKey: people[role].key, json: { env_id: envId, dashboard_ids: [7] } });
      const mayBackUp = role === 'Operator' || role === 'Admin';
      expect(r.status, `${role}: ${r.text}`).toBe(mayBackUp ? 202 : 403);
      if (!mayBackUp) continue;
      const task = await admin('GET', `/api/tasks/${r.body.task_id}`);
      expect(task.body, role).toMatchObject({ user_id: people[role].id, owner_username: people[role].username });
      const logs = await admin('GET', `/api/tasks/${r.body.task_id}/logs`);
      expect(JSON.stringify(logs.body), role).toContain(`task created by ${people[role].username} (API key '${people[role].username}-ci')`);
    }
  });

  it('refuses a person deciding on their own request with either credential (403 self_approval); without tasks:APPROVE, 403 forbidden', async () => {
    for (const role of ROLES) {
      // A deploy into a protected environment the person requested, waiting for someone else.
      const id = `git_deploy-pk-${role.toLowerCase()}`;
      await h.knex('tasks').insert({
        id,
        type: 'git_deploy',
        status: 'AWAITING_APPROVAL',
        owner_id: people[role].id,
        owner_username: people[role].username,
        env_ids: [envId],
        workflow_type: 'gitDeployWorkflow',
        workflow_input: JSON.stringify({ approval: { required: true, requestedBy: people[role].id, envId, timeoutSeconds: 600 } }),
      });
      for (const { via, opts } of both(role)) {
        const r = await call('POST', `/api/tasks/${id}/approve`, { ...opts, json: {} });
        expect(r.status, `${role} by ${via}: ${r.text}`).toBe(403);
        const canApprove = role === 'ReleaseManager' || role === 'Admin';
        expect(r.body.code, `${role} by ${via}`).toBe(canApprove ? 'self_approval' : 'forbidden');
      }
    }
  });

  it('ends every key once its creator is deactivated, whatever their role', async () => {
    for (const role of ROLES) {
      expect((await call('GET', '/api/tasks', { apiKey: people[role].key })).status).toBe(200);
      const off = await admin('PUT', `/api/admin/users/${people[role].id}`, { json: { active: false } });
      expect(off.status, off.text).toBe(200);
      const r = await call('GET', '/api/tasks', { apiKey: people[role].key });
      expect(r.status, role).toBe(401);
    }
  });
});

describe('security events', () => {
  it('records logins with address and user agent, readable and filterable by admins', async () => {
    await login(ADMIN.username, ADMIN.password, { 'user-agent': 'matrix-test/1.0' });
    const r = await admin('GET', '/api/admin/security-events?event_type=LOGIN&actor=admin&page_size=1');
    expect(r.status).toBe(200);
    expect(r.body.items[0]).toMatchObject({
      event_type: 'LOGIN',
      outcome: 'success',
      actor_username: 'admin',
      user_agent: 'matrix-test/1.0',
    });
    expect(r.body.items[0].ip).toMatch(/127\.0\.0\.1/);
    expect(r.body.has_next).toBe(true);
    const failures = await admin('GET', '/api/admin/security-events?outcome=failure&page_size=100');
    expect(failures.body.items.every((e: any) => e.outcome === 'failure')).toBe(true);
    expect(failures.body.items.some((e: any) => e.event_type === 'LOGIN_FAILED' && e.detail.reason === 'bad_password')).toBe(true);
    expect((await admin('GET', '/api/admin/security-events?event_type=NOPE')).status).toBe(400);
    expect((await admin('GET', '/api/admin/security-events?since=yesterday')).status).toBe(400);
  });
});

describe('secrets never leak', () => {
  it('finds no password, token or API key in responses, logs, security events or task logs', async () => {
    const events = JSON.stringify(await h.knex('security_events'));
    const taskLogs = JSON.stringify(await h.knex('task_logs'));
    const tasks = JSON.stringify(await h.knex('tasks'));
    const haystacks: Record<string, string> = { responses: transcript.join('\n'), logs: capturedLogs.join(''), events, taskLogs, tasks };
    expect(secrets.size).toBeGreaterThan(10);
    expect(transcript.length).toBeGreaterThan(50);
    expect(capturedLogs.length).toBeGreaterThan(50);
    for (const secret of secrets) {
      for (const [where, text] of Object.entries(haystacks)) expect(text.includes(secret), `a secret appears in ${where}`).toBe(false);
    }
  });
});
