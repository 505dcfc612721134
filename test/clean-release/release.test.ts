import path from 'node:path';
import knexFactory from 'knex';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { filesFromExport } from '../../lib/git/dashboard-files.ts';
import { portableDigest } from '../../lib/clean-release/digest.ts';
import { createHarness, type Harness } from '../support/harness.ts';
import { createDatabase, createDataset, createDashboard, createTableChart, type SupersetClient } from '../support/superset/fixtures.ts';
import type { SourceFixture } from '../dashboard-migration/support.ts';
import {
  buildSource,
  client,
  dashboardTitle,
  enabled,
  gitea,
  registerEnvironment,
  renameDashboard,
  setIdentity,
  targetDatabase,
  userWith,
  waitTask,
} from '../git/support.ts';
import { uniquePrefix } from '../support/environments.ts';

// A clean release end to end against two real Supersets (a → b) and the real Gitea: a candidate
// from a pinned commit (its remote on Gitea) and a backup (a dashboard on a PostgreSQL database),
// blocked by the database host outside the registry, unblocked by trusting it, checked by a
// workflow, refused approval by its author, approved by a second release manager through the
// release workflow's update, published into b (digests verified there) and revoked (b as before).
const on = enabled();
const P = uniquePrefix('r');
let h: Harness;
let a: SupersetClient;
let b: SupersetClient;
let envA: string;
let envB: string;
let src: SourceFixture;
let gitDash: number;
let gitUuid: string;
let commit: string;
let backupId: string;
let pgDashUuid: string;
let author: string; // a release manager who registers
let manager: string; // another release manager
let viewer: string;
let pgDbName: string;
let pgTargetDbId: number;

// The harness's own request-as-this-person (h is made in beforeAll, so it is read at call time).
const as = (token: string) => h.as(token);
const V2 = '/api/v2/clean-release';

function withDatabase(url: string, db: string): string {
  const u = new URL(url);
  u.pathname = `/${db}`;
  return u.toString();
}

async function exportFiles(c: SupersetClient, id: number) {
  return filesFromExport(new Uint8Array(await c.exportBundle('dashboard', [id])));
}

