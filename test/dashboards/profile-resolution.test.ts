// Why the fake: FAB_ADD_SECURITY_API off, a configuration the real instances do not run.
// The profile filter's rule 2 at the edges of resolving the bound username, against the fake
// Superset: a username that resolves to no account still matches plain-value owners, and one that
// resolves to several accounts (possible only without the security API, through `related/owners`)
// is reported as ambiguous with its candidates instead of being matched silently.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../support/harness.ts';
import { createEnvironment } from '../support/environments.ts';
import { startFakeSuperset, type FakeSuperset } from '../support/fake-superset.ts';

let h: Harness;
let exact: FakeSuperset; // the security API readable
let related: FakeSuperset; // no security API: related/owners only
let exactEnv: string;
let relatedEnv: string;
let plainOwned: number;
let daves: number[];
let daveBoards: number[];

beforeAll(async () => {
  [h, exact, related] = await Promise.all([createHarness(), startFakeSuperset(), startFakeSuperset({ securityApi: false })]);
  const erin = exact.addUser({ username: 'erin', first_name: 'Erin', last_name: 'Example' }).id;
  exact.addDashboard({ title: 'Owned by an account', owners: [erin] });
  plainOwned = exact.addDashboard({ title: 'Owned by a plain value', owners: [1], plainOwners: ['  Carol '] }).id;
  exact.addDashboard({ title: 'Owned by someone else', owners: [1], plainOwners: ['caroline'] });

  daves = [
    related.addUser({ username: 'dave.k', first_name: 'Dave', last_name: 'King', email: 'dave@example.com' }).id,
    related.addUser({ username: 'd.queen', first_name: 'Dave', last_name: 'Queen', email: 'dave@other.example.org' }).id,
  ];
  daveBoards = [
    related.addDashboard({ title: 'King board', owners: [daves[0]] }).id,
    related.addDashboard({ title: 'Queen board', owners: [daves[1]] }).id,
  ];
  related.addDashboard({ title: 'Nobody of theirs', owners: [1] });

  exactEnv = await createEnvironment(h, { baseUrl: exact.baseUrl, username: exact.username, password: exact.password });
  relatedEnv = await createEnvironment(h, { baseUrl: related.baseUrl, username: related.username, password: related.password });
});
afterAll(async () => {
  await h?.close();
  await Promise.all([exact?.close(), related?.close()]);
});

const bind = async (username: string) => {
  const r = await h.request('PATCH', '/api/profile/preferences', {
    token: h.adminToken,
    json: { profile_filter_enabled: true, superset_username: username },
  });
  expect(r.status, r.text).toBe(200);
};
const list = (env: string) => h.request('GET', `/api/dashboards?env_id=${env}&page_size=100`, { token: h.adminToken });

describe('profile filter rule 2: resolving the bound username', () => {
  it('compares plain-value owners when the username resolves to no account', async () => {
    await bind('carol');
    const r = await list(exactEnv);
    expect(r.status, r.text).toBe(200);
    expect(r.body.items.map((d: any) => d.id)).toEqual([plainOwned]);
    expect(r.body.total).toBe(1);
    expect(r.body.effective_profile_filter).toMatchObject({
      applied: true,
      reason: 'applied',
      resolution: { status: 'unresolved', via: 'security_api', candidates: [] },
    });
  });

  it('names the candidates when two accounts match one username through the related-owners fallback', async () => {
    await bind('dave');
    const r = await list(relatedEnv);
    expect(r.status, r.text).toBe(200);
    expect(r.body.effective_profile_filter).toMatchObject({ applied: true, reason: 'applied' });
    expect(r.body.effective_profile_filter.resolution).toEqual({
      status: 'ambiguous',
      via: 'related_owners',
      candidates: [
        { id: daves[0], display_name: 'Dave King', email: 'dave@example.com' },
        { id: daves[1], display_name: 'Dave Queen', email: 'dave@other.example.org' },
      ],
    });
    expect(r.body.items.map((d: any) => d.id).sort()).toEqual([...daveBoards].sort());
  });

  it('reports a single account as resolved', async () => {
    await bind('erin');
    const r = await list(exactEnv);
    expect(r.body.total).toBe(1);
    expect(r.body.effective_profile_filter.resolution).toMatchObject({
      status: 'resolved',
      via: 'security_api',
      candidates: [{ display_name: 'Erin Example' }],
    });
  });
});
