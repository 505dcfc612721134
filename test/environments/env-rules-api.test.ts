// Why the fake: incidental: no Superset answer is asserted; the fake is only a registered environment.
// Per-environment rules over HTTP: stored per pair beside the database mappings, in order, each
// checked for its meaning; bad input is a 4xx problem and changes nothing. No Superset call.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../support/harness.ts';
import { createEnvironment, createUserWithRoles, UNKNOWN_ENV } from '../support/environments.ts';
import { startFakeSuperset, type FakeSuperset } from '../support/fake-superset.ts';

let h: Harness;
let fake: FakeSuperset;
let dev: string;
let prod: string;
let viewer: string;

beforeAll(async () => {
  [h, fake] = await Promise.all([createHarness(), startFakeSuperset()]);
  const conn = { baseUrl: fake.baseUrl, username: fake.username, password: fake.password };
  dev = await createEnvironment(h, conn);
  prod = await createEnvironment(h, conn);
  viewer = (await createUserWithRoles(h, 'rules-viewer', ['Viewer'])).token;
});
afterAll(async () => {
  await h?.close();
  await fake?.close();
});

const base = () => `/api/environments/${dev}/rules/${prod}`;
const call = (method: string, path: string, json?: unknown, token = h.adminToken) =>
  h.request(method, path, { token, ...(json ? { json } : {}) });
const list = async () =>
  (await call('GET', base())).body.items as Array<{ id: string; kind: string; from: string; to: string; position: number }>;

describe('per-environment rules', () => {
  it('adds rules in order, changes one in place, removes one; other pairs see none', async () => {
    const a = await call('POST', base(), { kind: 'schema', from: 'analytics_dev', to: 'analytics' });
    expect(a.status, a.text).toBe(201);
    expect(a.headers.get('location')).toBe(`${base()}/${a.body.id}`);
    const b = await call('POST', base(), {
      kind: 'text',
      from: 'https://superset-dev.example.com',
      to: 'https://superset.example.com',
      description: 'links',
    });
    expect(b.status, b.text).toBe(201);
    expect((await list()).map((r) => [r.kind, r.from, r.position])).toEqual([
      ['schema', 'analytics_dev', 0],
      ['text', 'https://superset-dev.example.com', 1],
    ]);
    const put = await call('PUT', `${base()}/${a.body.id}`, { kind: 'schema', from: 'analytics_dev', to: 'analytics_prod' });
    expect(put.status, put.text).toBe(200);
    expect(put.body).toMatchObject({ id: a.body.id, position: 0, to: 'analytics_prod' });
    expect((await call('GET', `/api/environments/${prod}/rules/${dev}`)).body.items).toEqual([]);

    const del = await call('DELETE', `${base()}/${b.body.id}`);
    expect(del.status).toBe(204);
    expect((await list()).map((r) => r.id)).toEqual([a.body.id]);
    expect((await call('DELETE', `${base()}/${b.body.id}`)).status).toBe(404);
  });

  it('refuses what it cannot apply, with the field, and stores nothing', async () => {
    const before = await list();
    const cases: Array<[unknown, number, string]> = [
      [{ kind: 'schema', from: '', to: 'x' }, 400, 'body.from'],
      [{ kind: 'schema', from: 'a', to: 'a' }, 400, 'body.to'],
      [{ kind: 'catalog', from: 'a\u0000', to: 'b' }, 400, 'body.from'],
      [{ kind: 'text', from: 'https://dev.example.com', to: 'prod.example.com' }, 400, 'body.to'],
      [{ kind: 'url', from: 'a', to: 'b' }, 400, 'body.kind'],
      [{ kind: 'text', from: 'a', to: 'b', extra: 1 }, 400, 'body'],
      [{ kind: 'schema', from: 'analytics_dev', to: 'other' }, 409, ''],
    ];
    for (const [body, status, field] of cases) {
      const r = await call('POST', base(), body);
      expect(r.status, `${JSON.stringify(body)} → ${r.text}`).toBe(status);
      if (field) expect(JSON.stringify(r.body.errors ?? r.body)).toContain(field);
    }
    expect((await call('POST', `/api/environments/${dev}/rules/${dev}`, { kind: 'text', from: 'a', to: 'b' })).status).toBe(400);
    expect((await call('POST', `/api/environments/${UNKNOWN_ENV}/rules/${prod}`, { kind: 'text', from: 'a', to: 'b' })).status).toBe(404);
    expect((await call('PUT', `${base()}/not-a-uuid`, { kind: 'text', from: 'a', to: 'b' })).status).toBe(400);
    expect((await call('PUT', `${base()}/00000000-0000-4000-8000-000000000000`, { kind: 'text', from: 'a', to: 'b' })).status).toBe(404);
    expect(await list()).toEqual(before);
  });

  it('refuses a schema or catalog name that is no identifier, naming the character, on add and change alike (review F1)', async () => {
    const before = await list();
    const hostile: Array<[string, string, RegExp]> = [
      ['schema', 'x`; DELETE FROM t; -- ', /'`' \(U\+0060\) at position 2/],
      ['schema', 'x`) UNION SELECT password FROM mysql.user -- ', /'`' \(U\+0060\) at position 2/],
      ['schema', 'x"; DELETE FROM t; -- ', /'"' \(U\+0022\) at position 2/],
      ['catalog', 'cat;DROP', /';' \(U\+003B\) at position 4/],
      ['schema', 'two words', /U\+0020 at position 4/],
      ['schema', 'a.b', /'\.' \(U\+002E\) at position 2/],
    ];
    for (const [kind, to, why] of hostile) {
      const r = await call('POST', base(), { kind, from: 'staging_dev', to });
      expect(r.status, r.text).toBe(400);
      expect(r.body.errors).toEqual([{ field: 'body.to', message: expect.stringMatching(why) }]);
      expect(r.body.detail).toMatch(why);
    }
    const put = await call('PUT', `${base()}/${before[0]!.id}`, { kind: 'schema', from: before[0]!.from, to: 'x`; DELETE FROM t; -- ' });
    expect(put.status, put.text).toBe(400);
    expect(await list()).toEqual(before);
  });

  it('reading needs dashboards:READ, changing needs dashboards:MIGRATE', async () => {
    expect((await call('GET', base(), undefined, viewer)).status).toBe(200);
    expect((await call('POST', base(), { kind: 'text', from: 'x', to: 'y' }, viewer)).status).toBe(403);
  });
});

