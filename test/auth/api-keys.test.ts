// API keys cannot escalate: a key carries only permissions its creator holds; keys expire when
// told to and name their creator.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../support/harness.ts';
import { createUserWithRoles } from '../support/environments.ts';
import type { RequestOptions } from '../support/http.ts';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => h?.close());

const call = (method: string, path: string, opts: RequestOptions = {}) => h.request(method, path, opts);
const admin = (method: string, path: string, opts: RequestOptions = {}) => call(method, path, { ...opts, token: h.adminToken });

describe('creating a key never grants more than the creator holds', () => {
  it('refuses a key holding admin:settings:WRITE minting a key with permissions it lacks (403 naming them)', async () => {
    const ops = await admin('POST', '/api/admin/api-keys', {
      json: { name: 'ops-bot', permissions: ['admin:settings:WRITE', 'tasks:READ'] },
    });
    expect(ops.status, ops.text).toBe(201);
    const escalate = await call('POST', '/api/admin/api-keys', {
      apiKey: ops.body.key,
      json: { name: 'escalated', permissions: ['environments:WRITE', 'tasks:READ', 'dashboards:MIGRATE'] },
    });
    expect(escalate.status, escalate.text).toBe(403);
    expect(escalate.body.code).toBe('forbidden');
    expect(escalate.body.missing_permissions).toEqual(['dashboards:MIGRATE', 'environments:WRITE']);
    expect(escalate.body.detail).toContain('environments:WRITE');
    expect(await h.knex('api_keys').where({ name: 'escalated' })).toHaveLength(0);

    // Within its own permissions it may, and the new key names the key that created it.
    const child = await call('POST', '/api/admin/api-keys', { apiKey: ops.body.key, json: { name: 'child', permissions: ['tasks:READ'] } });
    expect(child.status, child.text).toBe(201);
    expect(child.body.created_by).toEqual({ kind: 'api_key', id: ops.body.id, username: 'api-key:ops-bot' });
  });

  it('lets a user holding admin:settings:WRITE through a role mint only what the role grants; Admin may mint anything', async () => {
    const role = await admin('POST', '/api/admin/roles', {
      json: { name: 'KeyKeeper', permissions: ['admin:settings:WRITE', 'datasets:READ'] },
    });
    expect(role.status, role.text).toBe(201);
    const keeper = await createUserWithRoles(h, 'keeper', ['KeyKeeper']);
    const denied = await call('POST', '/api/admin/api-keys', {
      token: keeper.token,
      json: { name: 'k1', permissions: ['datasets:WRITE'] },
    });
    expect(denied.status).toBe(403);
    expect(denied.body.missing_permissions).toEqual(['datasets:WRITE']);
    const ok = await call('POST', '/api/admin/api-keys', { token: keeper.token, json: { name: 'k2', permissions: ['datasets:READ'] } });
    expect(ok.status, ok.text).toBe(201);
    expect(ok.body.created_by).toEqual({ kind: 'user', id: keeper.id, username: 'keeper' });
    const any = await admin('POST', '/api/admin/api-keys', { json: { name: 'k3', permissions: ['clean_release:APPROVE', 'git:WRITE'] } });
    expect(any.status).toBe(201);
    expect(any.body.created_by).toMatchObject({ kind: 'user', username: 'admin' });
    const list = await admin('GET', '/api/admin/api-keys');
    expect(list.body.items.find((k: any) => k.name === 'k2').created_by).toEqual({ kind: 'user', id: keeper.id, username: 'keeper' });
  });
});

