import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { capturedLogs, createHarness, waitFor, type Harness } from '../support/harness.ts';
import type { SupersetClient } from '../support/superset/fixtures.ts';
import type { SourceFixture } from '../dashboard-migration/support.ts';
import { buildSource, client, enabled, gitea, OtherClone, registerEnvironment, renameDashboard, setIdentity, userWith } from './support.ts';
import { uniquePrefix } from '../support/environments.ts';

// Git per dashboard against a real Gitea (built from its Go module by scripts/gitea/setup.sh and
// started by global setup) and a real Superset 6.1.0 (instance a): configs, the token's
// secrecy, init, sync, status, batch status, diff, history, commit, push, pull, real conflicts
// made by a second clone and resolved each way, abort and continue.
//
// No test reads what another left: the story of one repository (init, sync, commit, push) is made
// in steps, each once by whichever test needs it first; every test that changes a repository
// further (a rename, a pull, each conflict, a lost working copy, a broken one) has a dashboard and
// repository of its own, so `vitest run -t '<one test>'` passes alone and in any order.
const on = enabled();
const P = uniquePrefix('g');
/** Clones, pulls and merges against Gitea take long on a busy machine: a bound for hangs, far above any run's time, never a measure of speed. */
const CONFLICT_TIMEOUT_MS = 300_000;
let h: Harness;
let a: SupersetClient;
let envA: string;
let src: SourceFixture;
const responses: string[] = [];

/** Each test's own dashboard (the index into src.dashboards; titles are `${P} sales <index + 1>`). */
const D = { story: 0, never: 1, rename: 2, pull: 3, theirs: 4, ours: 5, abort: 6, lost: 7, broken: 8 } as const;
const dashOf = (k: number) => src.dashboards[k]!.id;

/** Made once, by whichever test asks first. */
const once = <T>(make: () => Promise<T>) => {
  let made: Promise<T> | undefined;
  return () => (made ??= make());
};

const admin = async (m: string, p: string, o: Record<string, unknown> = {}) => {
  const r = await h.request(m, p, { ...o, token: h.adminToken });
  responses.push(r.text);
  return r;
};
const G = (id: number, op: string) => `/api/git/dashboards/${id}/${op}`;

beforeAll(async () => {
  if (!on) return;
  h = await createHarness({ worker: true }); // sync reads the companions in the worker
  a = await client('a');
  src = await buildSource(a, P, path.join(inject('runDir'), P), { dashboards: Object.keys(D).length });
  envA = await registerEnvironment(h, 'a', `${P}-a`);
}, 240_000);
afterAll(async () => h?.close());

/** The Gitea config every repository here uses: its creation's answer. */
const gitConfig = once(async () => {
  const g = gitea()!;
  return admin('POST', '/api/git/configs', {
    json: { name: `${P}-gitea`, provider: 'gitea', base_url: `${g.baseUrl}/`, owner: g.username, pat: g.token },
  });
});
const theConfigId = async (): Promise<string> => {
  const r = await gitConfig();
  expect(r.status, r.text).toBe(201);
  return r.body.id;
};
const adaIdentity = once(() => setIdentity(h, h.adminToken, 'Ada Admin', 'ada@example.com'));

// The story of the first dashboard's repository, a step at a time; each step answers what it was answered.
const storyInit = once(async () => {
  const dash = dashOf(D.story);
  const r = await admin('POST', G(dash, 'init'), { json: { env_id: envA, config_id: await theConfigId(), create_remote: true } });
  const again = await admin('POST', G(dash, 'init'), { json: { env_id: envA, config_id: await theConfigId() } });
  return { dash, r, again, uuid: r.body.dashboard_uuid as string, remoteUrl: r.body.remote_url as string };
});
const storySync = once(async () => {
  const { dash } = await storyInit();
  const r = await admin('POST', G(dash, 'sync'), { json: { env_id: envA } });
  return { r, again: await admin('POST', G(dash, 'sync'), { json: { env_id: envA } }) };
});
const storyCommit = once(async () => {
  const { dash } = await storyInit();
  await storySync();
  // Someone without a git identity first (a new account): refused, nothing committed.
  const nobody = await userWith(h, `${P}-noid`, ['Operator']);
  const no = await h.request('POST', G(dash, 'commit'), { token: nobody, json: { env_id: envA, message: 'first export' } });
  await adaIdentity();
  const c = await admin('POST', G(dash, 'commit'), { json: { env_id: envA, message: 'first export' } });
  const again = await admin('POST', G(dash, 'commit'), { json: { env_id: envA, message: 'again' } });
  return { no, c, again, status: await admin('GET', `${G(dash, 'status')}?env_id=${envA}`) };
});
const storyPush = once(async () => {
  const { dash } = await storyInit();
  await storyCommit();
  const p = await admin('POST', G(dash, 'push'), { json: { env_id: envA } });
  return { p, status: await admin('GET', `${G(dash, 'status')}?env_id=${envA}`) };
});

