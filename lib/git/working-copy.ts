/**
 * One dashboard's local working copy, over isomorphic-git (pure JavaScript, no git binary
 * needed). isomorphic-git locks only within one process, so callers hold the database lock of
 * the repository around every call (db/git/repositories.ts withLock).
 *
 * Credentials never touch the disk: the remote URL in `.git/config` carries none, and the token
 * is handed to isomorphic-git per call through `onAuth` (working-copy-remote.ts).
 *
 * Nothing is read or written outside the working copy: every file access, isomorphic-git's
 * included, goes through ConfinedDir (confined-path.ts), and a fetched commit is checked for
 * links, submodules and names that leave the folder before it is checked out or merged
 * (safe-tree.ts).
 *
 * This class is the one door; the work is done by a module per concern: refs and blobs
 * (working-copy-refs.ts), status (working-copy-status.ts), diffs and history
 * (working-copy-history.ts), the remote (working-copy-remote.ts) and merges (working-copy-merge.ts).
 */
import fs from 'node:fs';
import git, { Errors } from 'isomorphic-git';
import type { EgressPolicy } from '../egress/policy.ts';
import { ConflictError, ValidationError } from '../errors.ts';
import { UnsafePathError } from './confined-path.ts';
import { COMPANIONS_DIR, isBundlePath, isCompanionPath } from './dashboard-files.ts';
import { GitRemoteError, NoRepositoryError } from './git-errors.ts';
import * as branches from './working-copy-branches.ts';
import * as history from './working-copy-history.ts';
import * as merge from './working-copy-merge.ts';
import { currentBranch, openRepo, refOid, remoteUrl, resolveCommit, stageAsIs, type LocalRepo } from './working-copy-refs.ts';
import { fetchBranch, pushBranch, setRemote } from './working-copy-remote.ts';
import { fileStatus, readMergeState, status } from './working-copy-status.ts';
import type {
  Author,
  ConflictFile,
  Credentials,
  FileDiff,
  FileStatus,
  HistoryEntry,
  Resolution,
  WorkingCopyStatus,
} from './working-copy-types.ts';

export type {
  Author,
  ConflictFile,
  Credentials,
  FileDiff,
  FileStatus,
  HistoryEntry,
  Resolution,
  WorkingCopyStatus,
} from './working-copy-types.ts';

export { GitRemoteError, NoRepositoryError };

export class WorkingCopy {
  readonly dir: string;
  private readonly repo: LocalRepo;

  /** `egress`: where remotes may be (ALLOWED_UPSTREAM_HOSTS); none: anywhere. */
  constructor(dir: string, opts: { egress?: EgressPolicy } = {}) {
    this.dir = dir;
    this.repo = openRepo(dir, opts.egress);
  }

  exists(): boolean {
    return this.repo.files.exists('.git/HEAD');
  }

  assertExists(): void {
    if (!this.exists()) throw new NoRepositoryError();
  }

  /** Creates the repository (idempotent) with its branch, an optional credential-free remote and a first commit. */
  async init(opts: {
    branch: string;
    remoteUrl?: string | null;
    author: Author;
    readme: string;
    /** With a remote that may already hold the history (a working copy lost or made elsewhere): take its branch. */
    adopt?: { creds: Credentials | null };
  }): Promise<{ created: boolean; head: string; adopted: boolean }> {
    const base = this.repo.base;
    const created = !this.exists();
    fs.mkdirSync(this.dir, { recursive: true });
    if (created) await git.init({ ...base, defaultBranch: opts.branch });
    if (opts.remoteUrl) await this.setRemote(opts.remoteUrl);
    let head = await this.headOid();
    let adopted = false;
    if (!head && opts.remoteUrl && opts.adopt) {
      const theirs = await this.adoptable(opts.adopt.creds, created);
      if (theirs) {
        await git.writeRef({ ...base, ref: `refs/heads/${opts.branch}`, value: theirs, force: true });
        await git.checkout({ ...base, ref: opts.branch, force: true });
        head = theirs;
        adopted = true;
      }
    }
    if (!head) {
      this.repo.files.write('README.md', opts.readme);
      await git.add({ ...base, filepath: 'README.md' });
      head = await git.commit({ ...base, message: 'Start the dashboard repository', author: opts.author });
    }
    return { created, head, adopted };
  }

