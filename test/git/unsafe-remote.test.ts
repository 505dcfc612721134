// Why the fake: incidental: no Superset answer is asserted; the fake is only a registered environment.
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UnsafePathError } from '../../lib/git/confined-path.ts';
import { gitProvider } from '../../lib/git/providers.ts';
import { WorkingCopy, type Credentials } from '../../lib/git/working-copy.ts';
import { createEnvironment } from '../support/environments.ts';
import { startFakeSuperset, type FakeSuperset } from '../support/fake-superset.ts';
import { createHarness, type Harness } from '../support/harness.ts';
import { gitea, setIdentity } from './support.ts';

// Nothing is written outside a working copy. Remotes on the run's real Gitea hold what a hostile
// or careless remote could: `dashboards/<uuid>.yaml` as a symbolic link to another repository's
// `.git/config`, a tree reaching that file through `..`, a `.GIT` folder, a backslashed name and a
// submodule where a file belongs. Init and pull refuse each before anything is checked out, naming
// the path; the other repository's config keeps its bytes. A link put into a working copy by hand
// (a copy made before this rule) is never read or written through.
const author = { name: 'T', email: 't@example.com' };
const g = gitea();
const creds: Credentials | null = g ? { username: g.username, token: g.token, origin: new URL(g.baseUrl).origin } : null;

/** The repositories folder: the victim's working copy beside the attacked one, as the server keeps them. */
function reposDir(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'unsafe-remote-'));
}

async function victim(root: string): Promise<{ uuid: string; config: string; bytes: Buffer }> {
  const uuid = randomUUID();
  const wc = new WorkingCopy(path.join(root, uuid));
  await wc.init({ branch: 'main', author, readme: '# victim\n' });
  const config = path.join(root, uuid, '.git/config');
  return { uuid, config, bytes: fs.readFileSync(config) };
}

function run(cwd: string, args: string[], input?: Buffer | string): string {
  return execFileSync('git', args, {
    cwd,
    input,
    stdio: ['pipe', 'pipe', 'pipe'],
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: 'Mallory',
      GIT_AUTHOR_EMAIL: 'm@example.com',
      GIT_COMMITTER_NAME: 'Mallory',
      GIT_COMMITTER_EMAIL: 'm@example.com',
    },
  })
    .toString()
    .trim();
}

/** A scratch clone made with the git CLI, whose objects may be anything (hash-object --literally). */
class Scratch {
  readonly dir = fs.mkdtempSync(path.join(os.tmpdir(), 'scratch-'));
  constructor() {
    run(this.dir, ['init', '-q', '-b', 'main']);
  }
  blob(text: string): string {
    return run(this.dir, ['hash-object', '-w', '--stdin'], text);
  }
  /** A tree object written byte for byte: names git itself would refuse are kept. */
  tree(entries: Array<{ mode: string; name: string; oid: string }>): string {
    // In git's order (a folder sorts as its name with a slash), so only the names are unusual.
    const key = (e: { mode: string; name: string }) => Buffer.from(e.mode === TREE ? `${e.name}/` : e.name);
    const sorted = [...entries].sort((a, b) => Buffer.compare(key(a), key(b)));
    const raw = Buffer.concat(sorted.map((e) => Buffer.concat([Buffer.from(`${e.mode} ${e.name}\0`), Buffer.from(e.oid, 'hex')])));
    return run(this.dir, ['hash-object', '-t', 'tree', '--literally', '-w', '--stdin'], raw);
  }
  commit(tree: string, message: string, parent?: string): string {
    return run(this.dir, ['commit-tree', tree, ...(parent ? ['-p', parent] : []), '-m', message]);
  }
  push(url: string, commit: string): void {
    const basic = Buffer.from(`${g!.username}:${g!.token}`).toString('base64');
    run(this.dir, ['-c', `http.extraHeader=Authorization: Basic ${basic}`, 'push', '-q', '--force', url, `${commit}:refs/heads/main`]);
  }
}

async function remote(name: string): Promise<string> {
  const provider = gitProvider({ provider: 'gitea', baseUrl: g!.baseUrl, owner: g!.username, token: g!.token });
  return (await provider.createRepository({ name, private: true, defaultBranch: 'main' })).clone_url;
}

const BLOB = '100644';
const TREE = '40000';

async function refusal(p: Promise<unknown>): Promise<UnsafePathError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err, 'refused').toBeInstanceOf(UnsafePathError);
  return err as UnsafePathError;
}

