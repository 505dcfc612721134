// A public endpoint reads no credentials: an ended session token, a malformed Authorization
// header or a bad X-API-Key sent along to /api/health, /api/ready or the OIDC login start is
// ignored (a load balancer's probe or a browser with a stale token is not answered 401), while
// every other endpoint still refuses them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../support/harness.ts';
import { createUserWithRoles } from '../support/environments.ts';
import type { RequestOptions } from '../support/http.ts';

let h: Harness;
let ended: string;
beforeAll(async () => {
  h = await createHarness();
  const { token } = await createUserWithRoles(h, 'leaver', ['Viewer']);
  expect((await h.request('POST', '/api/auth/logout', { token })).status).toBeLessThan(300);
  ended = token;
});
afterAll(async () => h?.close());

const stale: Array<[string, RequestOptions]> = [
  ['an ended session token', {}],
  ['a bad X-API-Key', { apiKey: 'sk_not-a-key' }],
  ['a malformed Authorization header', { headers: { authorization: 'Basic Zm9vOmJhcg==' } }],
];

describe('public endpoints with stale credentials', () => {
  it.each(stale)('ignore %s', async (_what, opts) => {
    const o = { ...opts, ...(Object.keys(opts).length ? {} : { token: ended }) };
    const health = await h.request('GET', '/api/health', o);
    expect(health.status, health.text).toBe(200);
    expect(health.body).toEqual({ status: 'ok' });
    const ready = await h.request('GET', '/api/ready', o);
    // Answered as it is without credentials: no worker polls this file's task queue, so not ready, from its checks.
    expect(ready.status, ready.text).toBe(503);
    expect(ready.body).toMatchObject({
      status: 'not_ready',
      checks: { database: { ok: true }, worker: { ok: false, detail: expect.stringMatching(/^no worker polls task queue /) } },
    });
    // OIDC is off here: the start answers its own 404, not 401.
    const oidc = await h.request('GET', '/api/auth/oidc/login', o);
    expect(oidc.status, oidc.text).toBe(404);
    expect(oidc.body.code).toBe('oidc_not_configured');
    expect((await h.request('GET', '/api/openapi.json', o)).status).toBe(200);
  });

  it.each(stale)('still refuse %s on an endpoint that needs a caller', async (_what, opts) => {
    const o = { ...opts, ...(Object.keys(opts).length ? {} : { token: ended }) };
    const me = await h.request('GET', '/api/auth/me', o);
    expect(me.status).toBe(401);
    expect(me.body.code).toBe('unauthenticated');
  });
});
