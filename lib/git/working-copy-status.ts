/**
 * What a working copy's status says (staged, modified and untracked files, the branch against its
 * remote, the merge in progress) and the in-memory answer kept while nothing that decides it changed.
 */
import git from 'isomorphic-git';
import type { FileStatus, MergeState, WorkingCopyStatus } from './working-copy-types.ts';
import { currentBranch, refOid, remoteUrl, type LocalRepo } from './working-copy-refs.ts';

const MERGE_STATE = 'switchyard-merge.json';
const STATUS_CACHE = new Map<string, { key: string; status: WorkingCopyStatus }>();
const STATUS_CACHE_MAX = 10_000;
const RACY_MS = 3_000;

export function readMergeState(repo: LocalRepo): MergeState | null {
  const text = repo.files.read(`.git/${MERGE_STATE}`);
  return text === null ? null : (JSON.parse(text) as MergeState);
}

export function writeMergeState(repo: LocalRepo, s: MergeState): void {
  // MERGE_HEAD/MERGE_MSG as git writes them, so native git sees the merge too.
  repo.files.write('.git/MERGE_HEAD', `${s.theirs}\n`);
  repo.files.write('.git/MERGE_MSG', `${s.message}\n`);
  repo.files.write(`.git/${MERGE_STATE}`, JSON.stringify(s));
}

export function clearMergeState(repo: LocalRepo): void {
  for (const f of [MERGE_STATE, 'MERGE_HEAD', 'MERGE_MSG']) repo.files.remove(`.git/${f}`);
}

/** Staged, modified and untracked files (a read-only scan: the index is not rewritten). */
export async function fileStatus(repo: LocalRepo): Promise<FileStatus> {
  const rows = await git.statusMatrix({ ...repo.base, refresh: false } as Parameters<typeof git.statusMatrix>[0]);
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
 * Files changed in the last few seconds are never trusted to their stat (racy timestamps); `now`
 * is the clock that decides "the last few seconds" (a test sets it ahead instead of waiting, as
 * a file's ctime cannot be set back).
 */
export async function status(repo: LocalRepo, now: () => number = Date.now): Promise<WorkingCopyStatus> {
  const key = fingerprint(repo, now());
  const hit = key ? STATUS_CACHE.get(repo.dir) : undefined;
  if (hit && hit.key === key) return structuredClone(hit.status);
  const status = await scanStatus(repo);
  if (key && fingerprint(repo, now()) === key) {
    if (STATUS_CACHE.size >= STATUS_CACHE_MAX) STATUS_CACHE.delete(STATUS_CACHE.keys().next().value!);
    STATUS_CACHE.set(repo.dir, { key, status: structuredClone(status) });
  }
  return status;
}

function fingerprint(repo: LocalRepo, now: number): string | null {
  const parts: string[] = [];
  let racy = false;
  const add = (file: string, label: string) => {
    const st = repo.files.lstat(file);
    if (!st) return void parts.push(`${label}:-`);
    if (now - st.mtimeMs < RACY_MS || now - st.ctimeMs < RACY_MS) racy = true;
    parts.push(`${label}:${st.size}:${st.mtimeMs}:${st.ctimeMs}:${st.ino}`);
  };
  const head = repo.files.read('.git/HEAD')?.trim();
  if (head === undefined) return null;
  parts.push(head);
  const branch = head.startsWith('ref: refs/heads/') ? head.slice('ref: refs/heads/'.length) : '';
  for (const f of ['index', 'config', 'packed-refs', MERGE_STATE, `refs/heads/${branch}`, `refs/remotes/origin/${branch}`])
    add(`.git/${f}`, f);
  for (const f of repo.files.listFiles()) add(f, f);
  return racy ? null : parts.join('|');
}

async function scanStatus(repo: LocalRepo): Promise<WorkingCopyStatus> {
  const [files, branch, head] = await Promise.all([fileStatus(repo), currentBranch(repo), refOid(repo, 'HEAD')]);
  const hasRemote = (await remoteUrl(repo)) !== null;
  const remoteHead = hasRemote ? await refOid(repo, `refs/remotes/origin/${branch}`) : null;
  const { ahead, behind } = await aheadBehind(repo, head, remoteHead, hasRemote);
  const merge = readMergeState(repo);
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

async function aheadBehind(
  repo: LocalRepo,
  head: string | null,
  remote: string | null,
  hasRemote: boolean,
): Promise<{ ahead: number; behind: number }> {
  if (!hasRemote || head === remote) return { ahead: 0, behind: 0 };
  const ours = head ? await ancestry(repo, head) : new Set<string>();
  if (!remote) return { ahead: ours.size, behind: 0 }; // never pushed: every local commit is ahead
  const theirs = await ancestry(repo, remote);
  let ahead = 0;
  let behind = 0;
  for (const c of ours) if (!theirs.has(c)) ahead++;
  for (const c of theirs) if (!ours.has(c)) behind++;
  return { ahead, behind };
}

async function ancestry(repo: LocalRepo, oid: string): Promise<Set<string>> {
  const commits = await git.log({ ...repo.base, ref: oid, depth: 5000 });
  return new Set(commits.map((c) => c.oid));
}
