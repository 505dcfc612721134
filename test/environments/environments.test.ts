// Why the fake: (part) 5xx, timeouts, garbage and HTML answers on demand.
// Environments through HTTP: CRUD, encryption at rest, 404/409/400/403, and the environment test
// against a real Superset (instance a) and the fake one for the failure answers.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { capturedLogs, createHarness, type Harness } from '../support/harness.ts';
import { createEnvironment, createUserWithRoles, superset, supersets, UNKNOWN_ENV, uniquePrefix } from '../support/environments.ts';
import { startFakeSuperset, type FakeSuperset } from '../support/fake-superset.ts';

let h: Harness;
let fake: FakeSuperset;
const SECRET_PASSWORD = 'env-secret-password-7f3a91';

beforeAll(async () => {
  [h, fake] = await Promise.all([createHarness(), startFakeSuperset({ permissions: ['can_read'] })]);
});
afterAll(async () => {
  await h?.close();
  await fake?.close();
});

const admin = (method: string, path: string, json?: unknown) =>
  h.request(method, path, { token: h.adminToken, ...(json === undefined ? {} : { json }) });

describe('environment CRUD', () => {
  it('creates, lists, reads, changes and deletes an environment; the password is write-only', async () => {
    const name = uniquePrefix('crud-');
    const created = await admin('POST', '/api/environments', {
      name,
      base_url: `${fake.baseUrl}/`,
      username: 'admin',
      password: SECRET_PASSWORD,
      description: 'the fake',
    });
    expect(created.status, created.text).toBe(201);
    expect(created.headers.get('location')).toBe(`/api/environments/${created.body.id}`);
    expect(created.body).toMatchObject({
      name,
      base_url: fake.baseUrl,
      username: 'admin',
      has_password: true,
      verify_tls: true,
      timeout_seconds: 30,
      description: 'the fake',
    });
    expect(created.body).not.toHaveProperty('password');
    const id = created.body.id as string;

    const list = await admin('GET', '/api/environments?page=1&page_size=100');
    expect(list.status).toBe(200);
    expect(list.body.items.map((e: { id: string }) => e.id)).toContain(id);
    expect(list.body).toMatchObject({ page: 1, page_size: 100, has_next: false });

    const changed = await admin('PUT', `/api/environments/${id}`, { description: null, timeout_seconds: 5 });
    expect(changed.status, changed.text).toBe(200);
    expect(changed.body).toMatchObject({ name, description: null, timeout_seconds: 5 });

    // Password kept when omitted: the stored one still decrypts to what was given.
    const row = await h.knex('environments').where({ id }).first();
    expect(row.password_encrypted).not.toContain(SECRET_PASSWORD);
    expect(h.boot.context.stores.environments.connection(row).connection.password).toBe(SECRET_PASSWORD);

    const got = await admin('GET', `/api/environments/${id}`);
    expect(got.body.timeout_seconds).toBe(5);
    expect(JSON.stringify([created.body, list.body, changed.body, got.body])).not.toContain(SECRET_PASSWORD);

    expect((await admin('DELETE', `/api/environments/${id}`)).status).toBe(204);
    expect((await admin('GET', `/api/environments/${id}`)).status).toBe(404);
    expect(capturedLogs.join('\n')).not.toContain(SECRET_PASSWORD);
  });

  it('answers 409 on a duplicate name, case-insensitively, on create and on rename', async () => {
    const name = uniquePrefix('Dup-');
    await createEnvironment(h, { name, baseUrl: fake.baseUrl, username: 'a', password: 'b' });
    const again = await admin('POST', '/api/environments', {
      name: name.toUpperCase(),
      base_url: fake.baseUrl,
      username: 'a',
      password: 'b',
    });
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ code: 'conflict', status: 409 });
    const other = await createEnvironment(h, { baseUrl: fake.baseUrl, username: 'a', password: 'b' });
    expect((await admin('PUT', `/api/environments/${other}`, { name })).status).toBe(409);
  });

  it('answers 404 for an unknown or malformed env_id on every environment route', async () => {
    for (const id of [UNKNOWN_ENV, 'not-a-uuid']) {
      for (const [m, p, body] of [
        ['GET', `/api/environments/${id}`],
        ['PUT', `/api/environments/${id}`, { description: 'x' }],
        ['DELETE', `/api/environments/${id}`],
        ['POST', `/api/environments/${id}/test`],
      ] as Array<[string, string, unknown?]>) {
        const r = await admin(m, p, body);
        expect(r.status, `${m} ${p}`).toBe(404);
        expect(r.body.code).toBe('not_found');
      }
    }
  });

  it('rejects bad bodies with 400 and field messages', async () => {
    const cases: unknown[] = [
      { name: 'x', base_url: 'ftp://host', username: 'a', password: 'b' },
      { name: 'x', base_url: 'https://user:pw@host', username: 'a', password: 'b' },
      { name: 'x', base_url: 'https://host/?next=evil', username: 'a', password: 'b' },
      { name: 'x', base_url: 'https://host', username: 'a' },
      { name: '', base_url: 'https://host', username: 'a', password: 'b' },
      { name: 'x', base_url: 'https://host', username: 'a', password: 'b', timeout_seconds: 0 },
      { name: 'x', base_url: 'https://host', username: 'a', password: 'b', extra: 1 },
    ];
    for (const body of cases) {
      const r = await admin('POST', '/api/environments', body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.code).toBe('validation_failed');
      expect(r.body.errors.length).toBeGreaterThan(0);
    }
  });

  it('needs environments:READ to read and environments:WRITE to change', async () => {
    const viewer = await createUserWithRoles(h, uniquePrefix('viewer'), ['Viewer']);
    const id = await createEnvironment(h, { baseUrl: fake.baseUrl, username: 'a', password: 'b' });
    expect((await h.request('GET', '/api/environments', { token: viewer.token })).status).toBe(200);
    expect((await h.request('GET', `/api/environments/${id}`, { token: viewer.token })).status).toBe(200);
    const denied = await h.request('POST', '/api/environments', {
      token: viewer.token,
      json: { name: 'v', base_url: 'https://h', username: 'a', password: 'b' },
    });
    expect(denied.status).toBe(403);
    expect((await h.request('DELETE', `/api/environments/${id}`, { token: viewer.token })).status).toBe(403);
    expect((await h.request('POST', `/api/environments/${id}/test`, { token: viewer.token })).status).toBe(403);
    expect((await h.request('GET', '/api/environments')).status).toBe(401);
  });

  it('documents the routes in OpenAPI', async () => {
    const doc = (await h.request('GET', '/api/openapi.json')).body;
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining([
        '/api/environments',
        '/api/environments/{env_id}',
        '/api/environments/{env_id}/test',
        '/api/environments/{env_id}/db-mappings/{target_env_id}',
      ]),
    );
    const create = doc.paths['/api/environments'].post;
    expect(create.requestBody.content['application/json'].schema.required).toEqual(
      expect.arrayContaining(['name', 'base_url', 'username', 'password']),
    );
    expect(create.responses['409']).toBeDefined();
  });
});