  /** The remote's branch to adopt at init, or null when the remote has none yet. */
  private async adoptable(creds: Credentials | null, created: boolean): Promise<string | null> {
    return this.fetch(creds).catch((err: unknown) => {
      // An empty or missing remote repository has nothing to adopt; the first push fills it.
      if (err instanceof GitRemoteError && err.code === 'remote_not_found') return null;
      if (err instanceof Errors.NotFoundError) return null;
      // A refused remote tree leaves no working copy behind when this call made it.
      if (created && err instanceof UnsafePathError) fs.rmSync(this.dir, { recursive: true, force: true });
      throw err;
    });
  }

  setRemote(url: string): Promise<void> {
    return setRemote(this.repo, url);
  }

  remoteUrl(): Promise<string | null> {
    return remoteUrl(this.repo);
  }

  async setIdentity(author: Author): Promise<void> {
    await git.setConfig({ ...this.repo.base, path: 'user.name', value: author.name });
    await git.setConfig({ ...this.repo.base, path: 'user.email', value: author.email });
  }

  branch(): Promise<string> {
    return currentBranch(this.repo);
  }

  headOid(): Promise<string | null> {
    return refOid(this.repo, 'HEAD');
  }

  /**
   * Replaces the dashboard's bundle files in the working tree; other files (README) stay. With
   * `keepCompanions` (they could not be read this time) the companion files stay as they are.
   * Returns the paths that changed.
   */
  async writeBundle(files: Map<string, string>, opts: { keepCompanions?: boolean } = {}): Promise<string[]> {
    if (readMergeState(this.repo))
      throw new ConflictError('A merge is in progress: finish or abort it before syncing', 'merge_in_progress');
    const tree = this.repo.files;
    const changed: string[] = [];
    for (const p of tree.listFiles().filter(isBundlePath)) {
      if (!files.has(p) && !(opts.keepCompanions && isCompanionPath(p))) {
        tree.remove(p);
        changed.push(p);
      }
    }
    for (const [p, text] of files) {
      if (tree.read(p) === text) continue;
      tree.write(p, text);
      changed.push(p);
    }
    for (const kind of ['dashboards', 'charts', 'datasets', 'databases']) tree.removeEmptyDir(kind);
    for (const dir of new Set(changed.filter(isCompanionPath).map((p) => p.slice(0, p.lastIndexOf('/'))))) tree.removeEmptyDir(dir);
    tree.removeEmptyDir(COMPANIONS_DIR);
    return changed.sort();
  }

  /** The bundle files at a commit: path → text. */
  filesAt(ref: string): Promise<Map<string, string>> {
    return history.filesAt(this.repo, ref);
  }

  /** A commit id (full or abbreviated), a branch or tag name, `HEAD`, optionally followed by `~N` or `^`. */
  resolveCommit(ref: string): Promise<string> {
    return resolveCommit(this.repo, ref);
  }

  /** Staged, modified and untracked files (a read-only scan: the index is not rewritten). */
  fileStatus(): Promise<FileStatus> {
    return fileStatus(this.repo);
  }

  /** The status, answered from memory while nothing that decides it changed (working-copy-status.ts). */
  status(): Promise<WorkingCopyStatus> {
    return status(this.repo);
  }

  /** Unified diffs: working tree against HEAD, or between two commits. */
  diff(opts: { from?: string; to?: string; paths?: string[] } = {}): Promise<FileDiff[]> {
    return history.diff(this.repo, opts);
  }

  history(depth: number): Promise<HistoryEntry[]> {
    return history.history(this.repo, depth);
  }