describe.skipIf(!g)('a remote tree that would write outside the working copy (real Gitea)', () => {
  let root: string;
  let scratch: Scratch;
  let other: Awaited<ReturnType<typeof victim>>;
  let readme: string;

  beforeAll(async () => {
    root = reposDir();
    other = await victim(root);
    scratch = new Scratch();
    readme = scratch.blob('# dashboard\n');
  });

  /** A remote whose branch holds `entries` beside a README, and a fresh working copy's dir for it. */
  async function hostile(entries: (uuid: string) => Array<{ mode: string; name: string; oid: string }>) {
    const uuid = randomUUID();
    const url = await remote(`unsafe-${uuid.slice(0, 8)}`);
    const commit = scratch.commit(scratch.tree([{ mode: BLOB, name: 'README.md', oid: readme }, ...entries(uuid)]), 'hostile');
    scratch.push(url, commit);
    return { uuid, url, commit, dir: path.join(root, uuid) };
  }

  const linkToVictim = (uuid: string) => {
    // dashboards/<uuid>.yaml → ../../<victim>/.git/config: the victim's config, seen from the attacked working copy.
    const link = scratch.blob(`../../${other.uuid}/.git/config`);
    return [{ mode: TREE, name: 'dashboards', oid: scratch.tree([{ mode: '120000', name: `${uuid}.yaml`, oid: link }]) }];
  };

  it('init refuses a branch whose dashboards/<uuid>.yaml is a symbolic link, naming it; nothing is left and the other config is untouched', async () => {
    const r = await hostile(linkToVictim);
    const wc = new WorkingCopy(r.dir);
    const err = await refusal(wc.init({ branch: 'main', remoteUrl: r.url, author, readme: '# x\n', adopt: { creds } }));
    expect(err).toMatchObject({ status: 409, code: 'unsafe_path', path: `dashboards/${r.uuid}.yaml`, reason: 'symlink' });
    expect(err.message).toContain(`"dashboards/${r.uuid}.yaml" is a symbolic link`);
    expect(err.extra?.next_actions).toEqual([expect.objectContaining({ action: 'fix_remote' })]);
    expect(fs.existsSync(r.dir)).toBe(false);
    expect(fs.readFileSync(other.config).equals(other.bytes)).toBe(true);
  });

  it('pull refuses the link (fast-forward and merge alike): the working tree keeps its plain file and later writes stay inside', async () => {
    const uuid = randomUUID();
    const url = await remote(`unsafe-pull-${uuid.slice(0, 8)}`);
    const plain = scratch.tree([{ mode: BLOB, name: `${uuid}.yaml`, oid: scratch.blob('dashboard_title: safe\n') }]);
    const first = scratch.commit(
      scratch.tree([
        { mode: BLOB, name: 'README.md', oid: readme },
        { mode: TREE, name: 'dashboards', oid: plain },
      ]),
      'safe',
    );
    scratch.push(url, first);
    const dir = path.join(root, uuid);
    const wc = new WorkingCopy(dir);
    expect((await wc.init({ branch: 'main', remoteUrl: url, author, readme: '# x\n', adopt: { creds } })).adopted).toBe(true);

    const link = scratch.blob(`../../${other.uuid}/.git/config`);
    const linked = scratch.tree([{ mode: '120000', name: `${uuid}.yaml`, oid: link }]);
    scratch.push(
      url,
      scratch.commit(
        scratch.tree([
          { mode: BLOB, name: 'README.md', oid: readme },
          { mode: TREE, name: 'dashboards', oid: linked },
        ]),
        'link',
        first,
      ),
    );

    const ff = await refusal(wc.pull(creds, author));
    expect(ff).toMatchObject({ status: 409, path: `dashboards/${uuid}.yaml`, reason: 'symlink' });
    const file = path.join(dir, 'dashboards', `${uuid}.yaml`);
    expect(fs.lstatSync(file).isSymbolicLink()).toBe(false);
    expect(fs.readFileSync(file, 'utf8')).toBe('dashboard_title: safe\n');

    // A local commit makes it a merge: refused the same, before any merge state is written.
    await wc.writeBundle(new Map([[`dashboards/${uuid}.yaml`, 'dashboard_title: local\n']]));
    await wc.commit('local', author);
    const merge = await refusal(wc.pull(creds, author));
    expect(merge).toMatchObject({ path: `dashboards/${uuid}.yaml`, reason: 'symlink' });
    expect((await wc.mergeStatus()).has_unfinished_merge).toBe(false);
    expect(fs.readFileSync(file, 'utf8')).toBe('dashboard_title: local\n');
    await wc.writeBundle(new Map([[`dashboards/${uuid}.yaml`, 'dashboard_title: synced\n']]));
    expect(fs.readFileSync(other.config).equals(other.bytes)).toBe(true);
  });

  it('init refuses trees reaching out by `..`, a `.GIT` folder, a backslashed name or a submodule, each named', async () => {
    const config = scratch.blob('[core]\n\thooksPath = /tmp/evil\n[remote "origin"]\n\turl = http://attacker.invalid/x.git\n');
    const gitDir = () => scratch.tree([{ mode: BLOB, name: 'config', oid: config }]);
    const cases: Array<{
      name: string;
      entries: (uuid: string) => Array<{ mode: string; name: string; oid: string }>;
      path: (uuid: string) => string;
      reason: string;
    }> = [
      {
        name: '..',
        // ../<victim>/.git/config
        entries: () => [
          {
            mode: TREE,
            name: '..',
            oid: scratch.tree([{ mode: TREE, name: other.uuid, oid: scratch.tree([{ mode: TREE, name: '.git', oid: gitDir() }]) }]),
          },
        ],
        path: () => '..',
        reason: 'parent_directory',
      },
      { name: '.GIT', entries: () => [{ mode: TREE, name: '.GIT', oid: gitDir() }], path: () => '.GIT', reason: 'git_directory' },
      {
        name: 'backslashes',
        entries: () => [{ mode: BLOB, name: `..\\..\\${other.uuid}\\.git\\config`, oid: config }],
        path: () => `..\\..\\${other.uuid}\\.git\\config`,
        reason: 'separator',
      },
      {
        name: 'submodule',
        entries: (uuid) => [
          { mode: TREE, name: 'dashboards', oid: scratch.tree([{ mode: '160000', name: `${uuid}.yaml`, oid: 'a'.repeat(40) }]) },
        ],
        path: (uuid) => `dashboards/${uuid}.yaml`,
        reason: 'submodule',
      },
    ];
    for (const c of cases) {
      const r = await hostile(c.entries);
      const err = await refusal(
        new WorkingCopy(r.dir).init({ branch: 'main', remoteUrl: r.url, author, readme: '# x\n', adopt: { creds } }),
      );
      expect(err, c.name).toMatchObject({ status: 409, code: 'unsafe_path', path: c.path(r.uuid), reason: c.reason });
      expect(fs.existsSync(r.dir), c.name).toBe(false);
    }
    expect(fs.readFileSync(other.config).equals(other.bytes)).toBe(true);
  });
});

