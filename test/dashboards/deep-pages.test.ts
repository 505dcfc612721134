// Lists past 10,000 rows against real Superset 6.1.0: 10,001 dashboards seeded straight into the
// instance's SQLite metadata (cheaper than 10,001 API calls), then page 10,001 of page_size 1,
// plain and with the profile filter (whose keys are streamed from two owner/modifier lists and
// merged), answered as Superset serves it instead of refused. On an instance of this file's own
// (from the cached template): writing behind Superset's API into a shared instance would put
// 10,001 rows into every other file's lists of it.
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createHarness, type Harness } from '../support/harness.ts';
import { createEnvironment, supersets, uniquePrefix } from '../support/environments.ts';
import { startSuperset, type SupersetInstance } from '../support/superset/instance.ts';

const real = !!supersets();
const P = uniquePrefix('deep');
const N = 10_001;
let h: Harness;
let env: string;
let own: SupersetInstance | undefined;

/** Title of the i-th seeded dashboard; i = 0 is the oldest change, so the last of the list. */
const title = (i: number) => `${P} ${String(i).padStart(5, '0')}`;

function metadataDb(): DatabaseSync {
  const db = new DatabaseSync(path.join(own!.dataDir, 'superset.db'));
  db.exec('PRAGMA busy_timeout = 30000');
  return db;
}

/**
 * Even i: owned by the admin (and last changed by nobody); odd i: last changed by the admin and
 * owned by nobody. With the profile filter bound to `admin` the union is every row, and neither
 * list holds the other, so the page is cut from both lists' keys merged.
 */
function seed(adminId: number): void {
  const db = metadataDb();
  try {
    const base = Date.parse('2020-01-01T00:00:00Z');
    const dash = db.prepare(
      'insert into dashboards (created_on, changed_on, dashboard_title, changed_by_fk, published, uuid, is_managed_externally) values (?, ?, ?, ?, 1, ?, 0)',
    );
    const owner = db.prepare('insert into dashboard_user (user_id, dashboard_id) values (?, ?)');
    db.exec('BEGIN');
    for (let i = 0; i < N; i++) {
      const at = new Date(base + i * 1000).toISOString().replace('T', ' ').replace('Z', '');
      const uuid = Buffer.from(randomUUID().replace(/-/g, ''), 'hex');
      const { lastInsertRowid } = dash.run(at, at, title(i), i % 2 ? adminId : null, uuid);
      if (i % 2 === 0) owner.run(adminId, Number(lastInsertRowid));
    }
    db.exec('COMMIT');
  } finally {
    db.close();
  }
}

beforeAll(async () => {
  if (!real) return;
  [own, h] = await Promise.all([
    startSuperset({
      version: '6.1.0',
      dataDir: path.join(inject('runDir'), 'superset-deep-pages'),
      fresh: true,
      useTemplate: true,
      metadata: 'sqlite',
      workers: 1,
      threads: 1,
      log: () => {},
    }),
    createHarness(),
  ]);
  const a = own;
  env = await createEnvironment(h, { baseUrl: a.baseUrl, username: a.username, password: a.password, timeoutSeconds: 120 });
  const db = metadataDb();
  const admin = db.prepare('select id from ab_user where username = ?').get(a.username) as { id: number };
  db.close();
  seed(admin.id);
}, 240_000);
afterAll(async () => {
  await h?.close();
  await own?.stop();
});

const get = (p: string) => h.request('GET', p, { token: h.adminToken });
const setPreference = async (patch: Record<string, unknown>) => {
  const r = await h.request('PATCH', '/api/profile/preferences', { token: h.adminToken, json: patch });
  expect(r.status, r.text).toBe(200);
};

describe.skipIf(!real)('a list past 10,000 rows (real Superset 6.1.0)', () => {
  it('serves page 10,001 of page_size 1 as Superset does: the oldest row, an exact total, nothing next', async () => {
    const r = await get(`/api/dashboards?env_id=${env}&search=${P}&page=10001&page_size=1&page_context=other`);
    expect(r.status, r.text).toBe(200);
    expect(r.body).toMatchObject({ total: N, page: 10001, page_size: 1, has_next: false });
    expect(r.body.items.map((d: { title: string }) => d.title)).toEqual([title(0)]);
    const past = await get(`/api/dashboards?env_id=${env}&search=${P}&page=10002&page_size=1&page_context=other`);
    expect(past.status, past.text).toBe(200);
    expect(past.body).toMatchObject({ items: [], total: N, has_next: false });
  });

  it(
    'serves the same depth with the profile filter, streaming the keys of owners and last modifiers merged by change time',
    { timeout: 300_000 },
    async () => {
      await setPreference({ profile_filter_enabled: true, superset_username: own!.username });
      try {
        const deep = await get(`/api/dashboards?env_id=${env}&search=${P}&page=10001&page_size=1`);
        expect(deep.status, deep.text).toBe(200);
        expect(deep.body.effective_profile_filter).toMatchObject({ applied: true });
        expect(deep.body).toMatchObject({ total: N, has_next: false });
        expect(deep.body.items.map((d: { title: string }) => d.title)).toEqual([title(0)]);
        // A page from the middle: rows 9,998 and 9,999 of the merged list (newest first), one owned and one last changed.
        const mid = await get(`/api/dashboards?env_id=${env}&search=${P}&page=5000&page_size=2`);
        expect(mid.status, mid.text).toBe(200);
        expect(mid.body.items.map((d: { title: string }) => d.title)).toEqual([title(N - 1 - 9998), title(N - 1 - 9999)]);
        expect(mid.body.has_next).toBe(true);
      } finally {
        await setPreference({ profile_filter_enabled: false, superset_username: null });
      }
    },
  );
});
