// Why the fake: destinations that must be refused before any call is made.
// A stored password goes only where it was given for: moving base_url (scheme, host, port, path)
// or switching TLS verification off without sending the password again is refused, and a
// listener an Operator points the environment at never receives the service account.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { destinationChanged, destinationKey } from '../../lib/secret-destination.ts';
import { createHarness, type Harness } from '../support/harness.ts';
import type { RequestOptions } from '../support/http.ts';
import { createUserWithRoles, uniquePrefix } from '../support/environments.ts';
import { startFakeSuperset, type FakeSuperset } from '../support/fake-superset.ts';

const PASSWORD = 'svc-account-password-91c2e7';

let h: Harness;
let fake: FakeSuperset;
let listener: http.Server;
let listenerUrl: string;
const received: string[] = [];

beforeAll(async () => {
  [h, fake] = await Promise.all([createHarness(), startFakeSuperset({ username: 'svc', password: PASSWORD })]);
  listener = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      received.push(`${req.method} ${req.url} ${JSON.stringify(req.headers)} ${body}`);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"access_token":"x","refresh_token":"y"}');
    });
  });
  await new Promise<void>((r) => listener.listen(0, '127.0.0.1', r));
  listenerUrl = `http://127.0.0.1:${(listener.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await h?.close();
  await fake?.close();
  await new Promise((r) => listener?.close(r));
});

const asUser =
  (token: string) =>
  (method: string, path: string, opts: RequestOptions = {}) =>
    h.request(method, path, { ...opts, token });

describe('the destination rule', () => {
  it('compares scheme, host, port and path prefix, not spelling', () => {
    expect(destinationKey('HTTP://Example.com:80/superset/')).toBe('http://example.com:80/superset');
    expect(destinationChanged({ url: 'https://bi.example.com' }, { url: 'https://BI.example.com:443/' })).toBe(false);
    for (const url of ['http://bi.example.com', 'https://bi.example.com:8443', 'https://evil.example.com', 'https://bi.example.com/other'])
      expect(destinationChanged({ url: 'https://bi.example.com' }, { url }), url).toBe(true);
    expect(destinationChanged({ url: 'https://a', verifyTls: true }, { verifyTls: false })).toBe(true);
    expect(destinationChanged({ url: 'https://a', verifyTls: false }, { verifyTls: true })).toBe(false);
    expect(destinationChanged({ url: 'https://a' }, {})).toBe(false);
  });
});

describe('PUT /api/environments/{id} with a new destination', () => {
  it('refuses an Operator pointing the stored password at a listener, saves nothing, and the test call never reaches it', async () => {
    const operator = await createUserWithRoles(h, uniquePrefix('op'), ['Operator']);
    const as = asUser(operator.token);
    const created = await as('POST', '/api/environments', {
      json: { name: uniquePrefix('prod-'), base_url: fake.baseUrl, username: 'svc', password: PASSWORD },
    });
    expect(created.status, created.text).toBe(201);
    const id = created.body.id as string;
    const before = await h.knex('environments').where({ id }).first();

    for (const body of [
      { base_url: listenerUrl },
      { base_url: `${fake.baseUrl}/elsewhere` },
      { base_url: fake.baseUrl.replace('127.0.0.1', 'localhost') },
      { base_url: listenerUrl, name: 'renamed', username: 'other' },
      { verify_tls: false },
    ]) {
      const r = await as('PUT', `/api/environments/${id}`, { json: body });
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body).toMatchObject({ code: 'secret_required', status: 400 });
      expect(r.body.errors).toEqual([{ field: 'body.password', message: expect.stringContaining('base_url') }]);
    }
    const after = await h.knex('environments').where({ id }).first();
    expect(after).toEqual(before);

    const test = await as('POST', `/api/environments/${id}/test`);
    expect(test.status).toBe(200);
    expect(test.body).toMatchObject({ reachable: true, login: true });
    expect(received).toEqual([]);

    // Same destination, spelled differently, and fields that do not move the password: allowed.
    const same = await as('PUT', `/api/environments/${id}`, {
      json: { base_url: `${fake.baseUrl}/`, description: 'ok', timeout_seconds: 7 },
    });
    expect(same.status, same.text).toBe(200);
    // With the password sent again the move is the caller's own choice.
    const moved = await as('PUT', `/api/environments/${id}`, { json: { base_url: listenerUrl, password: 'the-listener-own-password' } });
    expect(moved.status, moved.text).toBe(200);
    expect(moved.body.base_url).toBe(listenerUrl);
    await as('POST', `/api/environments/${id}/test`);
    expect(received.join('\n')).not.toContain(PASSWORD);
  });

  it('writes create, update (fields, old and new base_url), refused update, test and delete as security events without the password', async () => {
    const username = uniquePrefix('audit');
    const operator = await createUserWithRoles(h, username, ['Operator']);
    const as = asUser(operator.token);
    const created = await as('POST', '/api/environments', {
      json: { name: uniquePrefix('audit-'), base_url: fake.baseUrl, username: 'svc', password: PASSWORD },
    });
    const id = created.body.id as string;
    expect((await as('PUT', `/api/environments/${id}`, { json: { base_url: listenerUrl } })).status).toBe(400);
    expect((await as('PUT', `/api/environments/${id}`, { json: { base_url: `${fake.baseUrl}/sub`, password: PASSWORD } })).status).toBe(
      200,
    );
    expect((await as('POST', `/api/environments/${id}/test`)).status).toBe(200);
    expect((await as('DELETE', `/api/environments/${id}`)).status).toBe(204);

    const events = await h
      .knex('security_events')
      .where({ actor_username: username })
      .whereLike('event_type', 'ENVIRONMENT_%')
      .orderBy('id');
    expect(events.map((e) => [e.event_type, e.outcome])).toEqual([
      ['ENVIRONMENT_CREATED', 'success'],
      ['ENVIRONMENT_UPDATED', 'failure'],
      ['ENVIRONMENT_UPDATED', 'success'],
      ['ENVIRONMENT_TESTED', 'failure'],
      ['ENVIRONMENT_DELETED', 'success'],
    ]);
    expect(events[0]).toMatchObject({ actor_id: operator.id, detail: { env_id: id, base_url: fake.baseUrl } });
    expect(events[1].detail).toMatchObject({ env_id: id, reason: 'secret_required', base_url_requested: listenerUrl });
    expect(events[2].detail).toMatchObject({
      env_id: id,
      changed: expect.arrayContaining(['base_url', 'password']),
      base_url: { from: fake.baseUrl, to: `${fake.baseUrl}/sub` },
    });
    expect(JSON.stringify(events)).not.toContain(PASSWORD);
    const api = await h.request('GET', '/api/admin/security-events?event_type=ENVIRONMENT_UPDATED', { token: h.adminToken });
    expect(api.status).toBe(200);
    expect(api.body.total).toBeGreaterThanOrEqual(2);
  });
});
