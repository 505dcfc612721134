/**
 * One dashboard's local working copy, over isomorphic-git (pure JavaScript, no git binary
 * needed). isomorphic-git locks only within one process, so callers hold the database lock of
 * the repository around every call (db/git/repositories.ts withLock).
 *
 * Credentials never touch the disk: the remote URL in `.git/config` carries none, and the token
 * is handed to isomorphic-git per call through `onAuth`.
 *
 * Nothing is read or written outside the working copy: every file access, isomorphic-git's
 * included, goes through ConfinedDir (confined-path.ts), and a fetched commit is checked for
 * links, submodules and names that leave the folder before it is checked out or merged
 * (safe-tree.ts).
 */
import fs from 'node:fs';
import path from 'node:path';
import git, { Errors, TREE, WORKDIR, type AuthCallback, type ReadCommitResult } from 'isomorphic-git';
import type { EgressPolicy } from '../egress/policy.ts';
import { upstreamReason } from '../upstream-reason.ts';
import { createTwoFilesPatch } from 'diff';
import { AppError, ConflictError, ValidationError } from '../errors.ts';
import { ConfinedDir, UnsafePathError } from './confined-path.ts';
import { fromYaml, isBundlePath } from './dashboard-files.ts';
import { GitRemoteError, isGitError, NoRepositoryError, remoteError } from './git-errors.ts';
import { remoteHttp } from './remote-http.ts';
import { assertSafeTree, unsafeFromGit } from './safe-tree.ts';