describe('a working copy never reads or writes through a link found in it', () => {
  it('sync refuses a file that is a link, and a folder that leads outside; the other repository keeps its bytes', async () => {
    const root = reposDir();
    const other = await victim(root);
    const uuid = randomUUID();
    const dir = path.join(root, uuid);
    const wc = new WorkingCopy(dir);
    await wc.init({ branch: 'main', author, readme: '# x\n' });
    fs.mkdirSync(path.join(dir, 'dashboards'));
    fs.symlinkSync(`../../${other.uuid}/.git/config`, path.join(dir, 'dashboards', `${uuid}.yaml`));
    const leaf = await refusal(wc.writeBundle(new Map([[`dashboards/${uuid}.yaml`, 'dashboard_title: x\n']])));
    expect(leaf).toMatchObject({ status: 409, path: `dashboards/${uuid}.yaml`, reason: 'symlink' });

    fs.rmSync(path.join(dir, 'dashboards'), { recursive: true });
    fs.symlinkSync(`../${other.uuid}/.git`, path.join(dir, 'dashboards'));
    const folder = await refusal(wc.writeBundle(new Map([['dashboards/config.yaml', 'x: 1\n']])));
    expect(folder).toMatchObject({ path: 'dashboards/config.yaml', reason: 'outside_working_copy' });
    expect(fs.readFileSync(other.config).equals(other.bytes)).toBe(true);
    expect(fs.existsSync(path.join(root, other.uuid, '.git', 'config.yaml'))).toBe(false);
  });
});

