// Why the fake: 5xx, timeouts, garbage and HTML answers on demand.
// Dashboards, datasets and accounts through HTTP against the fake Superset: many pages, request
// counts (no per-dashboard calls, one username resolution per request) and every failure answer.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { matchesProfile, mergeByChangedOn } from '../../api/dashboards/profile-filter.ts';
import { createHarness, type Harness } from '../support/harness.ts';
import { createEnvironment, UNKNOWN_ENV } from '../support/environments.ts';
import { startFakeSuperset, type FakeDashboard, type FakeSuperset } from '../support/fake-superset.ts';

let h: Harness;
let fake: FakeSuperset;
let env: string;
let slowEnv: string;
const N = 1000;
let alice: number;
let bob: number;

beforeAll(async () => {
  [h, fake] = await Promise.all([createHarness(), startFakeSuperset({ thumbnails: true })]);
  alice = fake.addUser({ username: 'alice', first_name: 'Alice', last_name: 'Liddell' }).id;
  bob = fake.addUser({ username: 'bob', first_name: 'Bob', last_name: 'Builder' }).id;
  // Alice owns every 7th dashboard and last changed every 11th: her matches span every upstream page.
  for (let i = 0; i < N; i++) {
    fake.addDashboard({
      title: `${i % 2 ? 'Sales' : 'Ops'} board ${String(i).padStart(4, '0')}`,
      slug: `board-${i}`,
      owners: i % 7 === 0 ? [1, alice] : [1, bob],
      changedBy: i % 11 === 0 ? alice : 1,
    });
  }
  const db = fake.addDatabase({ name: 'analytics' });
  const ds = fake.addDataset({ table: 'sales', database: db.id });
  fake.addDataset({ table: 'orders', database: db.id, sql: 'select 1' });
  fake.addChart({ name: 'Sales table', dataset: ds.id, dashboards: [1] });
  env = await createEnvironment(h, { baseUrl: fake.baseUrl, username: fake.username, password: fake.password });
  // The fake never answers a request it is told to time out, so only that one times out; 10 s bounds every other
  // answer (sign-in, CSRF, lists) against a hang, far above any run: no answer races a short deadline.
  slowEnv = await createEnvironment(h, { baseUrl: fake.baseUrl, username: fake.username, password: fake.password, timeoutSeconds: 10 });
});
afterEach(async () => {
  fake.clearFailures();
  await setPreference({ profile_filter_enabled: false, superset_username: null });
});
afterAll(async () => {
  await h?.close();
  await fake?.close();
});

const get = (path: string) => h.request('GET', path, { token: h.adminToken });
const setPreference = async (patch: Record<string, unknown>) => {
  const r = await h.request('PATCH', '/api/profile/preferences', { token: h.adminToken, json: patch });
  expect(r.status, r.text).toBe(200);
};
/** What the spec's rule 2 selects, computed from the fake's own data, newest change first. */
const expectedFor = (userId: number, filter: (d: FakeDashboard) => boolean = () => true) =>
  [...fake.dashboards]
    .filter((d) => (d.owners.includes(userId) || d.changed_by === userId) && filter(d))
    .sort((a, b) => b.changed_on.getTime() - a.changed_on.getTime())
    .map((d) => d.id);