/** Dashboard `k`'s repository, initialised with its remote, its export committed by Ada and pushed (once). */
const pushed = new Map<number, Promise<{ dash: number; uuid: string; remoteUrl: string }>>();
function pushedRepo(k: number) {
  const make = async () => {
    const dash = dashOf(k);
    const init = await admin('POST', G(dash, 'init'), { json: { env_id: envA, config_id: await theConfigId(), create_remote: true } });
    expect(init.status, init.text).toBe(200);
    expect((await admin('POST', G(dash, 'sync'), { json: { env_id: envA } })).status).toBe(200);
    await adaIdentity();
    const c = await admin('POST', G(dash, 'commit'), { json: { env_id: envA, message: 'first export' } });
    expect(c.body.committed, c.text).toBe(true);
    expect((await admin('POST', G(dash, 'push'), { json: { env_id: envA } })).status).toBe(200);
    return { dash, uuid: init.body.dashboard_uuid as string, remoteUrl: init.body.remote_url as string };
  };
  if (!pushed.has(k)) pushed.set(k, make());
  return pushed.get(k)!;
}
/** A second clone of a remote, in a folder of its own. */
let clones = 0;
const otherClone = () => new OtherClone(path.join(inject('runDir'), `${P}-other-${++clones}`), gitea()!);

describe.skipIf(!on)('git configs', () => {
  it('creates a gitea config with the token masked everywhere; 404 for an unknown one', async () => {
    const g = gitea()!;
    const r = await gitConfig();
    expect(r.status, r.text).toBe(201);
    expect(r.body).toMatchObject({ provider: 'gitea', base_url: g.baseUrl, owner: g.username, default_branch: 'main', pat: '********' });
    const configId = r.body.id;
    const list = await admin('GET', '/api/git/configs');
    expect(list.body.items.find((c: any) => c.id === configId).pat).toBe('********');
    const row = await h.knex('git_configs').where({ id: configId }).first();
    expect(row.pat_encrypted).not.toContain(g.token);
    expect((await admin('PUT', '/api/git/configs/00000000-0000-0000-0000-000000000000', { json: { name: 'x' } })).status).toBe(404);
    expect((await admin('POST', '/api/git/configs/nope/test')).status).toBe(404);
    expect(
      (await admin('POST', '/api/git/configs', { json: { name: 'x', provider: 'gitea', base_url: 'ftp://x', owner: 'o', pat: 't' } }))
        .status,
    ).toBe(400);
  });

  it('tests the connection: the account of a good token; 400 with the provider reason for a bad one', async () => {
    const configId = await theConfigId();
    const g = gitea()!;
    const ok = await admin('POST', `/api/git/configs/${configId}/test`);
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body).toMatchObject({ ok: true, provider: 'gitea', account: { login: g.username } });
    const bad = await admin('POST', '/api/git/configs', {
      json: { name: `${P}-bad`, provider: 'gitea', base_url: g.baseUrl, owner: g.username, pat: 'a'.repeat(40) },
    });
    const t = await admin('POST', `/api/git/configs/${bad.body.id}/test`);
    expect(t.status, t.text).toBe(400);
    expect(t.body.code).toBe('git_provider_error');
    expect(t.body.upstream_status).toBe(401);
    expect(t.body.reason).toBeTruthy();
    expect((await admin('DELETE', `/api/git/configs/${bad.body.id}`)).body).toEqual({ config_id: bad.body.id, deleted: true });
    expect((await admin('DELETE', `/api/git/configs/${bad.body.id}`)).status).toBe(404);
  });

  it('update keeps the stored token; moving base_url without it is refused (secret_required)', async () => {
    const configId = await theConfigId();
    const renamed = await admin('PUT', `/api/git/configs/${configId}`, { json: { name: `${P}-gitea-renamed`, pat: '********' } });
    expect(renamed.status, renamed.text).toBe(200);
    expect(renamed.body.pat).toBe('********');
    expect((await admin('POST', `/api/git/configs/${configId}/test`)).status).toBe(200);
    const moved = await admin('PUT', `/api/git/configs/${configId}`, { json: { base_url: 'http://127.0.0.1:9/' } });
    expect(moved.status, moved.text).toBe(400);
    expect(moved.body.code).toBe('secret_required');
    const provider = await admin('PUT', `/api/git/configs/${configId}`, { json: { provider: 'github' } });
    expect(provider.body.code).toBe('secret_required');
    expect((await h.knex('git_configs').where({ id: configId }).first()).base_url).toBe(gitea()!.baseUrl);
  });

  it('lists repositories (gitea only) and creates one, normalised', async () => {
    const configId = await theConfigId();
    const created = await admin('POST', `/api/git/configs/${configId}/repositories`, { json: { name: `${P}-made`, private: true } });
    expect(created.status, created.text).toBe(201);
    expect(created.body).toEqual({
      name: `${P}-made`,
      full_name: `${gitea()!.username}/${P}-made`,
      clone_url: `${gitea()!.baseUrl}/${gitea()!.username}/${P}-made.git`,
      private: true,
      default_branch: 'main',
    });
    const again = await admin('POST', `/api/git/configs/${configId}/repositories`, { json: { name: `${P}-made` } });
    expect(again.status).toBe(400);
    expect(again.body.upstream_status).toBe(409);
    const list = await admin('GET', `/api/git/configs/${configId}/repositories`);
    expect(list.status, list.text).toBe(200);
    expect(list.body.items).toContainEqual(created.body);
    const gh = await admin('POST', '/api/git/configs', {
      json: { name: `${P}-gh`, provider: 'github', base_url: 'https://github.com', owner: 'someone', pat: 'ghp_x' },
    });
    const refused = await admin('GET', `/api/git/configs/${gh.body.id}/repositories`);
    expect(refused.status).toBe(400);
    expect(refused.body.code).toBe('unsupported_provider');
  });
});

