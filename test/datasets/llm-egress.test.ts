// Where the server may connect (ALLOWED_UPSTREAM_HOSTS), for LLM providers: a base_url the policy
// refuses is a 400 and nothing is stored; a stored one it no longer allows is not contacted (the
// test reports `refused`, the provider sees nothing); an allowed one is reached through the
// policy's own connections.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeLlm, type FakeLlm } from '../support/fake-llm.ts';
import { createHarness, type Harness } from '../support/harness.ts';

let h: Harness;
let llm: FakeLlm;
let port: string;
beforeAll(async () => {
  llm = await startFakeLlm();
  port = new URL(llm.baseUrl).port;
  h = await createHarness({ env: { ALLOWED_UPSTREAM_HOSTS: 'localhost, llm.example.com' } });
});
afterAll(async () => {
  await h?.close();
  await llm?.close();
});

const admin = (method: string, path: string, json?: unknown) => h.request(method, path, { token: h.adminToken, json });

describe('LLM providers under ALLOWED_UPSTREAM_HOSTS', () => {
  it('refuses a base_url outside the policy on create and change (400 host_not_allowed), storing nothing', async () => {
    const r = await admin('POST', '/api/admin/llm-providers', { name: 'local', base_url: llm.baseUrl, model: 'm', api_key: 'k' });
    expect(r.status, r.text).toBe(400);
    expect(r.body.code).toBe('host_not_allowed');
    expect(await h.knex('llm_providers')).toHaveLength(0);

    const ok = await admin('POST', '/api/admin/llm-providers', {
      name: 'named',
      base_url: 'https://llm.example.com/v1',
      model: 'm',
      api_key: 'k',
    });
    expect(ok.status, ok.text).toBe(201);
    const moved = await admin('PUT', `/api/admin/llm-providers/${ok.body.id}`, { base_url: llm.baseUrl, api_key: 'k2' });
    expect(moved.status).toBe(400);
    expect(moved.body.code).toBe('host_not_allowed');
    expect((await h.knex('llm_providers').where({ id: ok.body.id }).first()).base_url).toBe('https://llm.example.com/v1');
  });

  it('reaches an allowed provider through the policy, and does not contact a stored one it no longer allows', async () => {
    const allowed = await admin('POST', '/api/admin/llm-providers', {
      name: 'by-name',
      base_url: `http://localhost:${port}/v1`,
      model: 'docs-model-2026',
      api_key: 'k',
    });
    expect(allowed.status, allowed.text).toBe(201);
    const reached = await admin('POST', `/api/admin/llm-providers/${allowed.body.id}/test`);
    expect(reached.body, reached.text).toMatchObject({ ok: true, error: null });
    const seen = llm.requests.length;
    expect(seen).toBeGreaterThan(0);

    // Stored before the policy: straight through the store, past the route's check.
    const row = await h.boot.context.stores.llmProviders.create({
      name: 'stored',
      base_url: llm.baseUrl,
      model: 'm',
      api_key: 'stored-key-123',
    });
    const refused = await admin('POST', `/api/admin/llm-providers/${row.id}/test`);
    expect(refused.status).toBe(200);
    expect(refused.body).toMatchObject({ ok: false, error: { kind: 'refused', status: null } });
    expect(refused.body.error.message).toContain('127.0.0.1 is not allowed by ALLOWED_UPSTREAM_HOSTS');
    expect(llm.requests.length).toBe(seen);
  });
});
