// Listing, profile filter rules, detail, thumbnails, datasets and account lookup through HTTP
// against the real Superset 6.1.0 (instance a). Every object carries this file's prefix, and every
// listing is scoped by searching for it, so other test files may share the instance.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../support/harness.ts';
import { createEnvironment, superset, supersets, UNKNOWN_ENV, uniquePrefix } from '../support/environments.ts';
import {
  buildStandardFixtures,
  bulkCreateDashboards,
  createDashboard,
  listAll,
  login,
  updateDashboard,
  type DashboardListItem,
  type StandardFixtures,
  type SupersetClient,
} from '../support/superset/fixtures.ts';

const run = !!supersets();
let h: Harness;
let env: string;
let sc: SupersetClient;
let fx: StandardFixtures;
let tag: string; // searchable prefix of every title of this file
let slugP: string;
let aliceId: number;
let bobId: number;
let modifiedOnlyId: number;
let oracle: DashboardListItem[]; // Superset's own full listing of this file's dashboards, newest change first

beforeAll(async () => {
  if (!run) return;
  const a = superset('a');
  tag = uniquePrefix('Dsh');
  const p = `${tag} `;
  slugP = `${tag.toLowerCase()}-`;
  [h, sc] = await Promise.all([createHarness(), login(a.baseUrl, a.username, a.password)]);
  fx = await buildStandardFixtures(sc, { dataDir: a.dataDir, prefix: p, adminUsername: a.username });
  [aliceId, bobId] = fx.users.map((u) => u.id);
  // 230 more: every third owned by bob, created concurrently so bob's interleave with the others.
  await Promise.all([
    bulkCreateDashboards(sc, { count: 80, prefix: `${p}Bob`, slugPrefix: `${slugP}bob`, owners: [fx.admin.id, bobId], concurrency: 2 }),
    bulkCreateDashboards(sc, { count: 150, prefix: `${p}Other`, slugPrefix: `${slugP}other`, owners: [fx.admin.id], concurrency: 3 }),
  ]);
  // Owned by the admin only, last changed by alice: matches alice through modified_by alone.
  const modifiedOnly = await createDashboard(sc, { title: `${p}Touched by alice`, owners: [fx.admin.id] });
  modifiedOnlyId = modifiedOnly.id;
  const asAlice = await login(a.baseUrl, fx.users[0].username, fx.users[0].password);
  await updateDashboard(asAlice, modifiedOnlyId, { css: '/* alice */' });
  oracle = await listAll<DashboardListItem>(sc, 'dashboard', {
    filters: [{ col: 'dashboard_title', opr: 'title_or_slug', value: tag }],
    orderColumn: 'changed_on',
    orderDirection: 'desc',
  });
  env = await createEnvironment(h, { baseUrl: a.baseUrl, username: a.username, password: a.password });
}, 300_000);
afterAll(async () => h?.close());

const get = (path: string) => h.request('GET', path, { token: h.adminToken });
const setPreference = async (patch: Record<string, unknown>) => {
  const r = await h.request('PATCH', '/api/profile/preferences', { token: h.adminToken, json: patch });
  expect(r.status, r.text).toBe(200);
};
const ids = (items: Array<{ id: number }>) => items.map((d) => d.id);
const matching = (userId: number) =>
  oracle.filter((d) => d.owners?.some((o) => o.id === userId) || d.changed_by?.id === userId).map((d) => d.id);

async function collect(query: string, pageSize: number) {
  const all: number[] = [];
  let total = -1;
  for (let page = 1; page < 50; page++) {
    const r = await get(`/api/dashboards?env_id=${env}&search=${encodeURIComponent(tag)}&page=${page}&page_size=${pageSize}${query}`);
    expect(r.status, r.text).toBe(200);
    if (total >= 0) expect(r.body.total).toBe(total);
    total = r.body.total;
    all.push(...ids(r.body.items));
    expect(r.body.has_next).toBe(page * pageSize < total);
    if (!r.body.has_next) return { all, total, last: r.body };
  }
  throw new Error('too many pages');
}

