// Database mapping suggestions between two real Superset instances (a: 6.1.0 -> b: 6.1.0, and
// a -> c: 6.0.0), and the persisted mapping resource, through HTTP.
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../support/harness.ts';
import { createEnvironment, createUserWithRoles, superset, supersets, UNKNOWN_ENV, uniquePrefix } from '../support/environments.ts';
import { createSqliteDatabase, login, type Created } from '../support/superset/fixtures.ts';

const run = !!supersets();
let h: Harness;
let envA: string;
let envB: string;
let envC: string;
let p: string;
const dbs: Record<string, Created & { name: string }> = {};

async function db(instance: 'a' | 'b' | 'c', key: string, name: string, uuid?: string) {
  const s = superset(instance);
  const client = await login(s.baseUrl, s.username, s.password);
  const file = path.join(s.dataDir, 'fixture-data', `${p}${key}.sqlite`);
  const created = await createSqliteDatabase(client, { name, path: file, uuid });
  dbs[key] = { ...created, name };
}

beforeAll(async () => {
  if (!run) return;
  p = uniquePrefix('Dbm');
  h = await createHarness();
  await db('a', 'a_analytics', `${p} analytics_dev`);
  await db('a', 'a_warehouse', `${p} warehouse`);
  await db('b', 'b_analytics', `${p} analytics_prod`);
  await db('b', 'b_warehouse', `${p} Warehouse`);
  await db('b', 'b_other', `${p} zz unrelated`);
  await db('c', 'c_copy', `${p} dwh copy`, dbs.a_warehouse.uuid); // same uuid as a's warehouse, another name
  [envA, envB, envC] = await Promise.all(
    (['a', 'b', 'c'] as const).map((n) => {
      const s = superset(n);
      return createEnvironment(h, { name: `${p}-${n}`, baseUrl: s.baseUrl, username: s.username, password: s.password });
    }),
  );
}, 180_000);
afterAll(async () => h?.close());

const get = (url: string) => h.request('GET', url, { token: h.adminToken });
const put = (url: string, json: unknown, token = h.adminToken) => h.request('PUT', url, { token, json });
const itemFor = (body: { items: Array<{ source_database: { id: number } }> }, id: number) =>
  body.items.find((i) => i.source_database.id === id) as any;

describe.skipIf(!run)('database mapping suggestions between real Superset instances', () => {
  it('suggests the target database by name and backend, with a confidence', async () => {
    const r = await get(`/api/dashboards/db-mappings?source_env_id=${envA}&target_env_id=${envB}`);
    expect(r.status, r.text).toBe(200);
    expect(r.body).toMatchObject({ source_env_id: envA, target_env_id: envB });
    const analytics = itemFor(r.body, dbs.a_analytics.id);
    expect(analytics.source_database).toMatchObject({ name: `${p} analytics_dev`, backend: 'sqlite', uuid: dbs.a_analytics.uuid });
    expect(analytics.suggested_target).toMatchObject({ id: dbs.b_analytics.id, name: `${p} analytics_prod`, backend: 'sqlite' });
    expect(analytics.confidence).toBe(1);
    expect(analytics.candidates[0]).toMatchObject({ id: dbs.b_analytics.id, same_uuid: false, name_similarity: 1, same_backend: true });
    expect(analytics.candidates.length).toBeLessThanOrEqual(3);
    expect(analytics.candidates[1].confidence).toBeLessThan(1);
    const warehouse = itemFor(r.body, dbs.a_warehouse.id);
    expect(warehouse.suggested_target.id).toBe(dbs.b_warehouse.id); // case differs
    expect(warehouse.saved_target).toBeNull();
  });

  it('prefers the same uuid across versions (6.1.0 -> 6.0.0)', async () => {
    const r = await get(`/api/dashboards/db-mappings?source_env_id=${envA}&target_env_id=${envC}`);
    expect(r.status, r.text).toBe(200);
    const warehouse = itemFor(r.body, dbs.a_warehouse.id);
    expect(warehouse.suggested_target).toMatchObject({ id: dbs.c_copy.id, uuid: dbs.a_warehouse.uuid });
    expect(warehouse.candidates[0]).toMatchObject({ confidence: 1, same_uuid: true });
  });

  it('answers 404 when either environment is missing and 400 without both ids', async () => {
    for (const q of [
      `source_env_id=${UNKNOWN_ENV}&target_env_id=${envB}`,
      `source_env_id=${envA}&target_env_id=${UNKNOWN_ENV}`,
      `source_env_id=x&target_env_id=${envB}`,
    ]) {
      const r = await get(`/api/dashboards/db-mappings?${q}`);
      expect(r.status, q).toBe(404);
      expect(r.body.code).toBe('not_found');
    }
    expect((await get(`/api/dashboards/db-mappings?source_env_id=${envA}`)).status).toBe(400);
  });
});