describe('the CLI', () => {
  const BIN = fileURLToPath(new URL('../../cli/switchyard.cjs', import.meta.url));
  const cli = (args: string[], apiKey: string) =>
    new Promise<{ code: number; stdout: string; stderr: string }>((resolve) =>
      execFile(
        BIN,
        args,
        { env: { PATH: process.env.PATH, HOME: '/nonexistent', SWITCHYARD_URL: h.baseUrl, SWITCHYARD_API_KEY: apiKey }, timeout: 60_000 },
        (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      ),
    );

  it("adds, lists and removes a pair's rules; a refused rule exits non-zero with the field", async () => {
    const key = await call('POST', '/api/admin/api-keys', {
      name: 'rules-cli',
      permissions: ['environments:READ', 'dashboards:READ', 'dashboards:MIGRATE'],
    });
    expect(key.status, key.text).toBe(201);
    const k = key.body.key as string;
    const added = await cli(
      [
        '-o',
        'json',
        'env',
        'rules',
        'add',
        prod,
        dev,
        '--kind',
        'text',
        '--from',
        'https://superset.example.com',
        '--to',
        'https://superset-dev.example.com',
      ],
      k,
    );
    expect(added.code, added.stderr).toBe(0);
    const id = JSON.parse(added.stdout).id as string;
    const listed = await cli(['-o', 'json', 'env', 'rules', 'list', prod, dev], k);
    expect(JSON.parse(listed.stdout).items.map((r: { id: string }) => r.id)).toEqual([id]);
    const bad = await cli(['env', 'rules', 'add', prod, dev, '--kind', 'text', '--from', 'https://a.example.com', '--to', 'not a url'], k);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('body.to');
    expect((await cli(['env', 'rules', 'remove', prod, dev, id], k)).code).toBe(0);
    expect((await call('GET', `/api/environments/${prod}/rules/${dev}`)).body.items).toEqual([]);
  });
});
