import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { buildSource, client, registerEnvironment } from '../dashboard-migration/support.ts';
import { createUserWithRoles, uniquePrefix } from '../support/environments.ts';
import { createHarness, type Harness } from '../support/harness.ts';
import type { RequestOptions } from '../support/http.ts';

/**
 * Who may not approve a release candidate: its requesters, that is whoever registered it and
 * whoever imported or changed its artifacts, whether they signed in with a password or send an API
 * key (which acts for its creator). 403 self_approval before anything else is looked at; anyone
 * else gets as far as the candidate's state (409 invalid_state for a draft). Real PostgreSQL,
 * Temporal and worker (decisions are updates to the release workflow); the backup source is a
 * dashboard of the real Superset 6.1.0 a.
 */
const real = inject('supersets') !== null;
const P = uniquePrefix('rq');
let h: Harness;
let env: string;
let backupId: string;
const people: Record<string, { id: string; token: string; key: string }> = {};

const V2 = '/api/v2/clean-release';
const call = (m: string, p: string, o: RequestOptions = {}) => h.request(m, p, o);
const admin = (m: string, p: string, o: RequestOptions = {}) => call(m, p, { ...o, token: h.adminToken });

beforeAll(async () => {
  if (!real) return;
  h = await createHarness({ worker: true });
  env = await registerEnvironment(h, 'a', `${P}-a`);
  const dash = (await buildSource(await client('a'), P, path.join(inject('runDir'), P), { dashboards: 1 })).dashboards[0]!;
  const bk = await admin('POST', '/api/dashboards/backup', { json: { env_id: env, dashboard_ids: [dash.id] } });
  expect(bk.status, bk.text).toBe(202);
  const done = await h.waitForTask(bk.body.task_id, undefined, 180_000);
  expect(done.status, JSON.stringify(done.error)).toBe('SUCCEEDED');
  backupId = done.result.items[0].backup_id;
  const minter = await admin('POST', '/api/admin/roles', { json: { name: 'KeyMinter', permissions: ['admin:settings:WRITE'] } });
  expect(minter.status, minter.text).toBe(201);
  for (const name of ['rm1', 'rm2', 'rm3']) {
    const p = await createUserWithRoles(h, name, ['ReleaseManager', 'KeyMinter']);
    const key = await call('POST', '/api/admin/api-keys', {
      token: p.token,
      json: { name: `${name}-ci`, permissions: ['clean_release:READ', 'clean_release:WRITE', 'clean_release:APPROVE'] },
    });
    expect(key.status, key.text).toBe(201);
    people[name] = { ...p, key: key.body.key };
  }
}, 300_000);
afterAll(async () => {
  await h?.close();
});

async function register(who: RequestOptions): Promise<string> {
  const r = await call('POST', `${V2}/candidates`, {
    ...who,
    json: { name: `candidate ${Math.random()}`, target_env_id: env, sources: [{ kind: 'backup', backup_id: backupId }] },
  });
  expect(r.status, r.text).toBe(201);
  return r.body.id as string;
}
const importArtifacts = async (id: string, who: RequestOptions) => {
  const r = await call('POST', `${V2}/candidates/${id}/artifacts`, { ...who, json: {} });
  expect(r.status, r.text).toBe(200);
};
const approve = (id: string, who: RequestOptions) => call('POST', `${V2}/candidates/${id}/approve`, { ...who, json: {} });

describe.runIf(real)('requesters of a release candidate cannot approve it', () => {
  it('refuses whoever imported or changed its artifacts (403 self_approval), with a password or with their key', async () => {
    const { rm1, rm2, rm3 } = people;
    const id = await register({ token: rm1!.token });
    await importArtifacts(id, { token: rm2!.token });
    for (const who of [{ token: rm2!.token }, { apiKey: rm2!.key }]) {
      const r = await approve(id, who);
      expect(r.status, r.text).toBe(403);
      expect(r.body).toMatchObject({ code: 'self_approval' });
      expect(r.body.detail).toContain("imported or changed a candidate's artifacts");
    }
    // The author too, with either credential.
    for (const who of [{ token: rm1!.token }, { apiKey: rm1!.key }]) {
      const r = await approve(id, who);
      expect(r.status, r.text).toBe(403);
      expect(r.body.code).toBe('self_approval');
    }
    // A third person gets past that, as far as the state (a draft is not approvable).
    const other = await approve(id, { token: rm3!.token });
    expect(other.status, other.text).toBe(409);
    expect(other.body).toMatchObject({ code: 'invalid_state', state: 'draft' });
    expect((await admin('GET', `${V2}/candidates/${id}`)).body.decisions).toEqual([]);
  });

  it("records a candidate registered or imported with a key as its creator's: that person cannot approve it with a password", async () => {
    const { rm2, rm3 } = people;
    const id = await register({ apiKey: rm3!.key });
    expect((await admin('GET', `${V2}/candidates/${id}`)).body.created_by).toBe('rm3');
    const self = await approve(id, { token: rm3!.token });
    expect(self.status, self.text).toBe(403);
    expect(self.body.code).toBe('self_approval');

    const id2 = await register({ token: rm3!.token });
    await importArtifacts(id2, { apiKey: rm2!.key });
    const importer = await approve(id2, { token: rm2!.token });
    expect(importer.status, importer.text).toBe(403);
    expect(importer.body.code).toBe('self_approval');
  });
});
