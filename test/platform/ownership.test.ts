// Why the fake: incidental: no Superset answer is asserted; the fake is only a registered environment.
// Ownership in one place per domain (api/assistant/policy.ts, api/dataset-review/policy.ts), over
// HTTP: the owner reaches their rows; another person, an administrator too, does not, and an API
// key does not reach its creator's. Each case fails when the service bypasses its policy (checked
// by making the policy allow everyone).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedReviewSession } from '../assistant/support.ts';
import { createEnvironment, createUserWithRoles } from '../support/environments.ts';
import { startFakeSuperset, type FakeSuperset } from '../support/fake-superset.ts';
import { createHarness, type Harness } from '../support/harness.ts';

let h: Harness;
let fake: FakeSuperset;
let owner: { id: string; token: string };
let other: { id: string; token: string };
let adminKey: string;

beforeAll(async () => {
  [h, fake] = await Promise.all([createHarness(), startFakeSuperset()]);
  fake.addDashboard({ title: 'Ops board', slug: 'ops-board' });
  await createEnvironment(h, { name: 'dev', baseUrl: fake.baseUrl, username: fake.username, password: fake.password });
  owner = await createUserWithRoles(h, 'own-owner', ['Operator']);
  other = await createUserWithRoles(h, 'own-other', ['Operator']);
  const key = await h.request('POST', '/api/admin/api-keys', {
    token: h.adminToken,
    json: { name: 'own-admin-key', permissions: ['assistant:USE', 'dataset_review:READ', 'dataset_review:WRITE'] },
  });
  expect(key.status, key.text).toBe(201);
  adminKey = key.body.key;
}, 120_000);
afterAll(async () => {
  await h?.close();
  await fake?.close();
});

describe('assistant conversations and confirmations', () => {
  const say = (token: string, text: string, extra: Record<string, unknown> = {}) =>
    h.request('POST', '/api/assistant/messages', { token, json: { text, ...extra } });
  const messages = (token: string, id: string) => h.request('GET', `/api/assistant/conversations/${id}/messages`, { token });
  const listed = async (token: string) =>
    ((await h.request('GET', '/api/assistant/conversations?page_size=100', { token })).body.items as any[]).map((c) => c.conversation_id);

  it("keeps a conversation to its owner: another person and an admin get 404, the owner's list alone shows it", async () => {
    const mine = await say(owner.token, 'покажи дашборды в dev');
    expect(mine.status, mine.text).toBe(200);
    const id = mine.body.conversation_id as string;
    expect((await messages(owner.token, id)).status).toBe(200);
    expect(await listed(owner.token)).toContain(id);
    for (const token of [other.token, h.adminToken]) {
      expect((await messages(token, id)).status).toBe(404);
      expect((await say(token, 'help', { conversation_id: id })).status).toBe(404);
      expect((await h.request('DELETE', `/api/assistant/conversations/${id}`, { token })).status).toBe(404);
      expect(await listed(token)).not.toContain(id);
    }
    expect((await messages(owner.token, id)).body.total).toBe(2);
  });

  it('lets only the person who asked decide a confirmation: another person and an admin get 403', async () => {
    const r = await say(owner.token, 'сделай бэкап дашборда Ops в dev');
    expect(r.body.state, r.text).toBe('awaiting_confirmation');
    const c = r.body.confirmation.id as string;
    for (const token of [other.token, h.adminToken]) {
      expect((await h.request('POST', `/api/assistant/confirmations/${c}/confirm`, { token })).status).toBe(403);
      expect((await h.request('POST', `/api/assistant/confirmations/${c}/cancel`, { token })).status).toBe(403);
    }
    const cancelled = await h.request('POST', `/api/assistant/confirmations/${c}/cancel`, { token: owner.token });
    expect(cancelled.status, cancelled.text).toBe(200);
    expect(cancelled.body.status).toBe('cancelled');
  });

  it("refuses an API key (403), even on its creator's conversation", async () => {
    const mine = await say(h.adminToken, 'покажи дашборды в dev');
    const id = mine.body.conversation_id as string;
    expect((await h.request('GET', `/api/assistant/conversations/${id}/messages`, { apiKey: adminKey })).status).toBe(403);
    expect((await h.request('GET', '/api/assistant/conversations', { apiKey: adminKey })).status).toBe(403);
    expect((await h.request('GET', '/api/assistant/audit', { apiKey: adminKey })).status).toBe(403);
  });
});

describe('dataset review sessions', () => {
  const BASE = '/api/dataset-review/sessions';
  const as = (token: string) => (method: string, path: string, json?: unknown) => h.request(method, path, { token, json });
  const listed = async (call: ReturnType<typeof as>) => ((await call('GET', `${BASE}?page_size=100`)).body.items as any[]).map((s) => s.id);

  it('keeps a session to its owner: another person and an admin find no such session, to read, change, delete or bind', async () => {
    const id = await seedReviewSession(h.knex, owner.id, 'own-owner');
    const mine = as(owner.token);
    const version = (await mine('GET', `${BASE}/${id}`)).body.version as number;
    expect(await listed(mine)).toContain(id);
    for (const token of [other.token, h.adminToken]) {
      const call = as(token);
      for (const [method, path, body] of [
        ['GET', `${BASE}/${id}`, undefined],
        ['PATCH', `${BASE}/${id}`, { version, title: 'taken' }],
        ['GET', `${BASE}/${id}/clarification`, undefined],
        ['GET', `${BASE}/${id}/exports/validation`, undefined],
        ['DELETE', `${BASE}/${id}?version=${version}`, undefined],
      ] as const) {
        const r = await call(method, path, body);
        expect(r.status, `${method} ${path}: ${r.text}`).toBe(404);
      }
      expect(await listed(call)).not.toContain(id);
      const bound = await h.request('POST', '/api/assistant/messages', {
        token,
        json: { text: 'что осталось?', dataset_review_session_id: id },
      });
      expect(bound.status, bound.text).toBe(404);
    }
    const renamed = await mine('PATCH', `${BASE}/${id}`, { version, title: 'mine' });
    expect(renamed.status, renamed.text).toBe(200);
    expect(renamed.body.title).toBe('mine');
    expect((await mine('DELETE', `${BASE}/${id}?version=${renamed.body.version}`)).status).toBe(204);
  });

  it("gives an API key none of its creator's sessions", async () => {
    const id = await seedReviewSession(h.knex, (await h.request('GET', '/api/auth/me', { token: h.adminToken })).body.id, 'admin');
    expect((await h.request('GET', `${BASE}/${id}`, { token: h.adminToken })).status).toBe(200);
    expect((await h.request('GET', `${BASE}/${id}`, { apiKey: adminKey })).status).toBe(404);
    const keyList = await h.request('GET', BASE, { apiKey: adminKey });
    expect(keyList.status, keyList.text).toBe(200);
    expect(keyList.body.items).toEqual([]);
  });
});