describe.skipIf(!run)('dashboards of a real Superset 6.1.0', () => {
  it('searches and pages through dashboards spanning several upstream pages, exactly', async () => {
    expect(oracle).toHaveLength(234);
    const { all, total } = await collect('', 100);
    expect(total).toBe(234);
    expect(all).toEqual(ids(oracle));
    const one = await get(`/api/dashboards?env_id=${env}&search=${encodeURIComponent(`${tag} sales OVERVIEW`)}`);
    expect(one.body.total).toBe(1);
    expect(one.body.items[0]).toMatchObject({
      id: fx.dashboards[0].id,
      title: `${tag} Sales overview`,
      slug: `${slugP}sales-overview`,
      url: `${superset('a').baseUrl}/superset/dashboard/${slugP}sales-overview/`,
      published: true,
      changed_by: { id: aliceId, display_name: 'Alice Liddell' },
    });
    expect(ids(one.body.items[0].owners).sort()).toEqual([fx.admin.id, aliceId].sort());
  });

  it('rule 1-2: bound to bob (trimmed, any case), lists what bob owns or last changed, over several pages', async () => {
    await setPreference({ profile_filter_enabled: true, superset_username: `  ${slugP.toUpperCase()}BOB ` });
    const expected = matching(bobId);
    expect(expected.length).toBe(81); // 80 bulk + Customers
    const { all, total, last } = await collect('', 30); // page 3 needs 90 rows of each list, page 4 120: the deep path
    expect(total).toBe(81);
    expect(all).toEqual(expected);
    expect(last.effective_profile_filter).toMatchObject({ applied: true, source_page: 'dashboards_main', reason: 'applied' });
  });

  it('rule 2: modified_by alone is enough (alice)', async () => {
    await setPreference({ profile_filter_enabled: true, superset_username: `${slugP}alice` });
    const r = await get(`/api/dashboards?env_id=${env}&search=${encodeURIComponent(tag)}`);
    expect(r.body.total).toBe(2);
    expect(ids(r.body.items).sort()).toEqual([fx.dashboards[0].id, modifiedOnlyId].sort());
    expect(ids(r.body.items)).toEqual(matching(aliceId));
  });

  it('rule 1: toggle off or no bound username: not applied', async () => {
    await setPreference({ profile_filter_enabled: false, superset_username: `${slugP}alice` });
    let r = await get(`/api/dashboards?env_id=${env}&search=${encodeURIComponent(tag)}&page_size=1`);
    expect(r.body.total).toBe(234);
    expect(r.body.effective_profile_filter).toMatchObject({ applied: false, reason: 'disabled', username: `${slugP}alice` });
    await setPreference({ superset_username: null });
    r = await get(`/api/dashboards?env_id=${env}&search=${encodeURIComponent(tag)}&page_size=1`);
    expect(r.body.effective_profile_filter).toMatchObject({ applied: false, username: null });
  });

  it('rule 4: a username with no dashboards gives total 0 and deterministic paging', async () => {
    await setPreference({ profile_filter_enabled: true, superset_username: `${slugP}nobody` });
    for (const page of [1, 3]) {
      const r = await get(`/api/dashboards?env_id=${env}&search=${encodeURIComponent(tag)}&page=${page}&page_size=10`);
      expect(r.body).toMatchObject({ items: [], total: 0, page, page_size: 10, has_next: false });
      expect(r.body.effective_profile_filter.applied).toBe(true);
    }
  });

  it('rule 5 and 6: override_show_all and page_context=other show everything', async () => {
    await setPreference({ profile_filter_enabled: true, superset_username: `${slugP}bob` });
    const override = await get(`/api/dashboards?env_id=${env}&search=${encodeURIComponent(tag)}&override_show_all=true&page_size=5`);
    expect(override.body.total).toBe(234);
    expect(override.body.effective_profile_filter).toMatchObject({ applied: false, override_show_all: true });
    const other = await get(`/api/dashboards?env_id=${env}&search=${encodeURIComponent(tag)}&page_context=other&page_size=5`);
    expect(other.body.total).toBe(234);
    expect(other.body.effective_profile_filter).toMatchObject({ applied: false, source_page: 'other' });
    await setPreference({ profile_filter_enabled: false });
  });

  it('answers 400, 404 for bad pagination and an unknown environment', async () => {
    expect((await get(`/api/dashboards?env_id=${env}&page=0`)).status).toBe(400);
    expect((await get(`/api/dashboards?env_id=${env}&page_size=101`)).status).toBe(400);
    expect((await get(`/api/dashboards?env_id=${UNKNOWN_ENV}`)).status).toBe(404);
  });

  it('returns detail with charts and datasets', async () => {
    const r = await get(`/api/dashboards/${fx.dashboards[0].id}?env_id=${env}`);
    expect(r.status, r.text).toBe(200);
    expect(r.body).toMatchObject({ id: fx.dashboards[0].id, title: `${tag} Sales overview`, css: '/* touched by alice */' });
    expect(r.body.charts.map((c: { name: string }) => c.name).sort()).toEqual(
      [`${tag} Revenue by region`, `${tag} Sales rows`, `${tag} Total revenue`].sort(),
    );
    expect(r.body.charts.every((c: { dataset_id: number | null }) => c.dataset_id !== null)).toBe(true);
    const datasets = r.body.datasets.map((d: { table_name: string; kind: string }) => [d.table_name, d.kind]).sort();
    expect(datasets).toEqual(
      [
        [`${tag.toLowerCase()}_sales_by_region`, 'virtual'],
        ['sales', 'physical'],
      ].sort(),
    );
    expect(r.body.datasets[0].database).toMatchObject({ id: fx.database.id, name: fx.database.name, backend: 'sqlite' });
    expect(r.body.position).toMatchObject({ DASHBOARD_VERSION_KEY: 'v2' });
    const missing = await get(`/api/dashboards/987654?env_id=${env}`);
    expect(missing.status).toBe(404);
    expect(missing.body.code).toBe('not_found');
  });

  it('answers a typed "off" (200 JSON, not an error) when thumbnails are off, and a clear 404 for an unknown dashboard', async () => {
    const off = await get(`/api/dashboards/${fx.dashboards[0].id}/thumbnail?env_id=${env}`);
    expect(off.status).toBe(200);
    expect(off.headers.get('content-type')).toContain('application/json');
    expect(off.body).toMatchObject({ status: 'off' });
    expect(off.body.detail).toContain('Thumbnails are off in this Superset');
    const unknown = await get(`/api/dashboards/987654/thumbnail?env_id=${env}`);
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe('not_found');
  });

  it('lists datasets with paging, search and 400/404', async () => {
    const table = `${tag.toLowerCase()}_sales_by_region`;
    const r = await get(`/api/datasets?env_id=${env}&search=${table}`);
    expect(r.status, r.text).toBe(200);
    expect(r.body.total).toBe(1);
    expect(r.body.items[0]).toMatchObject({
      id: fx.datasets.salesByRegion.id,
      table_name: table,
      kind: 'virtual',
      database: { id: fx.database.id, name: fx.database.name },
    });
    expect(r.body.items[0].sql).toContain('GROUP BY region');
    const p1 = await get(`/api/datasets?env_id=${env}&page=1&page_size=2`);
    const p2 = await get(`/api/datasets?env_id=${env}&page=2&page_size=2`);
    expect(p1.body.total).toBeGreaterThanOrEqual(3);
    expect(p1.body.has_next).toBe(true);
    expect(ids(p2.body.items).some((id) => ids(p1.body.items).includes(id))).toBe(false);
    expect((await get(`/api/datasets?env_id=${env}&page_size=500`)).status).toBe(400);
    expect((await get(`/api/datasets?env_id=${UNKNOWN_ENV}`)).status).toBe(404);
  });

  it('looks up upstream accounts by name or username', async () => {
    const r = await get(`/api/profile/upstream-accounts?environment_id=${env}&search=${slugP}ali`);
    expect(r.status, r.text).toBe(200);
    expect(r.body.items).toEqual([
      {
        id: aliceId,
        username: `${slugP}alice`,
        display_name: 'Alice Liddell',
        first_name: 'Alice',
        last_name: 'Liddell',
        email: `${slugP}alice@example.com`,
        active: true,
      },
    ]);
    const byName = await get(`/api/profile/upstream-accounts?environment_id=${env}&search=Builder`);
    expect(byName.body.items.map((i: { username: string }) => i.username)).toContain(`${slugP}bob`);
    expect((await get(`/api/profile/upstream-accounts?environment_id=${UNKNOWN_ENV}&search=a`)).status).toBe(404);
    expect((await get('/api/profile/upstream-accounts?search=a')).status).toBe(400);
  });
});
