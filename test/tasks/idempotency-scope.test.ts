// An Idempotency-Key is the sender's own: another user or another API key reusing it gets a task
// of their own, never the first sender's (before, every API key shared one space of keys).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../support/harness.ts';
import { createUserWithRoles } from '../support/environments.ts';
import type { RequestOptions } from '../support/http.ts';

let h: Harness;
let envId: string;
const people: Array<{ token: string; apiKey: string }> = [];
beforeAll(async () => {
  h = await createHarness();
  const [row] = await h
    .knex('environments')
    .insert({ name: 'prod', base_url: 'http://prod.invalid', username: 'svc', password_encrypted: 'v1:x:y:z' })
    .returning('id');
  envId = row.id as string;
  const role = await h.request('POST', '/api/admin/roles', {
    token: h.adminToken,
    json: { name: 'Backupper', permissions: ['admin:settings:WRITE', 'dashboards:BACKUP'] },
  });
  expect(role.status, role.text).toBe(201);
  for (const name of ['alice', 'bob']) {
    const { token } = await createUserWithRoles(h, name, ['Backupper']);
    const key = await h.request('POST', '/api/admin/api-keys', {
      token,
      json: { name: `${name}-bot`, permissions: ['dashboards:BACKUP'] },
    });
    expect(key.status, key.text).toBe(201);
    people.push({ token, apiKey: key.body.key as string });
  }
});
afterAll(async () => h?.close());

const backup = (who: Pick<RequestOptions, 'token' | 'apiKey'>, key: string) =>
  h.request('POST', '/api/dashboards/backup', { ...who, json: { env_id: envId, dashboard_ids: [7] }, headers: { 'idempotency-key': key } });

describe('Idempotency-Key per sender', () => {
  it('gives a second user reusing a key a task of their own', async () => {
    const [alice, bob] = people;
    const a = await backup({ token: alice.token }, 'nightly');
    const b = await backup({ token: bob.token }, 'nightly');
    expect([a.status, b.status]).toEqual([202, 202]);
    expect(b.body.task_id).not.toBe(a.body.task_id);
    const again = await backup({ token: alice.token }, 'nightly');
    expect(again.status).toBe(200);
    expect(again.body.task_id).toBe(a.body.task_id);
  });

  it("gives another API key reusing a key a task of its own, and never the other key's task id", async () => {
    const [alice, bob] = people;
    const a = await backup({ apiKey: alice.apiKey }, 'ci-run-1');
    const b = await backup({ apiKey: bob.apiKey }, 'ci-run-1');
    expect(a.status, a.text).toBe(202);
    expect(b.status, b.text).toBe(202);
    expect(b.body.task_id).not.toBe(a.body.task_id);
    const again = await backup({ apiKey: bob.apiKey }, 'ci-run-1');
    expect(again.status).toBe(200);
    expect(again.body.task_id).toBe(b.body.task_id);
  });

  it('makes one task of a parallel burst from one API key', async () => {
    const [alice] = people;
    const burst = await Promise.all(Array.from({ length: 6 }, () => backup({ apiKey: alice.apiKey }, 'burst-1')));
    expect(burst.map((r) => r.status).sort()).toEqual([200, 200, 200, 200, 200, 202]);
    expect(new Set(burst.map((r) => r.body.task_id)).size).toBe(1);
    expect(await h.knex('tasks').where({ idempotency_key: 'burst-1' })).toHaveLength(1);
  });
});
