import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { untilBranchesOnServer } from '../../lib/git/branch-on-server.ts';
import { reviewProvider } from '../../lib/git/reviews.ts';
import { WorkingCopy } from '../../lib/git/working-copy.ts';
import { uniquePrefix } from '../support/environments.ts';
import { gitea } from './support.ts';

// A push is over when the git server has finished answering it, as for `git push`: git's
// receive-pack reports the updated refs first and runs the post-receive hook after, where Gitea
// records the branch. Here a hook that Gitea runs before its own one holds the answer for 3 s and
// then speaks: a push that returned on the report would miss its words and Gitea's.
// Gitea also counts a new repository empty until its push queue has taken the first push, and
// until then refuses a pull request from or into it ("The target couldn't be found"; under the
// full run's load for minutes): a pull request waits for its API to answer the branch
// (lib/git/branch-on-server.ts).
const on = inject('gitea') !== null;
const author = { name: 'T', email: 't@example.com' };
const HOOK_HOLD_S = 3;

async function giteaJson(method: string, p: string, json?: unknown): Promise<{ status: number; body: any }> {
  const g = gitea()!;
  const r = await fetch(`${g.baseUrl}/api/v1${p}`, {
    method,
    headers: { authorization: `token ${g.token}`, 'content-type': 'application/json' },
    body: json === undefined ? undefined : JSON.stringify(json),
  });
  const text = await r.text();
  return { status: r.status, body: text && r.headers.get('content-type')?.includes('json') ? JSON.parse(text) : text };
}

/** A post-receive hook of Gitea's repository that runs before Gitea's own and takes its time. */
function slowHook(owner: string, name: string): void {
  const g = gitea()!;
  const dir = path.join(g.workDir, 'repos', owner.toLowerCase(), `${name.toLowerCase()}.git`, 'hooks', 'post-receive.d');
  const hook = path.join(dir, '0-hold');
  fs.writeFileSync(hook, `#!/bin/sh\ncat >/dev/null\nsleep ${HOOK_HOLD_S}\necho "held by the test hook"\n`, { mode: 0o755 });
  if (process.getuid?.() === 0) spawnSync('chown', ['--reference', dir, hook]);
}

describe.skipIf(!on)('a push against the real Gitea', () => {
  it("returns after the server's post-receive hook, with its output; a pull request's wait then ends when Gitea's API answers the branch", async () => {
    const g = gitea()!;
    const name = `${uniquePrefix('push')}-settled`;
    const made = await giteaJson('POST', '/user/repos', { name, auto_init: false, private: true });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    slowHook(g.username, name);

    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'push-settled-'));
    const wc = new WorkingCopy(dir);
    await wc.init({ branch: 'main', author, readme: '# r\n', remoteUrl: `${g.baseUrl}/${g.username}/${name}.git` });
    await wc.writeBundle(new Map([['metadata.yaml', 'version: 1\n']]));
    const { commit } = await wc.commit('first', author);
    const creds = { username: g.username, token: g.token, origin: new URL(g.baseUrl).origin };

    const pushed = await wc.push(creds);
    expect(pushed).toMatchObject({ pushed: true, commit });
    // Echoed after the hook's wait, and Gitea's own hook's lines after it: the push answered after both, not on the report.
    expect(pushed.remote_messages).toEqual(['held by the test hook', '. Processing 1 references', 'Processed 1 references in total']);

    // Gitea counts the repository empty until its push queue has taken that first push (its API then
    // fails a read of the branch, and refuses a pull request): the wait ends when the API answers it.
    const provider = reviewProvider({ provider: 'gitea', baseUrl: g.baseUrl, token: g.token, owner: g.username, repo: name });
    await untilBranchesOnServer(provider, [{ name: 'main', commit }]);
    const branch = await giteaJson('GET', `/repos/${g.username}/${name}/branches/main`);
    expect(branch.status, JSON.stringify(branch.body)).toBe(200);
    expect(branch.body.commit.id).toBe(commit);
  });
});