  /**
   * Stages every change (or only `paths`) and commits. Safe to repeat: with nothing to commit it
   * answers the current HEAD with `committed: false` instead of an empty commit.
   */
  async commit(message: string, author: Author, paths?: string[]): Promise<{ committed: boolean; commit: string; files: string[] }> {
    if (readMergeState(this.repo))
      throw new ConflictError('A merge is in progress: resolve it and use merge/continue, or abort it', 'merge_in_progress');
    const st = await this.fileStatus();
    let files = [...new Set([...st.staged, ...st.modified, ...st.untracked])].sort();
    if (paths) {
      const unknown = paths.filter((p) => !files.includes(p));
      if (unknown.length)
        throw new ValidationError(
          `nothing to commit in ${unknown.join(', ')}`,
          unknown.map((p) => ({ field: 'body.paths', message: `${p} has no change` })),
        );
      files = paths;
    }
    const head = await this.headOid();
    if (!files.length) return { committed: false, commit: head ?? '', files: [] };
    await stageAsIs(this.repo, files);
    const oid = await git.commit({ ...this.repo.base, message, author });
    return { committed: true, commit: oid, files };
  }

  /**
   * Fetches the branch and answers the remote's commit, once its tree is known to hold only
   * folders and plain files with safe names (safe-tree.ts).
   */
  fetch(creds: Credentials | null): Promise<string | null> {
    return fetchBranch(this.repo, creds);
  }

  /** Pushes the current branch, or `branch` (another local one). */
  push(creds: Credentials | null, branch?: string): ReturnType<typeof pushBranch> {
    return pushBranch(this.repo, creds, branch);
  }

  listBranches(): Promise<branches.BranchView[]> {
    return branches.listBranches(this.repo);
  }

  /** Creates a branch at `from` (default HEAD), switching to it with `checkout` (the tree must be clean). */
  createBranch(name: string, from: string | null, checkout: boolean): Promise<string> {
    return branches.createBranch(this.repo, name, from, checkout);
  }

  /** Switches to a branch; refused while anything is changed or a merge is in progress. */
  switchBranch(name: string): Promise<string> {
    return branches.switchBranch(this.repo, name);
  }

  deleteBranch(name: string): Promise<void> {
    return branches.deleteBranch(this.repo, name);
  }

  /** Fetches another branch of the remote (a pull request's base after its merge) without touching the working tree. */
  fetchRemoteBranch(creds: Credentials | null, branch: string): Promise<string | null> {
    return branches.fetchRemoteBranch(this.repo, creds, branch);
  }

  /**
   * Fetches and merges the remote branch. A fast-forward or clean merge moves the branch; a
   * conflict leaves the merge in progress with conflict markers in the working tree, to be
   * resolved with resolve/continue or undone with abort.
   */
  async pull(creds: Credentials | null, author: Author): Promise<merge.PullOutcome> {
    if (readMergeState(this.repo))
      throw new ConflictError('A merge is already in progress: resolve it or abort it first', 'merge_in_progress');
    const st = await this.fileStatus();
    const dirty = [...st.staged, ...st.modified];
    if (dirty.length)
      throw new ConflictError(`Commit or discard local changes before pulling (changed: ${dirty.join(', ')})`, 'dirty_working_copy', {
        files: dirty,
      });
    return merge.integrate(this.repo, await this.fetch(creds), author);
  }

  mergeStatus(): Promise<{ has_unfinished_merge: boolean; ours: string | null; theirs: string | null; conflicts: ConflictFile[] }> {
    return merge.mergeStatus(this.repo);
  }

  /** Resolves conflicted files (`ours`, `theirs` or content), all checked before any is written. */
  resolve(
    resolutions: Resolution[],
  ): Promise<{ resolved: Array<{ path: string; strategy: string; content: string | null }>; remaining: string[] }> {
    return merge.resolve(this.repo, resolutions);
  }

  abortMerge(): Promise<void> {
    return merge.abortMerge(this.repo);
  }

  continueMerge(message: string | undefined, author: Author): Promise<string> {
    return merge.continueMerge(this.repo, message, author);
  }
}