describe.skipIf(!on)('a repository per dashboard', () => {
  it('status is NO_REPO (not an error) before init; 404 for an unknown environment; no_repository for reads', async () => {
    const dash = dashOf(D.never);
    const s = await admin('GET', `${G(dash, 'status')}?env_id=${envA}`);
    expect(s.status, s.text).toBe(200);
    expect(s.body).toMatchObject({ status: 'NO_REPO', dashboard_id: dash, env_id: envA });
    expect(s.body.dashboard_uuid).toBe(src.dashboards[D.never]!.uuid);
    expect((await admin('GET', `${G(dash, 'status')}?env_id=00000000-0000-0000-0000-000000000000`)).status).toBe(404);
    expect((await admin('GET', `${G(999999, 'status')}?env_id=${envA}`)).status).toBe(404);
    const d = await admin('GET', `${G(dash, 'diff')}?env_id=${envA}`);
    expect(d.status).toBe(404);
    expect(d.body.code).toBe('no_repository');
  });

  it('init creates the working copy and the remote through the config, idempotently', async () => {
    const { r, again, uuid, remoteUrl } = await storyInit();
    const configId = await theConfigId();
    expect(r.status, r.text).toBe(200);
    expect(r.body).toMatchObject({ created: true, remote_created: true, branch: 'main', config_id: configId });
    expect(uuid).toBe(src.dashboards[D.story]!.uuid);
    expect(remoteUrl).toBe(`${gitea()!.baseUrl}/${gitea()!.username}/dashboard-${uuid}.git`);
    expect(again.body).toMatchObject({ created: false, remote_created: false, head: r.body.head, remote_url: remoteUrl });
    const gitConfigText = fs.readFileSync(path.join(h.config.GIT_REPOS_DIR!, uuid, '.git/config'), 'utf8');
    expect(gitConfigText).toContain(remoteUrl);
    expect(gitConfigText).not.toContain(gitea()!.token);
  });

  it('sync writes normalised YAML; syncing an unchanged dashboard changes nothing', async () => {
    const { uuid } = await storyInit();
    const { r, again } = await storySync();
    expect(r.status, r.text).toBe(200);
    expect(r.body.changed).toContain(`dashboards/${uuid}.yaml`);
    expect(r.body.changed.filter((f: string) => f.startsWith('charts/'))).toHaveLength(2);
    expect(r.body.changed).toContain('metadata.yaml');
    expect(r.body.status.status).toBe('DIRTY');
    expect(r.body.status.untracked).toEqual(r.body.changed);
    const meta = fs.readFileSync(path.join(h.config.GIT_REPOS_DIR!, uuid, 'metadata.yaml'), 'utf8');
    expect(meta).not.toMatch(/timestamp/);
    expect(again.body.changed).toEqual([]);
  });

  it('commit needs the git identity (clear 4xx), then commits; a repeated commit makes no empty commit', async () => {
    const { uuid } = await storyInit();
    const { no, c, again, status: s } = await storyCommit();
    expect(no.status, no.text).toBe(400);
    expect(no.body.code).toBe('git_identity_required');
    expect(c.status, c.text).toBe(200);
    expect(c.body.committed).toBe(true);
    expect(c.body.files).toContain(`dashboards/${uuid}.yaml`);
    expect(again.body).toEqual({ committed: false, commit: c.body.commit, files: [] });
    expect(s.body).toMatchObject({ status: 'AHEAD', ahead: 2, behind: 0, head: c.body.commit, staged: [], modified: [], untracked: [] });
  });

  it('push sends the token through onAuth only; status is then CLEAN', async () => {
    const { uuid, remoteUrl } = await storyInit();
    const { p, status: s } = await storyPush();
    expect(p.status, p.text).toBe(200);
    expect(p.body).toMatchObject({ pushed: true, remote_url: remoteUrl });
    expect(s.body).toMatchObject({ status: 'CLEAN', ahead: 0, behind: 0 });
    const o = otherClone();
    await o.clone(remoteUrl);
    expect(o.read(`dashboards/${uuid}.yaml`)).toContain(`dashboard_title: ${P} sales ${D.story + 1}`);
  });

  it('a change made in Superset shows as one readable hunk; history lists commits with their files', async () => {
    const { dash, uuid } = await pushedRepo(D.rename);
    await renameDashboard(a, dash, `${P} sales one`);
    const sync = await admin('POST', G(dash, 'sync'), { json: { env_id: envA } });
    expect(sync.body.changed).toEqual([`dashboards/${uuid}.yaml`]);
    expect(sync.body.status).toMatchObject({ status: 'DIRTY', modified: [`dashboards/${uuid}.yaml`] });
    const d = await admin('GET', `${G(dash, 'diff')}?env_id=${envA}`);
    expect(d.status, d.text).toBe(200);
    expect(d.body.to).toBeNull();
    expect(d.body.files).toHaveLength(1);
    const patch: string = d.body.files[0].patch;
    expect(patch).toContain(`-dashboard_title: ${P} sales ${D.rename + 1}`);
    expect(patch).toContain(`+dashboard_title: ${P} sales one`);
    expect(patch.match(/^@@/gm)).toHaveLength(1);
    const c = await admin('POST', G(dash, 'commit'), { json: { env_id: envA, message: 'Rename the dashboard' } });
    const hist = await admin('GET', `${G(dash, 'history')}?env_id=${envA}&limit=10`);
    expect(hist.status, hist.text).toBe(200);
    expect(hist.body.items.map((i: any) => i.message)).toEqual(['Rename the dashboard', 'first export', 'Start the dashboard repository']);
    expect(hist.body.items[0]).toMatchObject({
      commit: c.body.commit,
      author: { name: 'Ada Admin', email: 'ada@example.com' },
      files: [`dashboards/${uuid}.yaml`],
    });
    const between = await admin('GET', `${G(dash, 'diff')}?env_id=${envA}&from=HEAD~1&to=HEAD`);
    expect(between.body.files.map((f: any) => [f.path, f.change])).toEqual([[`dashboards/${uuid}.yaml`, 'modified']]);
    expect((await admin('GET', `${G(dash, 'diff')}?env_id=${envA}&from=deadbeef`)).body.code).toBe('unknown_ref');
    expect((await admin('GET', `${G(dash, 'diff')}?env_id=${envA}&from=a..b`)).status).toBe(400);
    expect((await admin('POST', G(dash, 'push'), { json: { env_id: envA } })).status).toBe(200);
  });

  it('an operation waits while another process holds the working copy (database lock)', async () => {
    const { dash, uuid } = await storyInit();
    await storyCommit(); // the identity set, so the commit below gets past its own checks to the lock
    // The order of events, not their times: the lock is held, the commit waits for it, the holder
    // lets go, the commit answers. Each step waits for the one before, so load cannot reorder them.
    const order: string[] = [];
    let held!: () => void;
    const holding = new Promise<void>((resolve) => (held = resolve));
    const waiting = async () =>
      Number(
        (await h.knex.raw(`select count(*)::int as n from pg_locks where locktype = 'advisory' and classid = ? and not granted`, [0x6769]))
          .rows[0].n,
      ) > 0;
    const holder = h.knex.transaction(async (trx) => {
      await trx.raw('select pg_advisory_xact_lock(?, hashtext(?))', [0x6769, uuid]);
      held();
      await waitFor(async () => (await waiting()) || undefined, 60_000, 'the commit waiting for the working copy');
      order.push('released');
    });
    await holding;
    const c = await admin('POST', G(dash, 'commit'), { json: { env_id: envA, message: 'nothing' } });
    order.push('answered');
    await holder;
    expect(c.status, c.text).toBe(200);
    expect(order).toEqual(['released', 'answered']);
    // Reads share the lock with each other but wait for a writer too.
    const reads = await Promise.all([1, 2, 3].map(() => admin('GET', `${G(dash, 'status')}?env_id=${envA}`)));
    expect(reads.map((r) => r.status)).toEqual([200, 200, 200]);
  });

  it(
    "pull sets the caller's git identity first: the merge commit it makes carries the caller's name and e-mail",
    async () => {
      const { dash, uuid, remoteUrl } = await pushedRepo(D.pull);
      // The remote gains a file while the working copy gains a commit by Ada: the pull must merge.
      const o = otherClone();
      await o.clone(remoteUrl);
      await o.commitAndPush('NOTES.md', 'Notes kept beside the dashboard\n', 'Add notes on the remote');
      await renameDashboard(a, dash, `${P} sales before pull`);
      await admin('POST', G(dash, 'sync'), { json: { env_id: envA } });
      const local = await admin('POST', G(dash, 'commit'), { json: { env_id: envA, message: 'Rename before the pull' } });
      expect(local.body.committed, local.text).toBe(true);
      // Another person pulls: the merge is theirs, not the last committer's (the working copy's config held Ada).
      const puller = await userWith(h, `${P}-puller`, ['Operator']);
      await setIdentity(h, puller, 'Pat Puller', 'pat@example.com');
      const pull = await h.request('POST', G(dash, 'pull'), { token: puller, json: { env_id: envA } });
      expect(pull.status, pull.text).toBe(200);
      expect(pull.body).toMatchObject({ status: 'merged', conflicts: [] });
      const hist = await admin('GET', `${G(dash, 'history')}?env_id=${envA}&limit=1`);
      expect(hist.body.items[0]).toMatchObject({ commit: pull.body.commit, message: "Merge remote-tracking branch 'origin/main'" });
      expect(hist.body.items[0].author).toEqual({ name: 'Pat Puller', email: 'pat@example.com' });
      const config = fs.readFileSync(path.join(h.config.GIT_REPOS_DIR!, uuid, '.git/config'), 'utf8');
      expect(config).toMatch(/name = Pat Puller/);
      expect(config).toMatch(/email = pat@example.com/);
      expect((await admin('POST', G(dash, 'push'), { json: { env_id: envA } })).status).toBe(200);
    },
    CONFLICT_TIMEOUT_MS,
  );

  /** Dashboard `k`'s pushed repository, renamed on the remote and in Superset alike, pulled into a conflict. */
  async function makeConflict(k: number, n: number) {
    const { dash, uuid, remoteUrl } = await pushedRepo(k);
    const o = otherClone();
    await o.clone(remoteUrl);
    const file = `dashboards/${uuid}.yaml`;
    const text = o.read(file).replace(/^dashboard_title: .*$/m, `dashboard_title: remote title ${n}`);
    await o.commitAndPush(file, text, `Remote rename ${n}`);
    await renameDashboard(a, dash, `local title ${n}`);
    await admin('POST', G(dash, 'sync'), { json: { env_id: envA } });
    await admin('POST', G(dash, 'commit'), { json: { env_id: envA, message: `Local rename ${n}` } });
    const pull = await admin('POST', G(dash, 'pull'), { json: { env_id: envA } });
    expect(pull.status, pull.text).toBe(200);
    expect(pull.body).toMatchObject({ status: 'conflict', conflicts: [file] });
    return { dash, uuid, file };
  }

  it(
    'a real conflict: merge status shows both sides; markers and invalid YAML are refused; theirs + continue commits the merge',
    async () => {
      const { dash, file } = await makeConflict(D.theirs, 1);
      const s = await admin('GET', `${G(dash, 'status')}?env_id=${envA}`);
      expect(s.body).toMatchObject({ status: 'MERGING', has_unfinished_merge: true, conflicted: [file] });
      const ms = await admin('GET', `${G(dash, 'merge/status')}?env_id=${envA}`);
      expect(ms.status, ms.text).toBe(200);
      expect(ms.body.has_unfinished_merge).toBe(true);
      const c = ms.body.conflicts[0];
      expect(c.path).toBe(file);
      expect(c.ours).toContain('dashboard_title: local title 1');
      expect(c.theirs).toContain('dashboard_title: remote title 1');
      expect(c.working).toMatch(/^<{7} /m);
      const sync = await admin('POST', G(dash, 'sync'), { json: { env_id: envA } });
      expect(sync.status).toBe(409);
      expect(sync.body.code).toBe('merge_in_progress');
      const markers = await admin('POST', G(dash, 'merge/resolve'), {
        json: { env_id: envA, resolutions: [{ path: file, strategy: 'content', content: c.working }] },
      });
      expect(markers.status).toBe(400);
      expect(markers.text).toContain('conflict markers');
      const yaml = await admin('POST', G(dash, 'merge/resolve'), {
        json: { env_id: envA, resolutions: [{ path: file, strategy: 'content', content: 'a: [1,\n' }] },
      });
      expect(yaml.status).toBe(400);
      expect(yaml.text).toContain('not valid YAML');
      const early = await admin('POST', G(dash, 'merge/continue'), { json: { env_id: envA } });
      expect(early.status).toBe(409);
      expect(early.body.code).toBe('unresolved_conflicts');
      const r = await admin('POST', G(dash, 'merge/resolve'), {
        json: { env_id: envA, resolutions: [{ path: file, strategy: 'theirs' }] },
      });
      expect(r.status, r.text).toBe(200);
      expect(r.body.remaining).toEqual([]);
      expect(r.body.resolved[0].content).toContain('dashboard_title: remote title 1');
      const cont = await admin('POST', G(dash, 'merge/continue'), { json: { env_id: envA, message: 'Take the remote title' } });
      expect(cont.status, cont.text).toBe(200);
      expect(cont.body.status).toBe('committed');
      expect(cont.body.commit).toMatch(/^[0-9a-f]{40}$/);
      const after = await admin('GET', `${G(dash, 'status')}?env_id=${envA}`);
      expect(after.body).toMatchObject({ status: 'AHEAD', ahead: 2, has_unfinished_merge: false });
      const hist = await admin('GET', `${G(dash, 'history')}?env_id=${envA}&limit=1`);
      expect(hist.body.items[0].message).toBe('Take the remote title');
      expect((await admin('POST', G(dash, 'push'), { json: { env_id: envA } })).status).toBe(200);
    },
    CONFLICT_TIMEOUT_MS,
  );

  it(
    'ours keeps the local side; content takes a hand-written resolution',
    async () => {
      const { dash, uuid, file } = await makeConflict(D.ours, 2);
      await admin('POST', G(dash, 'merge/resolve'), { json: { env_id: envA, resolutions: [{ path: file, strategy: 'ours' }] } });
      await admin('POST', G(dash, 'merge/continue'), { json: { env_id: envA, message: 'Keep ours' } });
      expect(fs.readFileSync(path.join(h.config.GIT_REPOS_DIR!, uuid, file), 'utf8')).toContain('dashboard_title: local title 2');
      expect((await admin('POST', G(dash, 'push'), { json: { env_id: envA } })).status).toBe(200);

      await makeConflict(D.ours, 3);
      const ms = await admin('GET', `${G(dash, 'merge/status')}?env_id=${envA}`);
      const content = ms.body.conflicts[0].ours.replace(/^dashboard_title: .*$/m, 'dashboard_title: agreed title');
      const r = await admin('POST', G(dash, 'merge/resolve'), {
        json: { env_id: envA, resolutions: [{ path: file, strategy: 'content', content }] },
      });
      expect(r.status, r.text).toBe(200);
      await admin('POST', G(dash, 'merge/continue'), { json: { env_id: envA } });
      expect(fs.readFileSync(path.join(h.config.GIT_REPOS_DIR!, uuid, file), 'utf8')).toContain('dashboard_title: agreed title');
      expect((await admin('POST', G(dash, 'push'), { json: { env_id: envA } })).status).toBe(200);
    },
    CONFLICT_TIMEOUT_MS,
  );

  it(
    'abort restores the state before the pull',
    async () => {
      const { dash, uuid, file } = await makeConflict(D.abort, 4);
      const before = (await admin('GET', `${G(dash, 'merge/status')}?env_id=${envA}`)).body.ours;
      const ab = await admin('POST', G(dash, 'merge/abort'), { json: { env_id: envA } });
      expect(ab.status, ab.text).toBe(200);
      expect(ab.body).toEqual({ status: 'aborted', head: before });
      expect(fs.readFileSync(path.join(h.config.GIT_REPOS_DIR!, uuid, file), 'utf8')).toContain('dashboard_title: local title 4');
      const s = await admin('GET', `${G(dash, 'status')}?env_id=${envA}`);
      expect(s.body).toMatchObject({ has_unfinished_merge: false, staged: [], modified: [], untracked: [] });
      expect((await admin('POST', G(dash, 'merge/abort'), { json: { env_id: envA } })).body.code).toBe('no_merge_in_progress');
      const ms = await admin('GET', `${G(dash, 'merge/status')}?env_id=${envA}`);
      expect(ms.body).toEqual({ has_unfinished_merge: false, ours: null, theirs: null, conflicts: [] });
    },
    CONFLICT_TIMEOUT_MS,
  );
});