describe('GET /api/dashboards without the profile filter', () => {
  it('pages in Superset with an exact total and one upstream call per page', async () => {
    const mark = fake.mark();
    const r = await get(`/api/dashboards?env_id=${env}&page=3&page_size=100`);
    expect(r.status, r.text).toBe(200);
    expect(r.body).toMatchObject({ total: N, page: 3, page_size: 100, has_next: true, env_id: env });
    expect(r.body.items).toHaveLength(100);
    expect(r.body.effective_profile_filter).toEqual({
      applied: false,
      source_page: 'dashboards_main',
      override_show_all: false,
      username: null,
      match_logic: 'owners_or_modified_by',
      reason: 'disabled',
    });
    const item = r.body.items[0];
    expect(item).toMatchObject({
      url: `${fake.baseUrl}/superset/dashboard/${item.slug}/`,
      thumbnail_url: `/api/dashboards/${item.id}/thumbnail?env_id=${env}`,
    });
    expect(item.changed_on).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(item.owners[0]).toMatchObject({ id: 1, display_name: 'Ada Admin' });
    expect(fake.count('/api/v1/dashboard/', mark)).toBe(1);
    const last = await get(`/api/dashboards?env_id=${env}&page=10&page_size=100`);
    expect(last.body.has_next).toBe(false);
    expect((await get(`/api/dashboards?env_id=${env}&page=11&page_size=100`)).body).toMatchObject({ items: [], total: N, has_next: false });
  });

  it('searches titles and slugs case-insensitively', async () => {
    const r = await get(`/api/dashboards?env_id=${env}&search=SALES%20BOARD%2000&page_size=100`);
    expect(r.body.total).toBe(50); // odd i below 100
    expect(r.body.items.every((d: { title: string }) => d.title.startsWith('Sales board 00'))).toBe(true);
  });

  it('answers 400 for bad pagination and query, 404 for an unknown environment', async () => {
    for (const q of [
      'page=0',
      'page=-1',
      'page=abc',
      'page_size=0',
      'page_size=101',
      'page_size=1.5',
      'page_context=home',
      'override_show_all=maybe',
    ]) {
      const r = await get(`/api/dashboards?env_id=${env}&${q}`);
      expect(r.status, q).toBe(400);
      expect(r.body.code).toBe('validation_failed');
    }
    expect((await get('/api/dashboards')).status).toBe(400);
    for (const id of [UNKNOWN_ENV, 'nope']) {
      const r = await get(`/api/dashboards?env_id=${id}`);
      expect(r.status).toBe(404);
      expect(r.body.code).toBe('not_found');
    }
  });
});