describe.skipIf(!g)('through the API: a 409 problem naming the path, and a deploy item failure saying what to do', () => {
  let h: Harness;
  let fake: FakeSuperset;
  let env: string;
  let configId: string;
  let scratch: Scratch;
  const admin = (m: string, p: string, json?: unknown) => h.request(m, p, { token: h.adminToken, ...(json === undefined ? {} : { json }) });

  beforeAll(async () => {
    [h, fake] = await Promise.all([createHarness({ worker: true }), startFakeSuperset()]);
    env = await createEnvironment(h, { baseUrl: fake.baseUrl, username: fake.username, password: fake.password });
    const c = await admin('POST', '/api/git/configs', {
      name: `unsafe-${randomUUID().slice(0, 8)}`,
      provider: 'gitea',
      base_url: g!.baseUrl,
      owner: g!.username,
      pat: g!.token,
    });
    expect(c.status, c.text).toBe(201);
    configId = c.body.id;
    await setIdentity(h, h.adminToken, 'Ada Admin', 'ada@example.com');
    scratch = new Scratch();
  }, 120_000);
  afterAll(async () => {
    await h?.close();
    await fake?.close();
  });

  /** A dashboard whose remote (named for the init) holds `dashboards/<uuid>.yaml` plain, or as a link. */
  async function dashboardWithRemote(link: boolean) {
    const d = fake.addDashboard({ title: `unsafe ${randomUUID().slice(0, 8)}` });
    const name = `unsafe-api-${d.uuid.slice(0, 8)}`;
    const url = await remote(name);
    const file = link
      ? { mode: '120000', name: `${d.uuid}.yaml`, oid: scratch.blob('../../../../../etc/passwd') }
      : { mode: BLOB, name: `${d.uuid}.yaml`, oid: scratch.blob('dashboard_title: plain\n') };
    const commit = scratch.commit(scratch.tree([{ mode: TREE, name: 'dashboards', oid: scratch.tree([file]) }]), 'first');
    scratch.push(url, commit);
    return { d, name, url, commit };
  }

  it('init and pull answer 409 unsafe_path with the path, the reason and the next action', async () => {
    const bad = await dashboardWithRemote(true);
    const init = await admin('POST', `/api/git/dashboards/${bad.d.id}/init`, { env_id: env, config_id: configId, remote_name: bad.name });
    expect(init.status, init.text).toBe(409);
    expect(init.headers.get('content-type')).toMatch(/application\/problem\+json/);
    expect(init.body).toMatchObject({
      code: 'unsafe_path',
      path: `dashboards/${bad.d.uuid}.yaml`,
      reason: 'symlink',
      next_actions: [expect.objectContaining({ action: 'fix_remote' })],
    });
    expect(init.body.detail).toContain(`"dashboards/${bad.d.uuid}.yaml" is a symbolic link`);

    const ok = await dashboardWithRemote(false);
    const made = await admin('POST', `/api/git/dashboards/${ok.d.id}/init`, { env_id: env, config_id: configId, remote_name: ok.name });
    expect(made.status, made.text).toBe(200);
    expect(made.body.adopted_remote_history).toBe(true);
    const link = scratch.blob('../../../../../etc/passwd');
    const linked = scratch.tree([{ mode: '120000', name: `${ok.d.uuid}.yaml`, oid: link }]);
    scratch.push(ok.url, scratch.commit(scratch.tree([{ mode: TREE, name: 'dashboards', oid: linked }]), 'link', ok.commit));
    const pull = await admin('POST', `/api/git/dashboards/${ok.d.id}/pull`, { env_id: env });
    expect(pull.status, pull.text).toBe(409);
    expect(pull.body).toMatchObject({ code: 'unsafe_path', path: `dashboards/${ok.d.uuid}.yaml`, reason: 'symlink' });

    // The fetched commit is still named origin/main: deploying it fails as an item, with the same next action.
    const deploy = await admin('POST', `/api/git/dashboards/${ok.d.id}/deploy`, { env_id: env, target_env_id: env, commit: 'origin/main' });
    expect(deploy.status, deploy.text).toBe(202);
    const task = await h.waitForTask(deploy.body.task_id);
    const item = task.result.items[0];
    expect(item).toMatchObject({ outcome: 'failed', step: 'read', next_actions: [expect.objectContaining({ action: 'fix_remote' })] });
    expect(item.error).toContain(`"dashboards/${ok.d.uuid}.yaml" is a symbolic link`);
  }, 120_000);
});
