import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../support/harness.ts';

// The clean-release API's refusals, without Superset: every bad input is a 4xx problem body.
let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => h?.close());

const V2 = '/api/v2/clean-release';

describe('clean-release refusals', () => {
  it('legacy paths with ids no header can carry raw answer 404 with an encoded successor link, not a 500', async () => {
    const r = await h.request('GET', '/api/clean-release/checks/%F3%80%A4%B4%40%C2%A1%27%C3%B2', { token: h.adminToken });
    expect(r.status, r.text).toBe(404);
    expect(r.headers.get('deprecation')).toBe('true');
    expect(r.headers.get('link')).toBe(`<${V2}/checks/%F3%80%A4%B4%40%C2%A1'%C3%B2>; rel="successor-version"`);
    const p = await h.request('POST', '/api/clean-release/candidates/%07%C2%88/prepare', { token: h.adminToken });
    expect(p.status, p.text).toBe(404);
  });

  it('refuses bad candidates, registries and policies with 400, unknown ones with 404', async () => {
    const admin = (m: string, p: string, json?: unknown) =>
      h.request(m, p, { token: h.adminToken, ...(json === undefined ? {} : { json }) });
    expect((await admin('POST', `${V2}/candidates`, { name: 'x', target_env_id: 'nope', sources: [] })).status).toBe(400);
    expect(
      (
        await admin('POST', `${V2}/candidates`, {
          name: 'x',
          target_env_id: 'nope',
          sources: [{ kind: 'git', dashboard_uuid: 'x', commit: 'y' }],
        })
      ).status,
    ).toBe(400);
    const unknownEnv = await admin('POST', `${V2}/candidates`, {
      name: 'x',
      target_env_id: 'nope',
      sources: [{ kind: 'backup', backup_id: '00000000-0000-4000-8000-000000000000' }],
    });
    expect(unknownEnv.status, unknownEnv.text).toBe(404);
    expect((await admin('POST', `${V2}/candidates/00000000-0000-4000-8000-000000000000/approve`, {})).status).toBe(404);
    expect((await admin('GET', `${V2}/reports/not-a-uuid`)).status).toBe(404);
    expect((await admin('PUT', `${V2}/registry`, { hosts: ['ok.example', 'bad host'] })).status).toBe(400);
    expect((await admin('PUT', `${V2}/policy`, { rules: [{ rule: 'verified_in_staging', mode: 'enforce' }] })).status).toBe(400);
    expect(
      (
        await admin('PUT', `${V2}/policy`, {
          rules: [
            { rule: 'dry_run_migration', mode: 'warn' },
            { rule: 'dry_run_migration', mode: 'enforce' },
          ],
        })
      ).status,
    ).toBe(400);
    const ok = await admin('PUT', `${V2}/policy`, { rules: [{ rule: 'dry_run_migration', mode: 'warn' }] });
    expect(ok.status, ok.text).toBe(200);
    expect((await admin('GET', `${V2}/policy`)).body).toEqual({ rules: [{ rule: 'dry_run_migration', mode: 'warn' }] });
  });
});