describe.skipIf(!on)('a lost working copy', () => {
  it('init again adopts the history on the remote instead of starting a second one', async () => {
    const { dash, uuid, remoteUrl } = await pushedRepo(D.lost);
    // The remote moves on from another clone, then the working copy is lost.
    const remote = otherClone();
    await remote.clone(remoteUrl);
    await remote.commitAndPush('NOTES.md', 'Kept on the remote only\n', 'Note on the remote');
    fs.rmSync(path.join(h.config.GIT_REPOS_DIR!, uuid), { recursive: true, force: true });
    const lost = await admin('GET', `${G(dash, 'status')}?env_id=${envA}`);
    expect(lost.body.status).toBe('NO_REPO');
    const r = await admin('POST', G(dash, 'init'), { json: { env_id: envA, config_id: await theConfigId() } });
    expect(r.status, r.text).toBe(200);
    expect(r.body).toMatchObject({ created: true, adopted_remote_history: true, remote_url: remoteUrl });
    expect(r.body.head).toBe(await remote.head());
    const s = await admin('GET', `${G(dash, 'status')}?env_id=${envA}`);
    expect(s.body).toMatchObject({ status: 'CLEAN', ahead: 0, behind: 0, head: r.body.head });
    const hist = await admin('GET', `${G(dash, 'history')}?env_id=${envA}&limit=100`);
    expect(hist.body.items.map((i: any) => i.message)).toEqual(['Note on the remote', 'first export', 'Start the dashboard repository']);
  });
});