describe('profile-default filter (rules 1-6) over many upstream pages', () => {
  it('rule 1-3: matches owners or last modifier, exact total, one resolution, no per-dashboard calls', async () => {
    await setPreference({ profile_filter_enabled: true, superset_username: '  ALICE ' });
    const expected = expectedFor(alice);
    expect(expected.length).toBeGreaterThan(200); // spans many upstream pages of 100
    const seen: number[] = [];
    const start = fake.mark();
    for (let page = 1; ; page++) {
      const mark = fake.mark();
      const r = await get(`/api/dashboards?env_id=${env}&page=${page}&page_size=40`);
      expect(r.status, r.text).toBe(200);
      expect(r.body.total).toBe(expected.length);
      expect(r.body.effective_profile_filter).toMatchObject({
        applied: true,
        reason: 'applied',
        username: 'ALICE',
        source_page: 'dashboards_main',
      });
      expect(fake.count(/^\/api\/v1\/dashboard\/\d+/, mark)).toBe(0);
      seen.push(...r.body.items.map((d: { id: number }) => d.id));
      if (!r.body.has_next) break;
    }
    expect(seen).toEqual(expected);
    // The username is resolved at most once for all these pages (remembered per environment for a minute).
    expect(fake.count('/api/v1/security/users/', start)).toBeLessThanOrEqual(1);
  });

  it('costs one count-only call and one ordinary page when the user last changed nothing (the common case)', async () => {
    await setPreference({ profile_filter_enabled: true, superset_username: 'bob' });
    const expected = expectedFor(bob);
    await get(`/api/dashboards?env_id=${env}&page=1&page_size=25`); // the username is remembered from here on
    for (const page of [1, 20]) {
      const mark = fake.mark();
      const r = await get(`/api/dashboards?env_id=${env}&page=${page}&page_size=25`);
      expect(r.status, r.text).toBe(200);
      expect(r.body.total).toBe(expected.length);
      expect(r.body.items.map((d: { id: number }) => d.id)).toEqual(expected.slice((page - 1) * 25, page * 25));
      expect(fake.count(/^\/api\/v1\/dashboard\/(\?|$)/, mark)).toBe(2);
      expect(fake.count('/api/v1/security/users/', mark)).toBe(0);
    }
  });

  it('rule 2 with search: still exact, on deep pages too', async () => {
    await setPreference({ profile_filter_enabled: true, superset_username: 'alice' });
    const expected = expectedFor(alice, (d) => d.dashboard_title.startsWith('Sales'));
    const r = await get(`/api/dashboards?env_id=${env}&search=sales&page=3&page_size=50`); // needs 150 rows: the deep path
    expect(r.body.total).toBe(expected.length);
    expect(r.body.items.map((d: { id: number }) => d.id)).toEqual(expected.slice(100, 150));
  });

  it('rule 4: no match gives total 0, an empty page and an applied filter', async () => {
    await setPreference({ profile_filter_enabled: true, superset_username: 'nobody-here' });
    const r = await get(`/api/dashboards?env_id=${env}&page=2&page_size=10`);
    expect(r.body).toMatchObject({ items: [], total: 0, page: 2, page_size: 10, has_next: false });
    expect(r.body.effective_profile_filter).toMatchObject({ applied: true, username: 'nobody-here' });
  });

  it('rule 5: override_show_all=true shows everything and reports applied=false', async () => {
    await setPreference({ profile_filter_enabled: true, superset_username: 'alice' });
    const r = await get(`/api/dashboards?env_id=${env}&override_show_all=true`);
    expect(r.body.total).toBe(N);
    expect(r.body.effective_profile_filter).toMatchObject({ applied: false, override_show_all: true, reason: 'override_show_all' });
  });

  it('rule 6: page_context=other disables it and reports source_page other', async () => {
    await setPreference({ profile_filter_enabled: true, superset_username: 'alice' });
    const r = await get(`/api/dashboards?env_id=${env}&page_context=other`);
    expect(r.body.total).toBe(N);
    expect(r.body.effective_profile_filter).toMatchObject({ applied: false, source_page: 'other', reason: 'page_context_other' });
  });

  it('ambiguous accounts without a security API: scans the owner columns once and matches locally', async () => {
    const other = await startFakeSuperset({ securityApi: false });
    try {
      const c1 = other.addUser({ username: 'carol', first_name: 'Carol', last_name: 'One', email: 'carol@a.example' }).id;
      const c2 = other.addUser({ username: 'carol2', first_name: 'Carol', last_name: 'Two', email: 'carol@b.example' }).id;
      for (let i = 0; i < 250; i++) other.addDashboard({ title: `D${i}`, owners: i % 5 === 0 ? [c1] : i % 5 === 1 ? [c2] : [1] });
      const id = await createEnvironment(h, { baseUrl: other.baseUrl, username: other.username, password: other.password });
      await setPreference({ profile_filter_enabled: true, superset_username: 'carol' });
      const mark = other.mark();
      const r = await get(`/api/dashboards?env_id=${id}&page=2&page_size=25`);
      expect(r.status, r.text).toBe(200);
      expect(r.body.total).toBe(100); // both carol@ accounts: the fallback cannot tell them apart
      expect(r.body.items).toHaveLength(25);
      expect(other.count('/api/v1/dashboard/related/owners', mark)).toBe(1);
      expect(other.count(/^\/api\/v1\/dashboard\/\d+/, mark)).toBe(0);
    } finally {
      await other.close();
    }
  });

  it('rule 2 on plain values: owners as names and modifier names match trimmed and case-insensitively', () => {
    const who = { username: 'alice', ids: new Set([7]), aliases: new Set(['alice liddell']) };
    expect(matchesProfile({ id: 1, owners: ['  Alice  '] }, who)).toBe(true);
    expect(matchesProfile({ id: 1, owners: ['ALICE LIDDELL'] }, who)).toBe(true);
    expect(matchesProfile({ id: 1, owners: [{ id: 7, first_name: 'x' }] }, who)).toBe(true);
    expect(matchesProfile({ id: 1, owners: [{ id: 8, first_name: 'Alice', last_name: 'Liddell' }] }, who)).toBe(false); // ids win over names
    expect(matchesProfile({ id: 1, owners: [{ username: 'ALICE' }] }, who)).toBe(true);
    expect(matchesProfile({ id: 1, owners: [], changed_by: { id: 7 } }, who)).toBe(true);
    expect(matchesProfile({ id: 1, owners: [], changed_by: null, changed_by_name: 'Alice Liddell ' }, who)).toBe(true);
    expect(matchesProfile({ id: 1, owners: ['bob'], changed_by_name: 'Bob' }, who)).toBe(false);
    expect(
      mergeByChangedOn(
        [
          { id: 1, changed_on_utc: '3' },
          { id: 2, changed_on_utc: '1' },
        ],
        [
          { id: 3, changed_on_utc: '2' },
          { id: 1, changed_on_utc: '3' },
        ],
      ).map((r) => r.id),
    ).toEqual([1, 3, 2]);
  });
});