beforeAll(async () => {
  if (!on) return;
  h = await createHarness({ worker: true });
  [a, b] = await Promise.all([client('a'), client('b')]);
  const dir = path.join(inject('runDir'), P);
  const admin = as(h.adminToken);
  src = await buildSource(a, P, dir, { dashboards: 1 });
  gitDash = src.dashboards[0]!.id;
  const warehouse = await targetDatabase(b, P, dir);
  envA = await registerEnvironment(h, 'a', `${P}-a`);
  envB = await registerEnvironment(h, 'b', `${P}-b`);
  author = await userWith(h, `${P}-rm1`, ['ReleaseManager']);
  manager = await userWith(h, `${P}-rm2`, ['ReleaseManager']);
  viewer = await userWith(h, `${P}-v`, ['Viewer']);

  // The git source: the dashboard's repository with its remote on Gitea, pinned at a commit.
  const g = gitea()!;
  const cfg = await admin('POST', '/api/git/configs', {
    json: { name: `${P}-gitea`, provider: 'gitea', base_url: g.baseUrl, owner: g.username, pat: g.token },
  });
  expect(cfg.status, cfg.text).toBe(201);
  await setIdentity(h, h.adminToken, 'Ada Admin', 'ada@example.com');
  const G = (op: string) => `/api/git/dashboards/${gitDash}/${op}`;
  const init = await admin('POST', G('init'), { json: { env_id: envA, config_id: cfg.body.id, create_remote: true } });
  expect(init.status, init.text).toBe(200);
  gitUuid = init.body.dashboard_uuid;
  // b already holds an older version of this dashboard (so the publish replaces it, and revoke brings it back).
  const m = await admin('PUT', `/api/environments/${envA}/db-mappings/${envB}`, {
    json: { mappings: [{ source_database_id: src.database.id, target_database_id: warehouse.id }] },
  });
  expect(m.status, m.text).toBe(200);
  const mig = await admin('POST', '/api/dashboards/migrate', {
    json: { source_env_id: envA, target_env_id: envB, dashboard_ids: [gitDash] },
  });
  expect((await waitTask(h, mig.body.task_id)).status).toBe('SUCCEEDED');
  await renameDashboard(a, gitDash, `${P} release version`);
  await admin('POST', G('sync'), { json: { env_id: envA } });
  commit = (await admin('POST', G('commit'), { json: { env_id: envA, message: 'Release version' } })).body.commit;
  expect((await admin('POST', G('push'), { json: { env_id: envA } })).status).toBe(200);

  // The backup source: a dashboard on a PostgreSQL database whose host is `localhost`.
  pgDbName = `${P}_rel`;
  const adminUrl = inject('pgAdminUrl');
  const pgAdmin = knexFactory({ client: 'pg', connection: adminUrl, pool: { min: 0, max: 1 } });
  await pgAdmin.raw(`create database ${pgDbName}`);
  await pgAdmin.destroy();
  const dataUrl = withDatabase(adminUrl, pgDbName);
  const data = knexFactory({ client: 'pg', connection: dataUrl, pool: { min: 0, max: 1 } });
  await data.raw('create table public.orders (id integer, region text, amount numeric)');
  await data.destroy();
  const uri = dataUrl.replace(/^postgres(ql)?:/, 'postgresql:').replace('127.0.0.1', 'localhost');
  const pgDb = await createDatabase(a, { name: pgDbName, sqlalchemyUri: uri });
  pgTargetDbId = (await createDatabase(b, { name: `${pgDbName}_b`, sqlalchemyUri: uri })).id;
  const ds = await createDataset(a, { database: pgDb.id, tableName: 'orders', schema: 'public' });
  const chart = await createTableChart(a, { name: `${P} orders`, datasetId: ds.id, columns: ['id', 'region', 'amount'] });
  const pgDash = await createDashboard(a, { title: `${P} orders`, slug: `${P}-orders`, charts: [chart] });
  pgDashUuid = pgDash.uuid!;
  const bk = await admin('POST', '/api/dashboards/backup', { json: { env_id: envA, dashboard_ids: [pgDash.id] } });
  const bt = await waitTask(h, bk.body.task_id);
  expect(bt.status, JSON.stringify(bt.result)).toBe('SUCCEEDED');
  backupId = bt.result.items[0].backup_id;

  // The registry trusts the git server and Superset a, not the database host.
  const hosts = [new URL(g.baseUrl).hostname, new URL((await admin('GET', `/api/environments/${envA}`)).body.base_url).hostname];
  expect((await admin('PUT', `${V2}/registry`, { json: { hosts } })).status).toBe(200);
}, 400_000);
afterAll(async () => h?.close());

// The candidate's story, each step made once by whichever test needs it first (and the steps before it by it):
// `vitest run -t '<one test>'` makes the story up to that test itself; each test asserts what its step answered.
const once = <T>(make: () => Promise<T>) => {
  let made: Promise<T> | undefined;
  return () => (made ??= make());
};

const registered = once(async () => {
  const r = await as(author)('POST', `${V2}/candidates`, {
    json: {
      name: `${P} release`,
      target_env_id: envB,
      sources: [
        { kind: 'git', dashboard_uuid: gitUuid, commit },
        { kind: 'backup', backup_id: backupId },
      ],
      db_mappings: [{ database_name: pgDbName, target_database_id: pgTargetDbId }],
    },
  });
  expect(r.status, r.text).toBe(201);
  const id: string = r.body.id;
  const imp = await as(author)('POST', `${V2}/candidates/${id}/artifacts`, { json: {} });
  const man = await as(author)('POST', `${V2}/candidates/${id}/manifest`);
  return { id, r, imp, man };
});