describe('expiry', () => {
  it('accepts a future expires_at, refuses a past one (400), and refuses an expired key like a revoked one', async () => {
    const past = await admin('POST', '/api/admin/api-keys', {
      json: { name: 'old', permissions: ['tasks:READ'], expires_at: '2020-01-01T00:00:00Z' },
    });
    expect(past.status).toBe(400);
    expect(past.body.errors).toEqual([{ field: 'body.expires_at', message: 'expires_at must be in the future' }]);
    expect(
      (await admin('POST', '/api/admin/api-keys', { json: { name: 'bad', permissions: ['tasks:READ'], expires_at: 'tomorrow' } })).status,
    ).toBe(400);

    const expiresAt = new Date(Date.now() + 60_000).toISOString();
    const c = await admin('POST', '/api/admin/api-keys', { json: { name: 'short', permissions: ['tasks:READ'], expires_at: expiresAt } });
    expect(c.status, c.text).toBe(201);
    expect(c.body).toMatchObject({ expires_at: expiresAt, expired: false, active: true });
    expect((await call('GET', '/api/tasks', { apiKey: c.body.key })).status).toBe(200);

    // Time passes (the row is moved to the past instead of waiting a minute).
    await h
      .knex('api_keys')
      .where({ id: c.body.id })
      .update({ expires_at: new Date(Date.now() - 1000) });
    const refused = await call('GET', '/api/tasks', { apiKey: c.body.key });
    expect(refused.status).toBe(401);
    expect(refused.body.code).toBe('unauthenticated');
    const listed = (await admin('GET', '/api/admin/api-keys')).body.items.find((k: any) => k.id === c.body.id);
    expect(listed).toMatchObject({ expired: true, active: true });
  });
});

/** A user holding `roles` plus the right to mint keys, and a key they mint with `permissions`. */
async function personWithKey(username: string, roles: string[], permissions: string[]) {
  const person = await createUserWithRoles(h, username, [...roles, 'KeyMinter']);
  const key = await call('POST', '/api/admin/api-keys', { token: person.token, json: { name: `${username}-key`, permissions } });
  expect(key.status, key.text).toBe(201);
  return { ...person, key: key.body.key as string, keyId: key.body.id as string };
}
const setRoles = async (userId: string, roles: string[]) =>
  expect((await admin('PUT', `/api/admin/users/${userId}`, { json: { roles } })).status).toBe(200);