describe('503 when Superset fails', () => {
  const expect503 = async (path: string, reason: string) => {
    const r = await get(path);
    expect(r.status, r.text).toBe(503);
    expect(r.headers.get('content-type')).toContain('application/problem+json');
    expect(r.body).toMatchObject({ status: 503, code: 'upstream_unavailable', title: 'Superset unavailable', service: 'Superset', reason });
    expect(r.body.detail).toMatch(/^The Superset of environment '.+' is unavailable/);
    return r.body;
  };

  it('on a timeout', async () => {
    fake.fail({ path: '/api/v1/dashboard/' }, 'timeout');
    const before = fake.mark();
    await expect503(`/api/dashboards?env_id=${slowEnv}`, 'timeout');
    // Answered after one attempt that timed out, not after retries (counted, not timed against the wall clock).
    expect(fake.count('/api/v1/dashboard/', before)).toBe(1);
  });

  it('on 5xx (after retrying 502s), on a reset and on a login failure', async () => {
    fake.fail({ path: '/api/v1/dashboard/' }, '500');
    const body = await expect503(`/api/dashboards?env_id=${env}`, 'server_error');
    expect(body.upstream_status).toBe(500);
    fake.clearFailures();
    fake.fail({ path: '/api/v1/dashboard/' }, '502');
    const mark = fake.mark();
    await expect503(`/api/dashboards?env_id=${env}`, 'server_error');
    expect(fake.count('/api/v1/dashboard/', mark)).toBe(4); // SUPERSET_RETRY_ATTEMPTS' default
    fake.clearFailures();
    fake.fail({ path: '/api/v1/dashboard/' }, 'reset');
    await expect503(`/api/dashboards?env_id=${env}`, 'network');
    const locked = await createEnvironment(h, { baseUrl: fake.baseUrl, username: fake.username, password: 'wrong' });
    await expect503(`/api/dashboards?env_id=${locked}`, 'auth_failed');
  });

  it('on garbage, HTML and empty bodies', async () => {
    for (const mode of ['garbage', 'html', 'empty'] as const) {
      fake.clearFailures();
      fake.fail({ path: '/api/v1/dashboard/' }, mode);
      await expect503(`/api/dashboards?env_id=${env}`, 'bad_response');
    }
  });

  it('recovers from one transient 503 without the caller noticing', async () => {
    fake.fail({ path: '/api/v1/dashboard/' }, '503', 1);
    expect((await get(`/api/dashboards?env_id=${env}&page_size=1`)).status).toBe(200);
  });

  it('for datasets, detail, thumbnails, mappings and account lookup too', async () => {
    fake.fail({ path: /^\/api\/v1\// }, '500');
    await expect503(`/api/datasets?env_id=${env}`, 'server_error');
    await expect503(`/api/dashboards/1?env_id=${env}`, 'server_error');
    await expect503(`/api/dashboards/1/thumbnail?env_id=${env}`, 'server_error');
    await expect503(`/api/dashboards/db-mappings?source_env_id=${env}&target_env_id=${env}`, 'server_error');
    await expect503(`/api/profile/upstream-accounts?environment_id=${env}&search=a`, 'server_error');
    fake.clearFailures();
    fake.fail({ path: '/api/v1/dataset/' }, 'timeout');
    await expect503(`/api/datasets?env_id=${slowEnv}`, 'timeout');
  });
});

describe('detail and thumbnails', () => {
  it('returns a dashboard with its charts and datasets; 404 for an unknown one', async () => {
    const r = await get(`/api/dashboards/1?env_id=${env}`);
    expect(r.status, r.text).toBe(200);
    expect(r.body).toMatchObject({ id: 1, title: fake.dashboards[0].dashboard_title, json_metadata: { color_scheme: 'supersetColors' } });
    expect(r.body.charts).toEqual([expect.objectContaining({ name: 'Sales table', viz_type: 'table', dataset_id: 1 })]);
    expect(r.body.datasets).toEqual([
      expect.objectContaining({
        id: 1,
        table_name: 'sales',
        kind: 'physical',
        database: { id: 1, name: 'analytics', backend: 'postgresql' },
      }),
    ]);
    const missing = await get(`/api/dashboards/99999?env_id=${env}`);
    expect(missing.status).toBe(404);
    expect(missing.body.code).toBe('not_found');
    expect((await get(`/api/dashboards/abc?env_id=${env}`)).status).toBe(400);
    expect((await get(`/api/dashboards/1?env_id=${UNKNOWN_ENV}`)).status).toBe(404);
  });

  it('proxies the image, answers 202 while computing, 404 for an unknown dashboard, off when Superset has thumbnails off', async () => {
    const computing = await get(`/api/dashboards/2/thumbnail?env_id=${env}`);
    expect(computing.status).toBe(202);
    expect(computing.headers.get('retry-after')).toBe('5');
    expect(computing.body).toMatchObject({ status: 'computing', retry_after_seconds: 5 });
    fake.dashboards[1].thumbnail = 'ready';
    const res = await fetch(`${h.baseUrl}/api/dashboards/2/thumbnail?env_id=${env}`, {
      headers: { authorization: `Bearer ${h.adminToken}` },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/png');
    expect(
      Buffer.from(await res.arrayBuffer())
        .subarray(0, 8)
        .toString('hex'),
    ).toBe('89504e470d0a1a0a');
    const unknown = await get(`/api/dashboards/99999/thumbnail?env_id=${env}`);
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe('not_found');
    // Thumbnails switched off in Superset (its default): every thumbnail answers 404 there, and the
    // probed capabilities say the flag is off, so the console gets a typed "off" to show a
    // placeholder for, not an error (404 thumbnail_unavailable stays for a render that failed).
    fake.options.thumbnails = false;
    try {
      const off = await get(`/api/dashboards/2/thumbnail?env_id=${env}`);
      expect(off.status).toBe(200);
      expect(off.body).toMatchObject({ status: 'off' });
    } finally {
      fake.options.thumbnails = true;
    }
  });
});

describe('GET /api/datasets', () => {
  it('pages, searches and validates like the dashboard list', async () => {
    const r = await get(`/api/datasets?env_id=${env}&page_size=1`);
    expect(r.status, r.text).toBe(200);
    expect(r.body).toMatchObject({ total: 2, page: 1, page_size: 1, has_next: true });
    expect(r.body.items[0]).toMatchObject({ table_name: 'orders', kind: 'virtual', database: { id: 1, name: 'analytics' } });
    expect((await get(`/api/datasets?env_id=${env}&search=SAL`)).body.items.map((d: { table_name: string }) => d.table_name)).toEqual([
      'sales',
    ]);
    for (const q of ['page=0', 'page_size=101', 'page_size=0']) expect((await get(`/api/datasets?env_id=${env}&${q}`)).status, q).toBe(400);
    expect((await get(`/api/datasets?env_id=${UNKNOWN_ENV}`)).status).toBe(404);
  });
});
