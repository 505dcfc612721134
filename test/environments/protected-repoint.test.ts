// Where a protected environment's service account goes (base_url, username, password, TLS
// verification) is an administrator's call, like the protected flag itself: an Operator's change
// is refused (403, audited as a failure), saves nothing, and an Admin's is accepted, under the same
// secret_required rule as any other environment.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../support/harness.ts';
import { createUserWithRoles, uniquePrefix } from '../support/environments.ts';

const PASSWORD = 'svc-protected-password-5d1f';
let h: Harness;
let operator: { id: string; token: string };
let operatorName: string;

beforeAll(async () => {
  h = await createHarness();
  operatorName = uniquePrefix('rp-op');
  operator = await createUserWithRoles(h, operatorName, ['Operator']);
}, 120_000);
afterAll(async () => h?.close());

const admin = (method: string, path: string, json?: unknown) => h.request(method, path, { token: h.adminToken, json });
const asOperator = (method: string, path: string, json?: unknown) => h.request(method, path, { token: operator.token, json });

async function environment(protectedFlag: boolean): Promise<string> {
  const r = await admin('POST', '/api/environments', {
    name: uniquePrefix('rp-'),
    base_url: 'https://prod.example.invalid',
    username: 'svc',
    password: PASSWORD,
    protected: protectedFlag,
  });
  expect(r.status, r.text).toBe(201);
  return r.body.id as string;
}

const REPOINTS = [
  { base_url: 'https://attacker.example.invalid', password: 'theirs-123' },
  { base_url: 'https://prod.example.invalid/other', password: 'theirs-123' },
  { username: 'someone-else' },
  { password: 'theirs-123' },
  { verify_tls: false, password: PASSWORD },
];

describe('PUT /api/environments/{id} on a protected environment', () => {
  it("refuses an Operator's change of where its credentials go, saves nothing and audits the refusal", async () => {
    const id = await environment(true);
    const row = await h.knex('environments').where({ id }).first();
    for (const body of REPOINTS) {
      const r = await asOperator('PUT', `/api/environments/${id}`, body);
      expect(r.status, `${JSON.stringify(body)}: ${r.text}`).toBe(403);
      expect(r.body).toMatchObject({ status: 403, code: 'protection_admin_only' });
      expect(r.body.detail).toContain('admin:settings:WRITE');
      expect(r.text).not.toContain('theirs-123');
    }
    expect(await h.knex('environments').where({ id }).first()).toEqual(row);
    const events = await h
      .knex('security_events')
      .where({ actor_username: operatorName, event_type: 'ENVIRONMENT_UPDATED' })
      .whereRaw("detail->>'env_id' = ?", [id])
      .orderBy('id');
    expect(events).toHaveLength(REPOINTS.length);
    for (const e of events) expect(e).toMatchObject({ outcome: 'failure', detail: { env_id: id, reason: 'protection_admin_only' } });
    expect(events[0].detail).toMatchObject({ base_url_requested: 'https://attacker.example.invalid' });
    expect(JSON.stringify(events)).not.toContain('theirs-123');
  });

  it('lets an Operator change the rest of a protected environment, and anything of an unprotected one', async () => {
    const prot = await environment(true);
    const edited = await asOperator('PUT', `/api/environments/${prot}`, { description: 'prod', timeout_seconds: 12 });
    expect(edited.status, edited.text).toBe(200);
    expect(edited.body).toMatchObject({ description: 'prod', timeout_seconds: 12, protected: true });
    const open = await environment(false);
    const moved = await asOperator('PUT', `/api/environments/${open}`, { base_url: 'https://dev.example.invalid', password: 'new-pw-1' });
    expect(moved.status, moved.text).toBe(200);
  });

  it("accepts an Admin's change, and the secret_required rule still holds for the Admin", async () => {
    const id = await environment(true);
    const bare = await admin('PUT', `/api/environments/${id}`, { base_url: 'https://prod2.example.invalid' });
    expect(bare.status, bare.text).toBe(400);
    expect(bare.body.code).toBe('secret_required');
    const moved = await admin('PUT', `/api/environments/${id}`, {
      base_url: 'https://prod2.example.invalid',
      username: 'svc2',
      password: 'new-pw-2',
    });
    expect(moved.status, moved.text).toBe(200);
    expect(moved.body).toMatchObject({ base_url: 'https://prod2.example.invalid', username: 'svc2', protected: true });
    const row = await h.knex('environments').where({ id }).first();
    expect(h.boot.context.stores.environments.connection(row).connection.password).toBe('new-pw-2');
  });
});
