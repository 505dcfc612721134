// Why the fake: 5xx, timeouts, garbage and HTML answers on demand.
// Profile preferences through HTTP: defaults, partial PATCH, 422 field messages, 403 for someone
// else's, and the upstream-account lookup's 404/400 (its results are tested against a real
// Superset in test/dashboards/dashboards-superset.test.ts, its 503 in dashboards-fake).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../support/harness.ts';
import { createEnvironment, createUserWithRoles, UNKNOWN_ENV, uniquePrefix } from '../support/environments.ts';
import { startFakeSuperset, type FakeSuperset } from '../support/fake-superset.ts';

let h: Harness;
let fake: FakeSuperset;
let user: { id: string; token: string };
let other: { id: string; token: string };

beforeAll(async () => {
  [h, fake] = await Promise.all([createHarness(), startFakeSuperset({ securityApi: false })]);
  user = await createUserWithRoles(h, uniquePrefix('prof'), ['Viewer']);
  other = await createUserWithRoles(h, uniquePrefix('other'), ['Viewer']);
  fake.addUser({ username: 'dora', first_name: 'Dora', last_name: 'Explorer' });
});
afterAll(async () => {
  await h?.close();
  await fake?.close();
});

const patch = (json: unknown, token = user.token, query = '') => h.request('PATCH', `/api/profile/preferences${query}`, { token, json });

describe('profile preferences', () => {
  it('starts from defaults and changes only the fields sent', async () => {
    const first = await h.request('GET', '/api/profile/preferences', { token: user.token });
    expect(first.status).toBe(200);
    expect(first.body).toEqual({
      user_id: user.id,
      profile_filter_enabled: false,
      superset_username: null,
      git_username: null,
      git_email: null,
      created_at: null,
      updated_at: null,
    });
    const a = await patch({ superset_username: '  dora ', git_email: 'dora@example.com' });
    expect(a.status, a.text).toBe(200);
    expect(a.body).toMatchObject({
      user_id: user.id,
      superset_username: 'dora',
      git_email: 'dora@example.com',
      git_username: null,
      profile_filter_enabled: false,
    });
    expect(a.body.created_at).toMatch(/Z$/);
    const b = await patch({ profile_filter_enabled: true, git_username: 'Dora E.' });
    expect(b.body).toMatchObject({
      superset_username: 'dora',
      git_email: 'dora@example.com',
      git_username: 'Dora E.',
      profile_filter_enabled: true,
    });
    expect(b.body.created_at).toBe(a.body.created_at);
    expect(Date.parse(b.body.updated_at)).toBeGreaterThanOrEqual(Date.parse(a.body.updated_at));
    const again = await h.request('GET', '/api/profile/preferences', { token: user.token });
    expect(again.body).toEqual(b.body);
    // Someone else's preferences are untouched.
    expect((await h.request('GET', '/api/profile/preferences', { token: other.token })).body.superset_username).toBeNull();
    // Own id is fine; empty strings unset.
    const c = await patch({ user_id: user.id, git_username: '', profile_filter_enabled: false });
    expect(c.status).toBe(200);
    expect(c.body.git_username).toBeNull();
  });

  it('answers 422 with a message per invalid field', async () => {
    const cases: Array<[unknown, string]> = [
      [{ git_email: 'not-an-email' }, 'body.git_email'],
      [{ profile_filter_enabled: 'yes' }, 'body.profile_filter_enabled'],
      [{ superset_username: 'x'.repeat(65) }, 'body.superset_username'],
      [{ superset_username: 'bad\u0007name' }, 'body.superset_username'],
      [{ git_username: 42 }, 'body.git_username'],
      [{ theme: 'dark' }, 'body'],
    ];
    for (const [body, field] of cases) {
      const r = await patch(body);
      expect(r.status, JSON.stringify(body)).toBe(422);
      expect(r.body.code).toBe('validation_failed');
      expect(r.body.errors.map((e: { field: string }) => e.field)).toContain(field);
    }
  });

  it('answers 422 when the filter is switched on without a bound username', async () => {
    await patch({ superset_username: null, profile_filter_enabled: false });
    const r = await patch({ profile_filter_enabled: true });
    expect(r.status).toBe(422);
    expect(r.body.errors).toEqual([{ field: 'body.superset_username', message: expect.stringContaining('required') }]);
    expect((await patch({ profile_filter_enabled: true, superset_username: 'dora' })).status).toBe(200);
    const unbind = await patch({ superset_username: null });
    expect(unbind.status).toBe(422);
  });

  it("answers 403 when reading or editing someone else's preference", async () => {
    const viaBody = await patch({ user_id: other.id, git_username: 'hijack' });
    expect(viaBody.status).toBe(403);
    expect(viaBody.body.code).toBe('forbidden');
    expect((await patch({ git_username: 'hijack' }, user.token, `?user_id=${other.id}`)).status).toBe(403);
    expect((await h.request('GET', `/api/profile/preferences?user_id=${other.id}`, { token: user.token })).status).toBe(403);
    // Admins too: preferences are personal.
    expect((await patch({ user_id: other.id, git_username: 'x' }, h.adminToken)).status).toBe(403);
    expect((await h.request('GET', '/api/profile/preferences', { token: other.token })).body.git_username).toBeNull();
    expect((await h.request('GET', '/api/profile/preferences')).status).toBe(401);
  });
});

describe('upstream account lookup', () => {
  it('normalises accounts; without a security API the username stays null', async () => {
    const env = await createEnvironment(h, { baseUrl: fake.baseUrl, username: fake.username, password: fake.password });
    const r = await h.request('GET', `/api/profile/upstream-accounts?environment_id=${env}&search=explor`, { token: user.token });
    expect(r.status, r.text).toBe(200);
    expect(r.body).toEqual({
      environment_id: env,
      search: 'explor',
      items: [
        {
          id: 2,
          username: null,
          display_name: 'Dora Explorer',
          first_name: null,
          last_name: null,
          email: 'dora@example.com',
          active: true,
        },
      ],
    });
  });

  it("needs environments:READ: another environment's users and e-mails are not every signed-in caller's business", async () => {
    const env = await createEnvironment(h, { baseUrl: fake.baseUrl, username: fake.username, password: fake.password });
    const nobody = await createUserWithRoles(h, uniquePrefix('norole'), []);
    const r = await h.request('GET', `/api/profile/upstream-accounts?environment_id=${env}&search=explor`, { token: nobody.token });
    expect(r.status).toBe(403);
    expect(r.body.code).toBe('forbidden');
    expect(r.text).not.toContain('dora@example.com');
    expect((await h.request('GET', '/api/profile/preferences', { token: nobody.token })).status).toBe(200);
  });

  it('answers 404 for an unknown environment and 400 without one', async () => {
    for (const id of [UNKNOWN_ENV, 'nope']) {
      const r = await h.request('GET', `/api/profile/upstream-accounts?environment_id=${id}`, { token: user.token });
      expect(r.status).toBe(404);
    }
    expect((await h.request('GET', '/api/profile/upstream-accounts', { token: user.token })).status).toBe(400);
  });
});