describe.skipIf(!on)('batch status', () => {
  it('deduplicates, cuts at 100, and marks one broken repository ERROR without failing the others', async () => {
    const { dash } = await storyInit();
    const [dash2, never] = [dashOf(D.broken), dashOf(D.never)];
    const init2 = await admin('POST', G(dash2, 'init'), { json: { env_id: envA } });
    expect(init2.status, init2.text).toBe(200);
    const r = await admin('POST', '/api/git/status/batch', {
      json: { env_id: envA, dashboard_ids: [dash, dash2, dash, never] },
    });
    expect(r.status, r.text).toBe(200);
    // Deduplicated (an object keyed by id, which JSON orders by number).
    expect(Object.keys(r.body.items)).toEqual([dash, dash2, never].sort((x, y) => x - y).map(String));
    expect(r.body.truncated).toBe(false);
    expect(r.body.items[String(dash2)].status).toBe('CLEAN');
    expect(r.body.items[String(never)].status).toBe('NO_REPO');

    const many = Array.from({ length: 150 }, (_, i) => (i === 0 ? dash : 900000 + i));
    const capped = await admin('POST', '/api/git/status/batch', { json: { env_id: envA, dashboard_ids: many } });
    expect(capped.status).toBe(200);
    expect(Object.keys(capped.body.items)).toHaveLength(100);
    expect(capped.body.truncated).toBe(true);
    expect(capped.body.items['900001']).toMatchObject({ status: 'ERROR', error: { status: 404 } });

    // A working copy broken on disk: its status is ERROR, the others are still answered.
    const uuid2 = init2.body.dashboard_uuid;
    fs.writeFileSync(path.join(h.config.GIT_REPOS_DIR!, uuid2, '.git/HEAD'), 'ref: refs/heads/\u0000broken\n');
    fs.rmSync(path.join(h.config.GIT_REPOS_DIR!, uuid2, '.git/objects'), { recursive: true, force: true });
    const broken = await admin('POST', '/api/git/status/batch', { json: { env_id: envA, dashboard_ids: [dash, dash2] } });
    expect(broken.status, broken.text).toBe(200);
    expect(broken.body.items[String(dash2)].status).toBe('ERROR');
    expect(broken.body.items[String(dash)].status).not.toBe('ERROR');
    // Also when the broken one is the batch's only readable dashboard, or its only dashboard at all.
    const alone = await admin('POST', '/api/git/status/batch', { json: { env_id: envA, dashboard_ids: [dash2, 999999] } });
    expect(alone.status, alone.text).toBe(200);
    expect(alone.body.items[String(dash2)]).toMatchObject({ status: 'ERROR', dashboard_uuid: uuid2, error: { code: 'internal_error' } });
    expect(alone.body.items['999999']).toMatchObject({ status: 'ERROR', error: { status: 404 } });
    const single = await admin('POST', '/api/git/status/batch', { json: { env_id: envA, dashboard_ids: [dash2] } });
    expect(single.status, single.text).toBe(200);
    expect(single.body.items[String(dash2)].status).toBe('ERROR');
    // The single status of that repository fails (it is not a batch); a commit to it is a 500 problem naming the route.
    expect((await admin('GET', `${G(dash2, 'status')}?env_id=${envA}`)).status).toBe(500);
    const commit = await admin('POST', G(dash2, 'commit'), { json: { env_id: envA, message: 'into a broken copy' } });
    expect(commit.status, commit.text).toBe(500);
    expect(commit.headers.get('content-type')).toMatch(/application\/problem\+json/);
    expect(commit.body).toMatchObject({ status: 500, code: 'git_operation_failed', route: `/api/git/dashboards/${dash2}/commit` });
    // History of that repository: an unexpected failure is a 500 naming the route.
    const hist = await admin('GET', `${G(dash2, 'history')}?env_id=${envA}`);
    expect(hist.status).toBe(500);
    expect(hist.body.route).toBe(`/api/git/dashboards/${dash2}/history`);
    expect((await admin('POST', '/api/git/status/batch', { json: { env_id: envA, dashboard_ids: [] } })).status).toBe(400);
  });
});

describe.skipIf(!on)('secrecy', () => {
  it('no token in any answer, log line or task parameter', async () => {
    // The token at work here too (the config, its test, a push), whether or not other tests ran first.
    await storyPush();
    expect((await admin('POST', `/api/git/configs/${await theConfigId()}/test`)).status).toBe(200);
    const token = gitea()!.token;
    expect(responses.join('\n')).not.toContain(token);
    expect(capturedLogs.join('\n')).not.toContain(token);
    const rows = await h.knex('tasks').select('params', 'workflow_input', 'result');
    expect(JSON.stringify(rows)).not.toContain(token);
  });
});