/** Prepared once blocked by the database host, then trusting it (the registry keeps it for the rest of the file). */
const prepared = once(async () => {
  const { id } = await registered();
  const blocked = await as(author)('POST', `${V2}/candidates/${id}/prepare`);
  const checksWhileBlocked = await as(author)('POST', `${V2}/candidates/${id}/checks`);
  const reg = await as(h.adminToken)('GET', `${V2}/registry`);
  const trusted = await as(h.adminToken)('PUT', `${V2}/registry`, { json: { hosts: [...reg.body.hosts, 'localhost'] } });
  const ok = await as(author)('POST', `${V2}/candidates/${id}/prepare`);
  return { id, blocked, checksWhileBlocked, trusted, ok };
});

const checked = once(async () => {
  const { id, ok } = await prepared();
  expect(ok.body.status, ok.text).toBe('prepared');
  const s = await as(author)('POST', `${V2}/candidates/${id}/checks`);
  expect(s.status, s.text).toBe(202);
  return { id, s, task: await waitTask(h, s.body.task_id) };
});

const approved = once(async () => {
  const { id, task } = await checked();
  expect(task.status, JSON.stringify(task.result ?? task.error)).toBe('SUCCEEDED');
  const self = await as(author)('POST', `${V2}/candidates/${id}/approve`, { json: {} });
  const byViewer = await as(viewer)('POST', `${V2}/candidates/${id}/approve`, { json: {} });
  const early = await as(manager)('POST', `${V2}/candidates/${id}/publish`, { json: {} });
  const ok = await as(manager)('POST', `${V2}/candidates/${id}/approve`, { json: { comment: 'ship it' } });
  const twice = await as(manager)('POST', `${V2}/candidates/${id}/approve`, { json: {} });
  return { id, self, byViewer, early, ok, twice };
});

const published = once(async () => {
  const { id, ok } = await approved();
  expect(ok.status, ok.text).toBe(200);
  const before = await dashboardTitle(b, gitUuid);
  const pub = await as(manager)('POST', `${V2}/candidates/${id}/publish`, { json: {} });
  expect(pub.status, pub.text).toBe(200);
  return { id, before, pub, task: await waitTask(h, pub.body.task_id) };
});

