/**
 * A working copy's remote: its credential-free URL in `.git/config`, fetch and push. The token
 * is handed to isomorphic-git per call through `onAuth` and sent only to its git config's origin,
 * through the egress policy (remote-http.ts).
 */
import git, { type AuthCallback } from 'isomorphic-git';
import { ConflictError, ValidationError } from '../errors.ts';
import { upstreamReason } from '../upstream-reason.ts';
import { GitRemoteError, remoteError } from './git-errors.ts';
import { remoteHttp } from './remote-http.ts';
import { assertSafeTree } from './safe-tree.ts';
import { readMergeState } from './working-copy-status.ts';
import type { Credentials } from './working-copy-types.ts';
import { currentBranch, refOid, remoteUrl, type LocalRepo } from './working-copy-refs.ts';

export async function setRemote(repo: LocalRepo, url: string): Promise<void> {
  if (/\/\/[^/]*@/.test(url)) throw new ValidationError('a remote URL must not carry credentials');
  await git.setConfig({ ...repo.base, path: 'remote.origin.url', value: url });
  await git.setConfig({ ...repo.base, path: 'remote.origin.fetch', value: '+refs/heads/*:refs/remotes/origin/*' });
}

function onAuth(creds: Credentials | null): { onAuth?: AuthCallback; onAuthFailure?: AuthCallback } {
  if (!creds) return {};
  return {
    onAuth: () => ({ username: creds.username, password: creds.token }),
    // One try with the stored token; a refusal is final (no retry loop against the server).
    onAuthFailure: () => ({ cancel: true }),
  };
}

/** The HTTP client and credentials of one remote call: through the egress policy, the token only to its config's origin. */
export function transport(repo: LocalRepo, creds: Credentials | null) {
  return { http: remoteHttp({ egress: repo.egress, tokenOrigin: creds?.origin }), ...onAuth(creds) };
}

async function remoteCall<T>(what: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw remoteError(what, err);
  }
}

async function assertRemote(repo: LocalRepo): Promise<void> {
  if (!(await remoteUrl(repo))) throw new ConflictError('This repository has no remote: init it with a git config first', 'no_remote');
}

/**
 * Fetches the branch and answers the remote's commit, once its tree is known to hold only
 * folders and plain files with safe names (safe-tree.ts): whatever uses the answer (adopting it
 * at init, a fast-forward or merge at pull) checks out nothing that could leave the folder.
 */
export async function fetchBranch(repo: LocalRepo, creds: Credentials | null): Promise<string | null> {
  await assertRemote(repo);
  const branch = await currentBranch(repo);
  await remoteCall('fetch', () =>
    git.fetch({ ...repo.base, ...transport(repo, creds), remote: 'origin', ref: branch, singleBranch: true, tags: false }),
  );
  const theirs = await refOid(repo, `refs/remotes/origin/${branch}`);
  if (theirs) await assertSafeTree(repo.base, theirs);
  return theirs;
}

/**
 * Pushes the current branch, or `only` (another local branch), with what the server said on the
 * way: its `remote:` lines, the post-receive hook's among them (isomorphic-git reads the answer to
 * its end, after the server's hooks, as `git push` does; test/git/push-settled.test.ts holds it to that).
 */
export async function pushBranch(
  repo: LocalRepo,
  creds: Credentials | null,
  only?: string,
): Promise<{ pushed: boolean; commit: string | null; remote_messages: string[] }> {
  await assertRemote(repo);
  if (readMergeState(repo)) throw new ConflictError('A merge is in progress: finish or abort it before pushing', 'merge_in_progress');
  const branch = only ?? (await currentBranch(repo));
  const head = await refOid(repo, `refs/heads/${branch}`);
  const said: string[] = [];
  // Quoted by the one rule for upstream text (one line, bounded, credentials masked); at most 50.
  const onMessage = (line: string) => {
    const quoted = upstreamReason(line);
    if (quoted && said.length < 50) said.push(quoted);
  };
  const r = await remoteCall('push', () => git.push({ ...repo.base, ...transport(repo, creds), onMessage, remote: 'origin', ref: branch }));
  if (!r.ok) {
    const reason = r.refs?.[`refs/heads/${branch}`]?.error ?? r.error ?? 'rejected';
    throw new GitRemoteError('push_rejected', `the remote refused the push: ${upstreamReason(reason) ?? 'rejected'}; pull first`, 409);
  }
  await git.writeRef({ ...repo.base, ref: `refs/remotes/origin/${branch}`, value: head!, force: true });
  return { pushed: true, commit: head, remote_messages: said };
}
