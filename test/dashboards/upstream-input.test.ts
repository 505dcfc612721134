// Why the fake: (part) thumbnails that are not raster images.
// What Switchyard sends Superset and passes on from it: search text of any kind reaches the real
// Superset as valid rison (and finds what it names), pages of any depth are served, and thumbnails are
// passed on only as raster images.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeRison, decodeRison } from '../../lib/superset/rison.ts';
import { createHarness, type Harness } from '../support/harness.ts';
import { createEnvironment, superset, supersets } from '../support/environments.ts';
import { startFakeSuperset, type FakeSuperset } from '../support/fake-superset.ts';
import { createDashboard, login } from '../support/superset/fixtures.ts';

const real = !!supersets();
let h: Harness;
let fake: FakeSuperset;
let fakeEnv: string;
let realEnv: string;

beforeAll(async () => {
  [h, fake] = await Promise.all([createHarness(), startFakeSuperset({ thumbnails: true })]);
  fake.addDashboard({ title: 'Raster' });
  fakeEnv = await createEnvironment(h, { baseUrl: fake.baseUrl, username: fake.username, password: fake.password });
  if (real) {
    const a = superset('a');
    realEnv = await createEnvironment(h, { baseUrl: a.baseUrl, username: a.username, password: a.password });
  }
}, 120_000);
afterAll(async () => {
  await h?.close();
  await fake?.close();
});

const get = (path: string) => h.request('GET', path, { token: h.adminToken });

// Quotes, bangs, rison's own punctuation, URL and LIKE metacharacters, non-ASCII, control characters.
const NASTY = [
  "it's",
  'wow!',
  "!'",
  "''",
  '(x)',
  'a:b,c',
  '*@$',
  'a"b',
  '50%',
  'a#b&c=d+e',
  '-lead',
  '5',
  'é ünï',
  '日本語',
  '😀',
  'tab\there',
  'bell\u0007',
  'line\u2028sep',
  'back\\slash',
];

describe('rison', () => {
  it('quotes every string Python prison would not read as an id, and round-trips', () => {
    for (const s of NASTY) {
      const text = encodeRison({ value: s });
      expect(text, s).toMatch(/^\(value:'.*'\)$/su);
      expect(decodeRison<{ value: string }>(text).value).toBe(s);
    }
    expect(encodeRison({ col: 'dashboard_title', n: 1, b: true, z: null })).toBe('(col:dashboard_title,n:1,b:!t,z:!n)');
  });
});

describe.runIf(real)('search text against the real Superset', () => {
  it('finds dashboards whose titles hold the nasty text, and never answers 503 for a search', async () => {
    const a = superset('a');
    const sc = await login(a.baseUrl, a.username, a.password);
    const tag = `Rsn${Date.now().toString(36)}`;
    const created = new Map<string, number>();
    for (const [i, s] of NASTY.entries()) created.set(s, (await createDashboard(sc, { title: `${tag} ${i} ${s}` })).id);
    for (const [i, s] of NASTY.entries()) {
      const r = await get(`/api/dashboards?env_id=${realEnv}&page_size=100&search=${encodeURIComponent(`${tag} ${i} ${s}`)}`);
      expect(r.status, `${JSON.stringify(s)}: ${r.text}`).toBe(200);
      expect(
        r.body.items.map((d: { id: number }) => d.id),
        JSON.stringify(s),
      ).toContain(created.get(s));
      const ds = await get(`/api/datasets?env_id=${realEnv}&search=${encodeURIComponent(s)}`);
      expect(ds.status, `datasets ${JSON.stringify(s)}: ${ds.text}`).toBe(200);
    }
  }, 120_000);
});

describe('paging bounds', () => {
  it('serves a page deeper than 10000 rows as Superset does (an empty page past the last row), on dashboards and datasets', async () => {
    for (const list of ['dashboards', 'datasets']) {
      for (const q of ['page=10001&page_size=1', 'page=101&page_size=100']) {
        const r = await get(`/api/${list}?env_id=${fakeEnv}&${q}`);
        expect(r.status, `${list} ${q}: ${r.text}`).toBe(200);
        expect(r.body).toMatchObject({ items: [], total: list === 'dashboards' ? 1 : 0, has_next: false });
      }
      // Only a page whose offset would stop being a whole number is refused.
      const r = await get(`/api/${list}?env_id=${fakeEnv}&page=99999999999999`);
      expect(r.status).toBe(400);
      expect(r.body.errors[0].field).toBe('query.page');
    }
    const doc = await get('/api/openapi.json');
    const page = doc.body.paths['/api/dashboards'].get.parameters.find((p: { name: string }) => p.name === 'page');
    expect(page.schema.maximum).toBe(1_000_000_000);
    expect(page.schema.description).toContain('any depth');
  });
});

describe('thumbnails', () => {
  const thumb = () =>
    fetch(`${h.baseUrl}/api/dashboards/1/thumbnail?env_id=${fakeEnv}`, { headers: { authorization: `Bearer ${h.adminToken}` } });
  const svg = '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(document.cookie)</script></svg>';

  it('passes on raster images with the type their bytes show', async () => {
    fake.dashboards[0].thumbnail = 'ready';
    const jpeg = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 0x10, 0x4a, 0x46, 0x49, 0x46]);
    fake.dashboards[0].thumbnailImage = { contentType: 'image/jpeg', body: jpeg };
    const r = await thumb();
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('image/jpeg');
    expect(Buffer.from(await r.arrayBuffer())).toEqual(jpeg);
  });

  it('never passes on SVG or anything else labelled as an image: a 503 upstream problem instead', async () => {
    fake.dashboards[0].thumbnail = 'ready';
    for (const image of [
      { contentType: 'image/svg+xml', body: svg },
      { contentType: 'image/png', body: svg },
      { contentType: 'text/html', body: '<html><script>x</script></html>' },
      { contentType: 'image/svg+xml', body: Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0]) },
    ]) {
      fake.dashboards[0].thumbnailImage = image;
      const r = await thumb();
      const text = await r.text();
      expect(r.status, `${image.contentType}: ${text}`).toBe(503);
      expect(r.headers.get('content-type')).toContain('application/problem+json');
      expect(JSON.parse(text)).toMatchObject({ code: 'upstream_unavailable', reason: 'bad_response' });
      expect(text).not.toContain('<script>');
    }
  });
});