describe.skipIf(!on)('a clean release', () => {
  it('registers a draft, imports artifacts with digests and hosts, builds a digested manifest', async () => {
    const { id: candidateId, r, imp, man } = await registered();
    expect(r.body).toMatchObject({ state: 'draft', workflow_id: `release-${r.body.id}` });
    expect(
      (
        await as(viewer)('POST', `${V2}/candidates`, {
          json: { name: 'x', target_env_id: envB, sources: [{ kind: 'backup', backup_id: backupId }] },
        })
      ).status,
    ).toBe(403);

    expect(imp.status, imp.text).toBe(200);
    expect(imp.body.artifacts).toHaveLength(2);
    const pg = imp.body.artifacts.find((x: any) => x.dashboard_uuid === pgDashUuid);
    expect(pg.hosts).toContainEqual(expect.objectContaining({ host: 'localhost', role: 'database' }));
    const git = imp.body.artifacts.find((x: any) => x.dashboard_uuid === gitUuid);
    expect(git.hosts).toContainEqual(expect.objectContaining({ role: 'source', host: new URL(gitea()!.baseUrl).hostname }));
    expect(git.sha256).toMatch(/^[0-9a-f]{64}$/);

    expect(man.status, man.text).toBe(201);
    expect(man.body.digest).toMatch(/^[0-9a-f]{64}$/);
    expect(man.body.body.artifacts.map((x: any) => x.sha256).sort()).toEqual(imp.body.artifacts.map((x: any) => x.sha256).sort());
    expect(candidateId).toBe(r.body.id);
  });

  it('is blocked by a database host outside the registry, one violation naming where it appears; trusting it unblocks', async () => {
    const { blocked: p, checksWhileBlocked, trusted, ok } = await prepared();
    expect(p.status, p.text).toBe(200);
    expect(p.body.status).toBe('blocked');
    const blocking = p.body.violations.filter((v: any) => v.blocking);
    expect(blocking).toHaveLength(1);
    expect(blocking[0]).toMatchObject({ rule: 'trusted_database_hosts', host: 'localhost' });
    expect(blocking[0].where).toContain('databases/');
    expect(blocking[0].artifact).toContain(pgDashUuid);
    expect(checksWhileBlocked.status).toBe(409); // blocked: no checks

    expect(trusted.status).toBe(200);
    expect(ok.body).toMatchObject({ status: 'prepared', violations: [] });
    expect(ok.body.manifest_id).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('checks run as a workflow; the check and the report show the same persisted run', async () => {
    const { id: candidateId, s, task } = await checked();
    expect(task.status, JSON.stringify(task.result ?? task.error)).toBe('SUCCEEDED');
    expect(task.type).toBe('release_check');
    const c = await as(viewer)('GET', `${V2}/checks/${s.body.check_id}`);
    expect(c.status, c.text).toBe(200);
    expect(c.body.status, JSON.stringify(c.body.checks)).toBe('passed');
    expect(c.body.checks.map((x: any) => x.check)).toEqual(expect.arrayContaining(['digests', 'trusted_hosts', 'dry_run_migration']));
    const rep = await as(viewer)('GET', `${V2}/reports/${s.body.report_id}`);
    expect(rep.body).toEqual(c.body);
    expect((await as(viewer)('GET', `${V2}/reports/00000000-0000-4000-8000-000000000000`)).status).toBe(404);
    expect((await as(viewer)('GET', `${V2}/candidates/${candidateId}`)).body.state).toBe('checked');
  });

  it('its author cannot approve it, a viewer cannot, another release manager can (once)', async () => {
    const { id: candidateId, self, byViewer, early, ok, twice } = await approved();
    expect(self.status, self.text).toBe(403);
    expect(self.body.code).toBe('self_approval');
    expect(byViewer.status).toBe(403);
    expect(early.status, early.text).toBe(409);
    expect(early.body).toMatchObject({ code: 'invalid_state', state: 'checked' });

    expect(ok.status, ok.text).toBe(200);
    expect(ok.body).toMatchObject({
      candidate_id: candidateId,
      decision: 'approve',
      state: 'approved',
      by: `${P}-rm2`,
      comment: 'ship it',
    });
    expect(twice.status).toBe(409);
    expect(twice.body.detail).toContain('approved');
  });

  it('publish backs up what it replaces, imports the manifest into b, and b holds the manifest digests', async () => {
    const { id: candidateId, before, pub, task } = await published();
    expect(before).toBe(`${P} sales 1`);
    expect(pub.body.state).toBe('publishing');
    expect(task.status, JSON.stringify(task.result ?? task.error)).toBe('SUCCEEDED');
    expect(task.result.items).toHaveLength(2);
    for (const item of task.result.items)
      expect(item, JSON.stringify(item.differences)).toMatchObject({ status: 'published', outcome: 'succeeded', verified: true });
    expect(task.result.items.find((i: any) => i.id === gitUuid).backup_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(task.result.items.find((i: any) => i.id === pgDashUuid).backup_id).toBeNull();
    expect(await dashboardTitle(b, gitUuid)).toBe(`${P} release version`);
    const cand = await as(viewer)('GET', `${V2}/candidates/${candidateId}`);
    expect(cand.body.state).toBe('published');
    // Independently of the publish's own verification: b's export digests as the manifest says.
    const man = (await h.knex('release_manifests').where({ candidate_id: candidateId }).orderBy('created_at', 'desc').first()).body;
    for (const item of task.result.items) {
      const files = await exportFiles(b, item.target_dashboard_id);
      expect(portableDigest(files.files)).toBe(man.artifacts.find((x: any) => x.dashboard_uuid === item.id).portable_sha256);
    }
    expect(cand.body.decisions.map((d: any) => [d.action, d.by])).toEqual([
      ['approve', `${P}-rm2`],
      ['publish', `${P}-rm2`],
    ]);
  });

  it('revoke restores what was there before and removes what the publish created', async () => {
    const { id: candidateId, task: publish } = await published();
    expect(publish.status, JSON.stringify(publish.result ?? publish.error)).toBe('SUCCEEDED');
    const rv = await as(manager)('POST', `${V2}/candidates/${candidateId}/revoke`, { json: { comment: 'roll back' } });
    expect(rv.status, rv.text).toBe(200);
    const task = await waitTask(h, rv.body.task_id);
    expect(task.status, JSON.stringify(task.result ?? task.error)).toBe('SUCCEEDED');
    expect(task.result.items.map((i: any) => [i.id, i.status]).sort()).toEqual(
      [
        [gitUuid, 'revoked'],
        [pgDashUuid, 'removed'],
      ].sort(),
    );
    expect(await dashboardTitle(b, gitUuid)).toBe(`${P} sales 1`);
    expect(await dashboardTitle(b, pgDashUuid)).toBeNull();
    expect((await as(viewer)('GET', `${V2}/candidates/${candidateId}`)).body.state).toBe('revoked');
    expect((await as(manager)('POST', `${V2}/candidates/${candidateId}/revoke`, { json: {} })).status).toBe(409);
  });

  it('a digest changed after prepare fails the check; legacy paths answer like v2 with Deprecation', async () => {
    // The database host trusted as the story's prepare step leaves the registry (made here if this test runs alone).
    expect((await prepared()).trusted.status).toBe(200);
    const r = await as(author)('POST', `${V2}/candidates`, {
      json: { name: `${P} tampered`, target_env_id: envB, sources: [{ kind: 'backup', backup_id: backupId }] },
    });
    const id = r.body.id;
    await as(author)('POST', `${V2}/candidates/${id}/artifacts`, { json: {} });
    await as(author)('POST', `${V2}/candidates/${id}/manifest`);
    const legacy = await as(author)('POST', `/api/clean-release/candidates/${id}/prepare`);
    expect(legacy.status, legacy.text).toBe(200);
    expect(legacy.headers.get('deprecation')).toBe('true');
    expect(legacy.headers.get('link')).toContain(`${V2}/candidates/${id}/prepare`);
    expect(legacy.body.status).toBe('prepared');
    const v2 = await as(author)('POST', `${V2}/candidates/${id}/prepare`);
    expect(v2.body).toEqual(legacy.body);
    expect(v2.headers.get('deprecation')).toBeNull();

    // Someone changes a stored artifact after the manifest was built.
    const row = await h.knex('release_artifacts').where({ candidate_id: id }).first();
    const dashPath = Object.keys(row.files).find((p) => p.startsWith('dashboards/'))!;
    row.files[dashPath] = row.files[dashPath].replace(/dashboard_title: .*/, 'dashboard_title: Tampered');
    await h
      .knex('release_artifacts')
      .where({ candidate_id: id })
      .update({ files: JSON.stringify(row.files) });

    const s = await as(author)('POST', '/api/clean-release/checks', { json: { candidate_id: id } });
    expect(s.status, s.text).toBe(202);
    expect(s.headers.get('deprecation')).toBe('true');
    await waitTask(h, s.body.task_id);
    const c = await as(author)('GET', `/api/clean-release/checks/${s.body.check_id}`);
    expect(c.headers.get('deprecation')).toBe('true');
    expect(c.body.status).toBe('failed');
    const digests = c.body.checks.find((x: any) => x.check === 'digests');
    expect(digests.status).toBe('failed');
    expect(digests.violations[0].message).toContain('changed after the manifest was built');
    expect((await as(author)('GET', `${V2}/candidates/${id}`)).body.state).toBe('check_failed');
    const approve = await as(manager)('POST', `${V2}/candidates/${id}/approve`, { json: {} });
    expect(approve.status).toBe(409);
    expect(approve.body.state).toBe('check_failed');
    const reject = await as(manager)('POST', `${V2}/candidates/${id}/reject`, { json: { comment: 'tampered' } });
    expect(reject.status, reject.text).toBe(200);
    expect(reject.body).toMatchObject({ decision: 'reject', state: 'rejected', by: `${P}-rm2`, comment: 'tampered' });
  });
});