describe('a key acts for its creator', () => {
  beforeAll(async () => {
    const r = await admin('POST', '/api/admin/roles', { json: { name: 'KeyMinter', permissions: ['admin:settings:WRITE'] } });
    expect(r.status, r.text).toBe(201);
  });

  it("carries, at every request, only those of its permissions its creator holds now (an Admin's key: all it holds)", async () => {
    const p = await personWithKey('kira', ['Viewer'], ['admin:settings:WRITE', 'tasks:READ']);
    expect((await call('GET', '/api/admin/api-keys', { apiKey: p.key })).status).toBe(200);

    // The creator loses admin:settings:WRITE: so does the key, at its next request.
    await setRoles(p.id, ['Viewer']);
    const refused = await call('GET', '/api/admin/api-keys', { apiKey: p.key });
    expect(refused.status).toBe(403);
    expect((await call('GET', '/api/tasks', { apiKey: p.key })).status).toBe(200);
    // And gets it back with the role.
    await setRoles(p.id, ['Viewer', 'KeyMinter']);
    expect((await call('GET', '/api/admin/api-keys', { apiKey: p.key })).status).toBe(200);

    const adminKey = await admin('POST', '/api/admin/api-keys', {
      json: { name: 'admin-bot', permissions: ['environments:WRITE', 'tasks:READ'] },
    });
    expect((await call('GET', '/api/environments', { apiKey: adminKey.body.key })).status).toBe(403); // only what it holds
    expect((await call('GET', '/api/admin/users', { apiKey: adminKey.body.key })).status).toBe(403);
    expect((await call('GET', '/api/tasks', { apiKey: adminKey.body.key })).status).toBe(200);
  });

  it('answers /api/auth/me as the person it acts for, naming the key, with its permissions as they are now', async () => {
    const p = await personWithKey('kim', ['Viewer'], ['admin:settings:WRITE', 'tasks:READ']);
    const me = await call('GET', '/api/auth/me', { apiKey: p.key });
    expect(me.body).toMatchObject({ id: p.keyId, username: 'kim', display_name: "API key 'kim-key'", auth_method: 'api_key' });
    expect(me.body.permissions).toEqual(['admin:settings:WRITE', 'tasks:READ']);
    await setRoles(p.id, ['Viewer']);
    expect((await call('GET', '/api/auth/me', { apiKey: p.key })).body.permissions).toEqual(['tasks:READ']);
    const adminKey = await admin('POST', '/api/admin/api-keys', {
      json: { name: 'admin-bot-2', permissions: ['environments:WRITE', 'tasks:READ'] },
    });
    const adminMe = await call('GET', '/api/auth/me', { apiKey: adminKey.body.key });
    expect(adminMe.body).toMatchObject({ username: 'admin', permissions: ['environments:WRITE', 'tasks:READ'] });
  });

  it('stops authenticating at once when its creator is deactivated, and again when they are deleted (no FK trouble)', async () => {
    const p = await personWithKey('dora', ['Operator'], ['admin:settings:WRITE', 'tasks:READ']);
    // A key made by her key acts for her too, and ends with her.
    const child = await call('POST', '/api/admin/api-keys', { apiKey: p.key, json: { name: 'dora-child', permissions: ['tasks:READ'] } });
    expect(child.status, child.text).toBe(201);
    expect((await call('GET', '/api/tasks', { apiKey: child.body.key })).status).toBe(200);

    expect((await admin('PUT', `/api/admin/users/${p.id}`, { json: { active: false } })).status).toBe(200);
    for (const key of [p.key, child.body.key]) {
      const r = await call('GET', '/api/tasks', { apiKey: key });
      expect(r.status).toBe(401);
      expect(r.body.detail).toContain('deactivated or deleted');
    }
    expect((await admin('PUT', `/api/admin/users/${p.id}`, { json: { active: true } })).status).toBe(200);
    expect((await call('GET', '/api/tasks', { apiKey: p.key })).status).toBe(200);

    const del = await admin('DELETE', `/api/admin/users/${p.id}`);
    expect(del.status, del.text).toBe(200);
    for (const key of [p.key, child.body.key]) expect((await call('GET', '/api/tasks', { apiKey: key })).status).toBe(401);
    // The rows stay for audit, naming who made them.
    const listed = (await admin('GET', '/api/admin/api-keys')).body.items.find((k: any) => k.id === p.keyId);
    expect(listed.created_by).toEqual({ kind: 'user', id: null, username: 'dora' });
  });

  it('stops a key made by a key once the key that made it is revoked', async () => {
    const parent = await admin('POST', '/api/admin/api-keys', {
      json: { name: 'parent', permissions: ['admin:settings:WRITE', 'tasks:READ'] },
    });
    const child = await call('POST', '/api/admin/api-keys', {
      apiKey: parent.body.key,
      json: { name: 'child-of-parent', permissions: ['tasks:READ'] },
    });
    expect(child.status, child.text).toBe(201);
    expect((await call('GET', '/api/tasks', { apiKey: child.body.key })).status).toBe(200);
    expect((await admin('DELETE', `/api/admin/api-keys/${parent.body.id}`)).status).toBe(200);
    expect((await call('GET', '/api/tasks', { apiKey: child.body.key })).status).toBe(401);
  });

  it('names the person in security events, with the key used beside', async () => {
    const p = await personWithKey('evan', ['Viewer'], ['admin:settings:WRITE', 'tasks:READ']);
    const made = await call('POST', '/api/admin/api-keys', { apiKey: p.key, json: { name: 'evan-made', permissions: ['tasks:READ'] } });
    expect(made.status, made.text).toBe(201);
    const [event] = await h.knex('security_events').where({ event_type: 'API_KEY_CREATED' }).whereRaw("detail->>'name' = 'evan-made'");
    expect(event).toMatchObject({ actor_id: p.id, actor_username: 'evan' });
    expect(event.detail.via_key).toEqual({ id: p.keyId, name: 'evan-key' });
  });

  it("does not reach its creator's own things: profile preferences, assistant conversations, dataset review sessions", async () => {
    const p = await personWithKey('fay', ['Operator'], ['assistant:USE', 'dataset_review:READ', 'tasks:READ']);
    expect((await call('GET', '/api/profile/preferences', { token: p.token })).status).toBe(200);
    expect((await call('GET', '/api/profile/preferences', { apiKey: p.key })).status).toBe(403);
    expect((await call('GET', '/api/assistant/conversations', { apiKey: p.key })).status).toBe(403);
    const sessions = await call('GET', '/api/dataset-review/sessions', { apiKey: p.key });
    expect(sessions.status, sessions.text).toBe(200);
    expect(sessions.body.total).toBe(0);
  });
});