describe('environment test', () => {
  it.skipIf(!supersets())('reports reachability, login, version and no missing permission for a real Superset 6.1.0', async () => {
    const a = superset('a');
    const id = await createEnvironment(h, { baseUrl: a.baseUrl, username: a.username, password: a.password });
    const r = await admin('POST', `/api/environments/${id}/test`);
    expect(r.status, r.text).toBe(200);
    expect(r.body).toMatchObject({
      env_id: id,
      ok: true,
      reachable: true,
      login: true,
      version: '6.1.0',
      missing_permissions: [],
      error: null,
    });
    expect(r.body.checked_permissions).toContain('can_export on Dashboard');
    // What 6.1.0 can do, as it answers the probes: uuid lookups by list filter, database uuids in dataset rows.
    expect(r.body.capabilities).toMatchObject({
      version: '6.1.0',
      lists: { dashboard: { uuid_column: true }, chart: { uuid_column: true }, dataset: { uuid_column: true } },
      dataset_database_uuid: true,
      security_api: true,
    });
    expect(r.body.capabilities.lists.dataset.filters).toEqual(expect.arrayContaining(['id', 'uuid', 'table_name', 'database']));
  });

  it.skipIf(!supersets())('reports a refused login on a real Superset', async () => {
    const a = superset('a');
    const id = await createEnvironment(h, { baseUrl: a.baseUrl, username: a.username, password: 'definitely-wrong' });
    const r = await admin('POST', `/api/environments/${id}/test`);
    expect(r.body).toMatchObject({ ok: false, reachable: true, login: false, version: '6.1.0', error: { code: 'upstream_auth_failed' } });
  });

  it('lists the permissions the service account lacks', async () => {
    const id = await createEnvironment(h, { baseUrl: fake.baseUrl, username: fake.username, password: fake.password });
    const r = await admin('POST', `/api/environments/${id}/test`);
    expect(r.body).toMatchObject({ ok: false, reachable: true, login: true, version: '6.1.0' });
    expect(r.body.missing_permissions).toEqual(['can_write on Dashboard', 'can_export on Dashboard']);
  });

  it('reports an unreachable Superset', async () => {
    const closed = await startFakeSuperset();
    const url = closed.baseUrl;
    await closed.close();
    const id = await createEnvironment(h, { baseUrl: url, username: 'a', password: 'b', timeoutSeconds: 2 });
    const r = await admin('POST', `/api/environments/${id}/test`);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ ok: false, reachable: false, login: false, version: null, error: { code: 'upstream_unavailable' } });
    expect(r.body.error.detail).toContain('connection refused');
  });
});