describe.skipIf(!run)('persisted database mappings', () => {
  const url = () => `/api/environments/${envA}/db-mappings/${envB}`;

  it('saves, reads and replaces the mappings of a pair, checked against both instances', async () => {
    expect((await get(url())).body).toEqual({ source_env_id: envA, target_env_id: envB, items: [] });
    const saved = await put(url(), {
      mappings: [
        { source_database_id: dbs.a_analytics.id, target_database_id: dbs.b_analytics.id },
        { source_database_id: dbs.a_warehouse.id, target_database_id: dbs.b_warehouse.id },
      ],
    });
    expect(saved.status, saved.text).toBe(200);
    expect(saved.body.items).toHaveLength(2);
    const analytics = saved.body.items.find((i: any) => i.source_database.id === dbs.a_analytics.id);
    expect(analytics).toMatchObject({
      source_database: { id: dbs.a_analytics.id, name: `${p} analytics_dev`, uuid: dbs.a_analytics.uuid },
      target_database: { id: dbs.b_analytics.id, name: `${p} analytics_prod`, uuid: dbs.b_analytics.uuid },
    });
    expect(analytics.created_by).toBe(analytics.updated_by);
    expect((await get(url())).body.items).toEqual(saved.body.items);

    const suggestions = await get(`/api/dashboards/db-mappings?source_env_id=${envA}&target_env_id=${envB}`);
    expect(itemFor(suggestions.body, dbs.a_warehouse.id).saved_target).toEqual({
      id: dbs.b_warehouse.id,
      name: `${p} Warehouse`,
      uuid: dbs.b_warehouse.uuid,
    });

    // Replace: warehouse now goes elsewhere, analytics is no longer mapped.
    const replaced = await put(url(), { mappings: [{ source_database_id: dbs.a_warehouse.id, target_database_id: dbs.b_other.id }] });
    expect(replaced.body.items).toHaveLength(1);
    expect(replaced.body.items[0].target_database).toMatchObject({ id: dbs.b_other.id, name: `${p} zz unrelated` });
    // What the migration engine reads.
    const rows = await h.knex('database_mappings').where({ source_env_id: envA, target_env_id: envB });
    expect(rows.map((r) => [r.source_database_id, r.target_database_id])).toEqual([[dbs.a_warehouse.id, dbs.b_other.id]]);
    expect((await put(url(), { mappings: [] })).body.items).toEqual([]);
  });

  it('refuses unknown database ids, duplicates and a pair of the same environment with 400', async () => {
    const unknown = await put(url(), { mappings: [{ source_database_id: 987654, target_database_id: dbs.b_analytics.id }] });
    expect(unknown.status).toBe(400);
    expect(unknown.body.errors).toEqual([
      { field: 'body.mappings.0.source_database_id', message: expect.stringContaining('no database 987654') },
    ]);
    const wrongSide = await put(url(), { mappings: [{ source_database_id: dbs.a_analytics.id, target_database_id: 987654 }] });
    expect(wrongSide.body.errors[0].field).toBe('body.mappings.0.target_database_id');
    const dup = await put(url(), {
      mappings: [
        { source_database_id: dbs.a_analytics.id, target_database_id: dbs.b_analytics.id },
        { source_database_id: dbs.a_analytics.id, target_database_id: dbs.b_other.id },
      ],
    });
    expect(dup.status).toBe(400);
    expect((await put(`/api/environments/${envA}/db-mappings/${envA}`, { mappings: [] })).status).toBe(400);
    expect((await put(url(), { mappings: [{ source_database_id: 'x', target_database_id: 1 }] })).status).toBe(400);
  });

  it('404 for unknown environments; dashboards:MIGRATE to save', async () => {
    expect((await get(`/api/environments/${UNKNOWN_ENV}/db-mappings/${envB}`)).status).toBe(404);
    expect((await get(`/api/environments/${envA}/db-mappings/${UNKNOWN_ENV}`)).status).toBe(404);
    expect((await put(`/api/environments/${envA}/db-mappings/${UNKNOWN_ENV}`, { mappings: [] })).status).toBe(404);
    const viewer = await createUserWithRoles(h, uniquePrefix('mapviewer'), ['Viewer']);
    expect((await h.request('GET', url(), { token: viewer.token })).status).toBe(200);
    expect((await put(url(), { mappings: [] }, viewer.token)).status).toBe(403);
  });

  it('deleting an environment deletes its mappings', async () => {
    const s = superset('b');
    const temp = await createEnvironment(h, { baseUrl: s.baseUrl, username: s.username, password: s.password });
    const saved = await put(`/api/environments/${envA}/db-mappings/${temp}`, {
      mappings: [{ source_database_id: dbs.a_analytics.id, target_database_id: dbs.b_analytics.id }],
    });
    expect(saved.status, saved.text).toBe(200);
    expect((await h.request('DELETE', `/api/environments/${temp}`, { token: h.adminToken })).status).toBe(204);
    expect(await h.knex('database_mappings').where({ target_env_id: temp })).toEqual([]);
  });
});