import type {
  Author,
  ConflictFile,
  Credentials,
  FileDiff,
  FileStatus,
  HistoryEntry,
  MergeState,
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

const MERGE_STATE = 'switchyard-merge.json';
const STATUS_CACHE = new Map<string, { key: string; status: WorkingCopyStatus }>();
const STATUS_CACHE_MAX = 10_000;
const RACY_MS = 3_000;
const CONFLICT_MARKER = /^(<{7}|={7}|>{7})( |$)/m;

export { GitRemoteError, NoRepositoryError };

export class WorkingCopy {
  readonly dir: string;
  private readonly gitdir: string;
  private readonly files: ConfinedDir;
  private readonly confinedFs: ReturnType<ConfinedDir['fs']>;
  private cache: object = {};
  private readonly egress?: EgressPolicy;

  /** `egress`: where remotes may be (ALLOWED_UPSTREAM_HOSTS); none: anywhere. */
  constructor(dir: string, opts: { egress?: EgressPolicy } = {}) {
    this.egress = opts.egress;
    this.dir = dir;
    this.gitdir = path.join(dir, '.git');
    this.files = new ConfinedDir(dir);
    this.confinedFs = this.files.fs();
  }

  private get base() {
    return { fs: this.confinedFs, dir: this.dir, gitdir: this.gitdir, cache: this.cache };
  }

  exists(): boolean {
    return this.files.exists('.git/HEAD');
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
    const created = !this.exists();
    fs.mkdirSync(this.dir, { recursive: true });
    if (created) await git.init({ ...this.base, defaultBranch: opts.branch });
    if (opts.remoteUrl) await this.setRemote(opts.remoteUrl);
    let head = await this.headOid();
    let adopted = false;
    if (!head && opts.remoteUrl && opts.adopt) {
      const theirs = await this.fetch(opts.adopt.creds).catch((err: unknown) => {
        // An empty or missing remote repository has nothing to adopt; the first push fills it.
        if (err instanceof GitRemoteError && err.code === 'remote_not_found') return null;
        if (err instanceof Errors.NotFoundError) return null;
        // A refused remote tree leaves no working copy behind when this call made it.
        if (created && err instanceof UnsafePathError) fs.rmSync(this.dir, { recursive: true, force: true });
        throw err;
      });
      if (theirs) {
        await git.writeRef({ ...this.base, ref: `refs/heads/${opts.branch}`, value: theirs, force: true });
        await git.checkout({ ...this.base, ref: opts.branch, force: true });
        head = theirs;
        adopted = true;
      }
    }
    if (!head) {
      this.files.write('README.md', opts.readme);
      await git.add({ ...this.base, filepath: 'README.md' });
      head = await git.commit({ ...this.base, message: 'Start the dashboard repository', author: opts.author });
    }
    return { created, head, adopted };
  }

  async setRemote(url: string): Promise<void> {
    if (/\/\/[^/]*@/.test(url)) throw new ValidationError('a remote URL must not carry credentials');
    await git.setConfig({ ...this.base, path: 'remote.origin.url', value: url });
    await git.setConfig({ ...this.base, path: 'remote.origin.fetch', value: '+refs/heads/*:refs/remotes/origin/*' });
  }

  async remoteUrl(): Promise<string | null> {
    return ((await git.getConfig({ ...this.base, path: 'remote.origin.url' })) as string | undefined) ?? null;
  }

  async setIdentity(author: Author): Promise<void> {
    await git.setConfig({ ...this.base, path: 'user.name', value: author.name });
    await git.setConfig({ ...this.base, path: 'user.email', value: author.email });
  }

  async branch(): Promise<string> {
    return (await git.currentBranch({ ...this.base, fullname: false })) ?? 'main';
  }

  async headOid(): Promise<string | null> {
    try {
      return await git.resolveRef({ ...this.base, ref: 'HEAD' });
    } catch (err) {
      if (err instanceof Errors.NotFoundError) return null;
      throw err;
    }
  }

  private async refOid(ref: string): Promise<string | null> {
    try {
      return await git.resolveRef({ ...this.base, ref });
    } catch (err) {
      if (err instanceof Errors.NotFoundError) return null;
      throw err;
    }
  }

  /** Replaces the dashboard's bundle files in the working tree; other files (README) stay. Returns the paths that changed. */
  async writeBundle(files: Map<string, string>): Promise<string[]> {
    if (this.readMergeState()) throw new ConflictError('A merge is in progress: finish or abort it before syncing', 'merge_in_progress');
    const changed: string[] = [];
    const existing = this.files.listFiles().filter(isBundlePath);
    for (const p of existing) {
      if (!files.has(p)) {
        this.files.remove(p);
        changed.push(p);
      }
    }
    for (const [p, text] of files) {
      if (this.files.read(p) === text) continue;
      this.files.write(p, text);
      changed.push(p);
    }
    for (const kind of ['dashboards', 'charts', 'datasets', 'databases']) this.files.removeEmptyDir(kind);
    return changed.sort();
  }

  /** The bundle files at a commit: path → text. */
  async filesAt(ref: string): Promise<Map<string, string>> {
    const oid = await this.resolveCommit(ref);
    // A commit holding a link reads as the link's text, never as a file: refused as at checkout.
    await assertSafeTree(this.base, oid);
    const out = new Map<string, string>();
    await git.walk({
      ...this.base,
      trees: [TREE({ ref: oid })],
      map: async (filepath, [entry]) => {
        if (!entry || filepath === '.') return true;
        if ((await entry.type()) === 'blob' && isBundlePath(filepath)) {
          out.set(filepath, Buffer.from((await entry.content()) ?? new Uint8Array()).toString('utf8'));
        }
        return true;
      },
    });
    return out;
  }

  /** A commit id (full or abbreviated), a branch or tag name, `HEAD`, optionally followed by `~N` or `^`. */
  async resolveCommit(ref: string): Promise<string> {
    const m = /^([A-Za-z0-9._\/-]{1,200})((?:~\d{0,4}|\^)*)$/.exec(ref);
    if (!m || ref.includes('..')) throw new ValidationError(`'${ref}' is not a valid git reference`);
    let oid = await this.resolveName(m[1], ref);
    for (const step of m[2].match(/~\d*|\^/g) ?? []) {
      const n = step === '^' || step === '~' ? 1 : Number(step.slice(1));
      for (let i = 0; i < n; i++) {
        const { commit } = await git.readCommit({ ...this.base, oid });
        if (!commit.parent[0]) throw new AppError(404, 'unknown_ref', 'Unknown reference', `'${ref}' goes past the first commit`);
        oid = commit.parent[0];
      }
    }
    return oid;
  }

  private async resolveName(name: string, ref: string): Promise<string> {
    try {
      const oid = /^[0-9a-f]{4,40}$/i.test(name)
        ? await git.expandOid({ ...this.base, oid: name.toLowerCase() }).catch(() => git.resolveRef({ ...this.base, ref: name }))
        : await git.resolveRef({ ...this.base, ref: name });
      const { type } = await git.readObject({ ...this.base, oid, format: 'parsed' }).catch(() => ({ type: 'missing' }));
      if (type !== 'commit') throw new Errors.NotFoundError(ref);
      return oid;
    } catch (err) {
      // Any of isomorphic-git's own refusals (not found, ambiguous, invalid name) means "no such commit".
      if (err instanceof Errors.NotFoundError || err instanceof Errors.AmbiguousError || isGitError(err))
        throw new AppError(404, 'unknown_ref', 'Unknown reference', `'${ref}' names no commit of this repository`);
      throw err;
    }
  }

  /** Staged, modified and untracked files (a read-only scan: the index is not rewritten). */
  async fileStatus(): Promise<FileStatus> {
    const rows = await git.statusMatrix({ ...this.base, refresh: false } as Parameters<typeof git.statusMatrix>[0]);
    const out: FileStatus = { staged: [], modified: [], untracked: [] };
    for (const [file, head, workdir, stage] of rows) {
      if (head === 0 && stage === 0) {
        if (workdir === 2) out.untracked.push(file);
        continue;
      }
      if (!(head === 1 && stage === 1)) out.staged.push(file);
      if (stage === 3 || (stage === 1 && workdir !== 1) || (stage === 2 && workdir !== 2)) out.modified.push(file);
    }
    return out;
  }

  /**
   * The status, answered from memory when nothing that decides it changed since the last scan:
   * HEAD, the index, the config, the branch and remote-tracking refs, the merge state and the
   * size, mtime and inode of every working file (the stat check git itself makes before hashing).
   * Files changed in the last few seconds are never trusted to their stat (racy timestamps).
   */
  async status(): Promise<WorkingCopyStatus> {
    const key = this.fingerprint();
    const hit = key ? STATUS_CACHE.get(this.dir) : undefined;
    if (hit && hit.key === key) return structuredClone(hit.status);
    const status = await this.scanStatus();
    if (key && this.fingerprint() === key) {
      if (STATUS_CACHE.size >= STATUS_CACHE_MAX) STATUS_CACHE.delete(STATUS_CACHE.keys().next().value!);
      STATUS_CACHE.set(this.dir, { key, status: structuredClone(status) });
    }
    return status;
  }

  private fingerprint(): string | null {
    const now = Date.now();
    const parts: string[] = [];
    let racy = false;
    const add = (file: string, label: string) => {
      const st = this.files.lstat(file);
      if (!st) return void parts.push(`${label}:-`);
      if (now - st.mtimeMs < RACY_MS || now - st.ctimeMs < RACY_MS) racy = true;
      parts.push(`${label}:${st.size}:${st.mtimeMs}:${st.ctimeMs}:${st.ino}`);
    };
    const head = this.files.read('.git/HEAD')?.trim();
    if (head === undefined) return null;
    parts.push(head);
    const branch = head.startsWith('ref: refs/heads/') ? head.slice('ref: refs/heads/'.length) : '';
    for (const f of ['index', 'config', 'packed-refs', MERGE_STATE, `refs/heads/${branch}`, `refs/remotes/origin/${branch}`])
      add(`.git/${f}`, f);
    for (const f of this.files.listFiles()) add(f, f);
    return racy ? null : parts.join('|');
  }

  private async scanStatus(): Promise<WorkingCopyStatus> {
    const [files, branch, head] = await Promise.all([this.fileStatus(), this.branch(), this.headOid()]);
    const hasRemote = (await this.remoteUrl()) !== null;
    const remoteHead = hasRemote ? await this.refOid(`refs/remotes/origin/${branch}`) : null;
    const { ahead, behind } = await this.aheadBehind(head, remoteHead, hasRemote);
    const merge = this.readMergeState();
    return {
      ...files,
      branch,
      head,
      remote_head: remoteHead,
      has_remote: hasRemote,
      ahead,
      behind,
      merging: merge !== null,
      conflicted: merge ? merge.files.filter((f) => !merge.resolved.includes(f)) : [],
    };
  }

  private async aheadBehind(head: string | null, remote: string | null, hasRemote: boolean): Promise<{ ahead: number; behind: number }> {
    if (!hasRemote || head === remote) return { ahead: 0, behind: 0 };
    const ours = head ? await this.ancestry(head) : new Set<string>();
    if (!remote) return { ahead: ours.size, behind: 0 }; // never pushed: every local commit is ahead
    const theirs = await this.ancestry(remote);
    let ahead = 0;
    let behind = 0;
    for (const c of ours) if (!theirs.has(c)) ahead++;
    for (const c of theirs) if (!ours.has(c)) behind++;
    return { ahead, behind };
  }

  private async ancestry(oid: string): Promise<Set<string>> {
    const commits = await git.log({ ...this.base, ref: oid, depth: 5000 });
    return new Set(commits.map((c) => c.oid));
  }

  /** Unified diffs: working tree against HEAD, or between two commits. */
  async diff(opts: { from?: string; to?: string; paths?: string[] } = {}): Promise<FileDiff[]> {
    const fromOid = opts.from ? await this.resolveCommit(opts.from) : await this.headOid();
    const toOid = opts.to ? await this.resolveCommit(opts.to) : null;
    const trees = [
      fromOid ? TREE({ ref: fromOid }) : TREE({ ref: '4b825dc642cb6eb9a060e54bf8d69288fbee4904' }),
      toOid ? TREE({ ref: toOid }) : WORKDIR(),
    ];
    const out: FileDiff[] = [];
    const label = (oid: string | null) => (oid ? oid.slice(0, 7) : 'empty');
    await this.unsafeNamed(() =>
      git.walk({
        ...this.base,
        trees,
        map: async (filepath, [a, b]) => {
          if (filepath === '.') return true;
          if (filepath === '.git' || filepath.startsWith('.git/')) return null;
          const [ta, tb] = await Promise.all([a?.type(), b?.type()]);
          if (ta === 'tree' || tb === 'tree') return true;
          if (opts.paths && !opts.paths.includes(filepath)) return null;
          const [oa, ob] = await Promise.all([a?.oid(), b?.oid()]);
          if (oa === ob) return null;
          const before = a ? Buffer.from((await a.content()) ?? new Uint8Array()).toString('utf8') : '';
          const after = b ? Buffer.from((await b.content()) ?? new Uint8Array()).toString('utf8') : '';
          if (a && b && before === after) return null;
          const change = !a ? 'added' : !b ? 'deleted' : 'modified';
          const patch = createTwoFilesPatch(
            a ? `a/${filepath}` : '/dev/null',
            b ? `b/${filepath}` : '/dev/null',
            before,
            after,
            label(fromOid),
            toOid ? label(toOid) : 'working tree',
            { context: 3 },
          );
          out.push({ path: filepath, change, patch: patch.replace(/^=+\n/, '') });
          return null;
        },
      }),
    );
    return out.sort((x, y) => x.path.localeCompare(y.path));
  }

  async history(depth: number): Promise<HistoryEntry[]> {
    if (!(await this.headOid())) return [];
    const logged: ReadCommitResult[] = await this.unsafeNamed(() => git.log({ ...this.base, ref: 'HEAD', depth, includeChanges: true }));
    // isomorphic-git walks every parent of a merge and lists a commit again each time a path reaches it.
    const seen = new Set<string>();
    const commits = logged.filter((c) => !seen.has(c.oid) && seen.add(c.oid)).slice(0, depth);
    return commits.map((c) => ({
      commit: c.oid,
      message: c.commit.message.trimEnd(),
      author: { name: c.commit.author.name, email: c.commit.author.email },
      committed_at: new Date(c.commit.committer.timestamp * 1000).toISOString(),
      files: [...new Set((c.commit.changes ?? []).map((ch) => String(ch[2])))].sort(),
    }));
  }

  /**
   * Stages every change (or only `paths`) and commits. Safe to repeat: with nothing to commit it
   * answers the current HEAD with `committed: false` instead of an empty commit.
   */
  async commit(message: string, author: Author, paths?: string[]): Promise<{ committed: boolean; commit: string; files: string[] }> {
    if (this.readMergeState())
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
    for (const f of files) {
      if (this.files.exists(f)) await git.add({ ...this.base, filepath: f });
      else await git.remove({ ...this.base, filepath: f });
    }
    const oid = await git.commit({ ...this.base, message, author });
    return { committed: true, commit: oid, files };
  }

  /** Runs isomorphic-git, reporting its refusal of an unsafe name the way safe-tree.ts does (a 409 naming the path). */
  private async unsafeNamed<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw unsafeFromGit(err);
    }
  }

  private onAuth(creds: Credentials | null): { onAuth?: AuthCallback; onAuthFailure?: AuthCallback } {
    if (!creds) return {};
    return {
      onAuth: () => ({ username: creds.username, password: creds.token }),
      // One try with the stored token; a refusal is final (no retry loop against the server).
      onAuthFailure: () => ({ cancel: true }),
    };
  }

  /** The HTTP client of one remote call: through the egress policy, the token only to its config's origin. */
  private http(creds: Credentials | null) {
    return remoteHttp({ egress: this.egress, tokenOrigin: creds?.origin });
  }

  private async remoteCall<T>(what: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw remoteError(what, err);
    }
  }

  /**
   * Fetches the branch and answers the remote's commit, once its tree is known to hold only
   * folders and plain files with safe names (safe-tree.ts): whatever uses the answer (adopting it
   * at init, a fast-forward or merge at pull) checks out nothing that could leave the folder.
   */
  async fetch(creds: Credentials | null): Promise<string | null> {
    const url = await this.remoteUrl();
    if (!url) throw new ConflictError('This repository has no remote: init it with a git config first', 'no_remote');
    const branch = await this.branch();
    await this.remoteCall('fetch', () =>
      git.fetch({
        ...this.base,
        http: this.http(creds),
        remote: 'origin',
        ref: branch,
        singleBranch: true,
        tags: false,
        ...this.onAuth(creds),
      }),
    );
    const theirs = await this.refOid(`refs/remotes/origin/${branch}`);
    if (theirs) await assertSafeTree(this.base, theirs);
    return theirs;
  }

  async push(creds: Credentials | null): Promise<{ pushed: boolean; commit: string | null }> {
    if (!(await this.remoteUrl())) throw new ConflictError('This repository has no remote: init it with a git config first', 'no_remote');
    if (this.readMergeState()) throw new ConflictError('A merge is in progress: finish or abort it before pushing', 'merge_in_progress');
    const branch = await this.branch();
    const head = await this.headOid();
    const r = await this.remoteCall('push', () =>
      git.push({ ...this.base, http: this.http(creds), remote: 'origin', ref: branch, ...this.onAuth(creds) }),
    );
    if (!r.ok) {
      const reason = r.refs?.[`refs/heads/${branch}`]?.error ?? r.error ?? 'rejected';
      throw new GitRemoteError('push_rejected', `the remote refused the push: ${upstreamReason(reason) ?? 'rejected'}; pull first`, 409);
    }
    await git.writeRef({ ...this.base, ref: `refs/remotes/origin/${branch}`, value: head!, force: true });
    return { pushed: true, commit: head };
  }

  /**
   * Fetches and merges the remote branch. A fast-forward or clean merge moves the branch; a
   * conflict leaves the merge in progress with conflict markers in the working tree, to be
   * resolved with resolve/continue or undone with abort.
   */
  async pull(
    creds: Credentials | null,
    author: Author,
  ): Promise<{ status: 'up_to_date' | 'fast_forward' | 'merged' | 'conflict'; commit: string | null; conflicts: string[] }> {
    if (this.readMergeState()) throw new ConflictError('A merge is already in progress: resolve it or abort it first', 'merge_in_progress');
    const st = await this.fileStatus();
    const dirty = [...st.staged, ...st.modified];
    if (dirty.length)
      throw new ConflictError(`Commit or discard local changes before pulling (changed: ${dirty.join(', ')})`, 'dirty_working_copy', {
        files: dirty,
      });
    const theirs = await this.fetch(creds);
    const branch = await this.branch();
    const ours = await this.headOid();
    if (!theirs || theirs === ours) return { status: 'up_to_date', commit: ours, conflicts: [] };
    if (ours && (await git.isDescendent({ ...this.base, oid: ours, ancestor: theirs, depth: -1 })))
      return { status: 'up_to_date', commit: ours, conflicts: [] };
    if (!ours || (await git.isDescendent({ ...this.base, oid: theirs, ancestor: ours, depth: -1 }))) {
      await git.writeRef({ ...this.base, ref: `refs/heads/${branch}`, value: theirs, force: true });
      await git.checkout({ ...this.base, ref: branch, force: true });
      return { status: 'fast_forward', commit: theirs, conflicts: [] };
    }
    const [base] = await git.findMergeBase({ ...this.base, oids: [ours, theirs] });
    const message = `Merge remote-tracking branch 'origin/${branch}'`;
    try {
      const r = await git.merge({ ...this.base, ours: branch, theirs, author, committer: author, message, abortOnConflict: false });
      await git.checkout({ ...this.base, ref: branch, force: true });
      return { status: 'merged', commit: r.oid ?? (await this.headOid()), conflicts: [] };
    } catch (err) {
      if (!(err instanceof Errors.MergeConflictError)) throw unsafeFromGit(err);
      const files = [...new Set(err.data.filepaths)].sort();
      this.writeMergeState({ ours, theirs, base: (base as string | undefined) ?? null, files, resolved: [], message });
      return { status: 'conflict', commit: ours, conflicts: files };
    }
  }

  private readMergeState(): MergeState | null {
    const text = this.files.read(`.git/${MERGE_STATE}`);
    return text === null ? null : (JSON.parse(text) as MergeState);
  }

  private writeMergeState(s: MergeState): void {
    // MERGE_HEAD/MERGE_MSG as git writes them, so native git sees the merge too.
    this.files.write('.git/MERGE_HEAD', `${s.theirs}\n`);
    this.files.write('.git/MERGE_MSG', `${s.message}\n`);
    this.files.write(`.git/${MERGE_STATE}`, JSON.stringify(s));
  }

  private clearMergeState(): void {
    for (const f of [MERGE_STATE, 'MERGE_HEAD', 'MERGE_MSG']) this.files.remove(`.git/${f}`);
  }

  private async blobAt(oid: string | null, filepath: string): Promise<string | null> {
    if (!oid) return null;
    try {
      const { blob } = await git.readBlob({ ...this.base, oid, filepath });
      return Buffer.from(blob).toString('utf8');
    } catch (err) {
      if (err instanceof Errors.NotFoundError) return null;
      throw err;
    }
  }

  async mergeStatus(): Promise<{ has_unfinished_merge: boolean; ours: string | null; theirs: string | null; conflicts: ConflictFile[] }> {
    const s = this.readMergeState();
    if (!s) return { has_unfinished_merge: false, ours: null, theirs: null, conflicts: [] };
    const conflicts: ConflictFile[] = [];
    for (const f of s.files) {
      conflicts.push({
        path: f,
        ours: await this.blobAt(s.ours, f),
        theirs: await this.blobAt(s.theirs, f),
        base: await this.blobAt(s.base, f),
        working: this.files.read(f),
        resolved: s.resolved.includes(f),
      });
    }
    return { has_unfinished_merge: true, ours: s.ours, theirs: s.theirs, conflicts };
  }

  /**
   * Resolves conflicted files: `ours`, `theirs`, or the full resolved content. Everything is
   * checked before anything is written: a resolution that keeps conflict markers, or a bundle
   * file that is not valid YAML, refuses the whole request.
   */
  async resolve(
    resolutions: Resolution[],
  ): Promise<{ resolved: Array<{ path: string; strategy: string; content: string | null }>; remaining: string[] }> {
    const s = this.readMergeState();
    if (!s) throw new ConflictError('No merge is in progress', 'no_merge_in_progress');
    const planned: Array<{ path: string; strategy: string; content: string | null }> = [];
    const errors: Array<{ field: string; message: string }> = [];
    for (const [i, r] of resolutions.entries()) {
      if (!s.files.includes(r.path)) {
        errors.push({ field: `body.resolutions.${i}.path`, message: `${r.path} is not a conflicted file of this merge` });
        continue;
      }
      const content = r.strategy === 'content' ? r.content : await this.blobAt(r.strategy === 'ours' ? s.ours : s.theirs, r.path);
      if (content !== null && CONFLICT_MARKER.test(content)) {
        errors.push({ field: `body.resolutions.${i}.content`, message: `${r.path} still holds conflict markers` });
        continue;
      }
      if (content !== null && /\.ya?ml$/.test(r.path)) {
        try {
          fromYaml(content);
        } catch (err) {
          errors.push({
            field: `body.resolutions.${i}.content`,
            message: `${r.path} is not valid YAML: ${(err as Error).message.split('\n')[0]}`,
          });
          continue;
        }
      }
      planned.push({ path: r.path, strategy: r.strategy, content });
    }
    if (errors.length) throw new ValidationError(errors.map((e) => e.message).join('; '), errors);
    for (const p of planned) {
      if (p.content === null) {
        this.files.remove(p.path);
        await git.remove({ ...this.base, filepath: p.path });
      } else {
        this.files.write(p.path, p.content);
        await git.add({ ...this.base, filepath: p.path });
      }
      if (!s.resolved.includes(p.path)) s.resolved.push(p.path);
    }
    this.writeMergeState(s);
    return { resolved: planned, remaining: s.files.filter((f) => !s.resolved.includes(f)) };
  }

  async abortMerge(): Promise<void> {
    const s = this.readMergeState();
    if (!s) throw new ConflictError('No merge is in progress', 'no_merge_in_progress');
    await git.abortMerge({ ...this.base, commit: 'HEAD' });
    // Files the merge brought in that HEAD does not have are not part of the pre-merge state.
    for (const f of s.files) {
      if ((await this.blobAt(s.ours, f)) === null) this.files.remove(f);
    }
    await git.checkout({ ...this.base, ref: await this.branch(), force: true });
    this.clearMergeState();
  }

  async continueMerge(message: string | undefined, author: Author): Promise<string> {
    const s = this.readMergeState();
    if (!s) throw new ConflictError('No merge is in progress', 'no_merge_in_progress');
    const remaining = s.files.filter((f) => !s.resolved.includes(f));
    if (remaining.length)
      throw new ConflictError(`Resolve every conflicted file first (left: ${remaining.join(', ')})`, 'unresolved_conflicts', {
        files: remaining,
      });
    // Files merged cleanly were written by the merge; stage the whole tree as it now stands.
    const st = await this.fileStatus();
    for (const f of [...st.modified, ...st.untracked]) {
      if (this.files.exists(f)) await git.add({ ...this.base, filepath: f });
      else await git.remove({ ...this.base, filepath: f });
    }
    const oid = await git.commit({ ...this.base, message: message ?? s.message, author, parent: [s.ours, s.theirs] });
    this.clearMergeState();
    return oid;
  }
}
