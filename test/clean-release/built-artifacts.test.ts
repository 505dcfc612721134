// Why the fake: incidental: no Superset answer is asserted; the fake is only a registered environment.
// Artifacts built elsewhere (a CI job's export zip per dashboard, its sha256 and the git remote and
// commit it claims to come from), against the run's real Gitea: the zip's digest is checked (a
// mismatch is a 400 that changes nothing), the claimed commit is fetched and compared, and an
// artifact whose claimed source is outside the trusted registry, unreadable or holding other
// content is a blocking violation at prepare. Superset is not needed: the zips are made here.
import { createHash, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { strToU8, zipSync } from 'fflate';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { filesFromExport } from '../../lib/git/dashboard-files.ts';
import { gitProvider } from '../../lib/git/providers.ts';
import { WorkingCopy } from '../../lib/git/working-copy.ts';
import { createEnvironment } from '../support/environments.ts';
import { startFakeSuperset, type FakeSuperset } from '../support/fake-superset.ts';
import { createHarness, type Harness } from '../support/harness.ts';

const g = inject('gitea');
const V2 = '/api/v2/clean-release';
const D = randomUUID();
const C = randomUUID();

/** A dashboard export as Superset's `dashboard/export` answers it, with the given title. */
function exportZip(title: string): Uint8Array {
  const root = 'dashboard_export_20261125T100000';
  return zipSync({
    [`${root}/metadata.yaml`]: strToU8("version: 1.0.0\ntype: Dashboard\ntimestamp: '2026-11-25T10:00:00+00:00'\n"),
    [`${root}/dashboards/Sales_12.yaml`]: strToU8(
      `uuid: ${D}\ndashboard_title: ${title}\nposition:\n  CHART-1:\n    meta: {uuid: ${C}, chartId: 7}\n`,
    ),
    [`${root}/charts/Revenue_7.yaml`]: strToU8(`slice_name: Revenue\nuuid: ${C}\nparams: {a: 1}\n`),
  });
}

const built = (zip: Uint8Array, remote: string, commit: string, sha256 = createHash('sha256').update(zip).digest('hex')) => ({
  zip_base64: Buffer.from(zip).toString('base64'),
  sha256,
  source: { remote, commit },
});

describe.skipIf(!g)('clean release: artifacts built elsewhere (real Gitea)', () => {
  let h: Harness;
  let fake: FakeSuperset;
  let candidate: string;
  let remote: string;
  let commit: string;
  const admin = (m: string, p: string, json?: unknown) => h.request(m, p, { token: h.adminToken, ...(json === undefined ? {} : { json }) });

  beforeAll(async () => {
    [h, fake] = await Promise.all([createHarness(), startFakeSuperset()]);
    const env = await createEnvironment(h, { baseUrl: fake.baseUrl, username: fake.username, password: fake.password });
    // The remote holds, at `commit`, the files a sync of that export writes (a private repository: the git config's token reads it).
    const provider = gitProvider({ provider: 'gitea', baseUrl: g!.baseUrl, owner: g!.username, token: g!.token });
    remote = (await provider.createRepository({ name: `built-${Date.now().toString(36)}`, private: true, defaultBranch: 'main' }))
      .clone_url;
    const wc = new WorkingCopy(fs.mkdtempSync(path.join(os.tmpdir(), 'built-src-')));
    const author = { name: 'CI', email: 'ci@example.com' };
    await wc.init({ branch: 'main', remoteUrl: remote, author, readme: '# dashboard\n' });
    await wc.writeBundle(filesFromExport(exportZip('Sales')).files);
    commit = (await wc.commit('Sales as released', author)).commit;
    await wc.push({ username: g!.username, token: g!.token, origin: new URL(g!.baseUrl).origin });
    const config = await admin('POST', '/api/git/configs', {
      name: 'ci-gitea',
      provider: 'gitea',
      base_url: g!.baseUrl,
      owner: g!.username,
      pat: g!.token,
    });
    expect(config.status, config.text).toBe(201);
    expect((await admin('PUT', `${V2}/registry`, { hosts: [new URL(g!.baseUrl).hostname] })).status).toBe(200);
    const c = await admin('POST', `${V2}/candidates`, {
      name: 'built in CI',
      target_env_id: env,
      sources: [{ kind: 'backup', backup_id: randomUUID() }],
    });
    expect(c.status, c.text).toBe(201);
    candidate = c.body.id;
  }, 120_000);
  afterAll(async () => {
    await h?.close();
    await fake?.close();
  });

  /** Imports, builds the manifest and prepares; the import's artifact and the prepare's answer. */
  async function importAndPrepare(artifact: ReturnType<typeof built>) {
    const imported = await admin('POST', `${V2}/candidates/${candidate}/artifacts`, { built: [artifact] });
    expect(imported.status, imported.text).toBe(200);
    expect((await admin('POST', `${V2}/candidates/${candidate}/manifest`)).status).toBe(201);
    const prepared = await admin('POST', `${V2}/candidates/${candidate}/prepare`);
    expect(prepared.status, prepared.text).toBe(200);
    return { artifact: imported.body.artifacts[0], prepared: prepared.body };
  }

  it('takes a zip its claimed commit vouches for: verified, prepared without violations', async () => {
    const zip = exportZip('Sales');
    const { artifact, prepared } = await importAndPrepare(built(zip, remote, commit));
    expect(artifact).toMatchObject({ dashboard_uuid: D, title: 'Sales' });
    expect(artifact.source).toMatchObject({
      kind: 'built',
      remote,
      commit,
      verified: true,
      reason: null,
      sha256: createHash('sha256').update(zip).digest('hex'),
    });
    expect(prepared).toMatchObject({ status: 'prepared', violations: [] });
  });

  it('refuses a zip whose bytes do not digest to its sha256 (400, nothing changes)', async () => {
    const before = await admin('GET', `${V2}/candidates/${candidate}`);
    const r = await admin('POST', `${V2}/candidates/${candidate}/artifacts`, {
      built: [built(exportZip('Sales'), remote, commit, 'a'.repeat(64))],
    });
    expect(r.status, r.text).toBe(400);
    expect(r.body.code).toBe('artifact_digest_mismatch');
    const after = await admin('GET', `${V2}/candidates/${candidate}`);
    expect(after.body.artifacts).toEqual(before.body.artifacts);
    expect(after.body.state).toBe(before.body.state);
  });

  it('blocks a zip whose content is not what the claimed commit holds', async () => {
    const { artifact, prepared } = await importAndPrepare(built(exportZip('Sales, edited after the commit'), remote, commit));
    expect(artifact.source).toMatchObject({ kind: 'built', verified: false });
    expect(artifact.source.reason).toMatch(/is not what commit/);
    expect(prepared.status).toBe('blocked');
    expect(prepared.violations).toEqual([expect.objectContaining({ rule: 'built_provenance', blocking: true })]);
  });

  it('blocks a claimed commit the remote does not hold', async () => {
    const { artifact, prepared } = await importAndPrepare(built(exportZip('Sales'), remote, 'f'.repeat(40)));
    expect(artifact.source).toMatchObject({ verified: false, reason: expect.stringMatching(/cannot be read/) });
    expect(prepared.violations.map((v: any) => v.rule)).toEqual(['built_provenance']);
  });

  it('blocks, without fetching, a claimed source outside the trusted registry', async () => {
    const { artifact, prepared } = await importAndPrepare(
      built(exportZip('Sales'), 'https://git.untrusted.example/acme/sales.git', commit),
    );
    expect(artifact.source).toMatchObject({ verified: false, reason: expect.stringMatching(/outside the trusted registry.*not fetched/) });
    expect(prepared.status).toBe('blocked');
    expect(prepared.violations.map((v: any) => v.rule).sort()).toEqual(['built_provenance', 'trusted_sources']);
    expect(prepared.violations.every((v: any) => v.blocking)).toBe(true);
  });

  it('refuses bodies that are not built artifacts (400)', async () => {
    for (const body of [
      { built: [{ ...built(exportZip('Sales'), remote, commit), zip_base64: 'not base64!' }] },
      { built: [built(exportZip('Sales'), 'ftp://x.example/r.git', commit)] },
      { built: [built(exportZip('Sales'), `http://user:pw@${new URL(g!.baseUrl).host}/r.git`, commit)] },
      { built: [built(exportZip('Sales'), remote, 'abc')] },
      { built: [built(exportZip('Sales'), remote, commit)], sources: [{ kind: 'backup', backup_id: randomUUID() }] },
    ]) {
      const r = await admin('POST', `${V2}/candidates/${candidate}/artifacts`, body);
      expect(r.status, JSON.stringify(body).slice(0, 200)).toBe(400);
    }
  });
});
