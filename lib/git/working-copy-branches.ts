/**
 * A working copy's branches: list, create, switch and delete, and fetching another branch than
 * the current one (a pull request's base after its merge). A switch never loses work: it is
 * refused while anything is changed or a merge is in progress.
 */
import git from 'isomorphic-git';
import { AppError, ConflictError, ValidationError } from '../errors.ts';
import { remoteError } from './git-errors.ts';
import { assertSafeTree } from './safe-tree.ts';
import { currentBranch, refOid, remoteUrl, type LocalRepo } from './working-copy-refs.ts';
import { transport } from './working-copy-remote.ts';
import { fileStatus, readMergeState } from './working-copy-status.ts';
import type { Credentials } from './working-copy-types.ts';

export interface BranchView {
  name: string;
  commit: string | null;
  current: boolean;
  /** The remote's commit of the branch as of the last fetch or push, or null when it was never pushed. */
  remote_commit: string | null;
}

/**
 * A branch name git accepts (git check-ref-format's rules for one branch), checked by isomorphic-git's
 * own ref-name validation through `git.branch` as well; this refuses early with the field named.
 */
const BRANCH = /^(?!-)(?!.*\.\.)(?!.*\/\/)(?!.*@\{)(?!\/)(?!.*\/$)(?!.*\.lock(\/|$))(?!.*\/\.)(?!\.)[A-Za-z0-9._\/-]{1,100}$/;

export function assertBranchName(name: string, field = 'body.name'): void {
  if (!BRANCH.test(name) || name === 'HEAD')
    throw new ValidationError(`'${name}' is not a valid branch name`, [{ field, message: 'not a valid branch name' }]);
}

export async function listBranches(repo: LocalRepo): Promise<BranchView[]> {
  const current = await currentBranch(repo);
  const names = await git.listBranches({ ...repo.base });
  const out: BranchView[] = [];
  for (const name of names.sort())
    out.push({
      name,
      commit: await refOid(repo, `refs/heads/${name}`),
      current: name === current,
      remote_commit: await refOid(repo, `refs/remotes/origin/${name}`),
    });
  return out;
}

async function assertClean(repo: LocalRepo, what: string): Promise<void> {
  if (readMergeState(repo)) throw new ConflictError(`A merge is in progress: finish or abort it before ${what}`, 'merge_in_progress');
  const st = await fileStatus(repo);
  const changed = [...new Set([...st.staged, ...st.modified, ...st.untracked])];
  if (changed.length)
    throw new ConflictError(`Commit or discard local changes before ${what} (changed: ${changed.join(', ')})`, 'dirty_working_copy', {
      files: changed,
    });
}

const unknownBranch = (name: string) => new AppError(404, 'unknown_branch', 'Unknown branch', `This repository has no branch '${name}'`);

/**
 * Creates `name` at `from` (a commit id; default HEAD); `checkout` switches to it. Made at HEAD,
 * the switch touches no file, so local changes come along (as `git switch -c` does); made at
 * another commit, the tree must be clean first.
 */
export async function createBranch(repo: LocalRepo, name: string, from: string | null, checkout: boolean): Promise<string> {
  assertBranchName(name);
  if (await refOid(repo, `refs/heads/${name}`)) throw new ConflictError(`The branch '${name}' exists already`, 'branch_exists');
  if (readMergeState(repo)) throw new ConflictError('A merge is in progress: finish or abort it before branching', 'merge_in_progress');
  const head = await refOid(repo, 'HEAD');
  const oid = from ?? head;
  if (!oid) throw new ConflictError('The repository has no commit to branch from yet', 'no_commit');
  if (checkout && oid !== head) {
    await assertClean(repo, 'switching branches');
    await assertSafeTree(repo.base, oid);
  }
  await git.writeRef({ ...repo.base, ref: `refs/heads/${name}`, value: oid });
  if (!checkout) return oid;
  if (oid === head) await git.writeRef({ ...repo.base, ref: 'HEAD', value: `refs/heads/${name}`, symbolic: true, force: true });
  else await git.checkout({ ...repo.base, ref: name });
  return oid;
}

/** Switches the working tree to a branch; refused while anything is changed (nothing is lost). */
export async function switchBranch(repo: LocalRepo, name: string): Promise<string> {
  assertBranchName(name);
  const oid = await refOid(repo, `refs/heads/${name}`);
  if (!oid) throw unknownBranch(name);
  if ((await currentBranch(repo)) === name) return oid;
  await assertClean(repo, 'switching branches');
  await assertSafeTree(repo.base, oid);
  await git.checkout({ ...repo.base, ref: name });
  return oid;
}

/** Deletes a local branch (never the current one). */
export async function deleteBranch(repo: LocalRepo, name: string): Promise<void> {
  assertBranchName(name, 'path.branch');
  if (!(await refOid(repo, `refs/heads/${name}`))) throw unknownBranch(name);
  if ((await currentBranch(repo)) === name)
    throw new ConflictError(`'${name}' is the current branch: switch to another first`, 'current_branch');
  await git.deleteBranch({ ...repo.base, ref: name });
}

/**
 * Fetches one branch of the remote (not necessarily the current one) into its remote-tracking
 * ref and answers its commit, once the commit's tree is known to be safe (safe-tree.ts). The
 * working tree and the local branches are left as they are.
 */
export async function fetchRemoteBranch(repo: LocalRepo, creds: Credentials | null, branch: string): Promise<string | null> {
  assertBranchName(branch, 'branch');
  if (!(await remoteUrl(repo))) throw new ConflictError('This repository has no remote: init it with a git config first', 'no_remote');
  try {
    await git.fetch({ ...repo.base, ...transport(repo, creds), remote: 'origin', ref: branch, singleBranch: true, tags: false });
  } catch (err) {
    throw remoteError('fetch', err);
  }
  const theirs = await refOid(repo, `refs/remotes/origin/${branch}`);
  if (theirs) await assertSafeTree(repo.base, theirs);
  return theirs;
}
