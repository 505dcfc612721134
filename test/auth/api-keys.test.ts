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
