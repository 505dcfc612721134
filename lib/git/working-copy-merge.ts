/**
 * Bringing a fetched commit into a working copy: a fast-forward or clean merge moves the branch;
 * a conflict leaves the merge in progress (switchyard-merge.json beside git's own MERGE_HEAD) with
 * conflict markers in the working tree, to be resolved file by file and continued, or aborted.
 */
import git, { Errors } from 'isomorphic-git';
import { ConflictError, ValidationError } from '../errors.ts';
import { fromYaml } from './dashboard-files.ts';
import { unsafeFromGit } from './safe-tree.ts';
import { clearMergeState, fileStatus, readMergeState, writeMergeState } from './working-copy-status.ts';
import type { Author, ConflictFile, MergeState, Resolution } from './working-copy-types.ts';
import { blobAt, currentBranch, refOid, stageAsIs, type LocalRepo } from './working-copy-refs.ts';

const CONFLICT_MARKER = /^(<{7}|={7}|>{7})( |$)/m;

export type PullOutcome = { status: 'up_to_date' | 'fast_forward' | 'merged' | 'conflict'; commit: string | null; conflicts: string[] };
type Planned = { path: string; strategy: string; content: string | null };

function inProgress(repo: LocalRepo): MergeState {
  const s = readMergeState(repo);
  if (!s) throw new ConflictError('No merge is in progress', 'no_merge_in_progress');
  return s;
}

/** Brings `theirs` (the fetched remote branch) into the current branch. */
export async function integrate(repo: LocalRepo, theirs: string | null, author: Author): Promise<PullOutcome> {
  const base = repo.base;
  const branch = await currentBranch(repo);
  const ours = await refOid(repo, 'HEAD');
  if (!theirs || theirs === ours) return { status: 'up_to_date', commit: ours, conflicts: [] };
  if (ours && (await git.isDescendent({ ...base, oid: ours, ancestor: theirs, depth: -1 })))
    return { status: 'up_to_date', commit: ours, conflicts: [] };
  if (!ours || (await git.isDescendent({ ...base, oid: theirs, ancestor: ours, depth: -1 }))) {
    await git.writeRef({ ...base, ref: `refs/heads/${branch}`, value: theirs, force: true });
    await git.checkout({ ...base, ref: branch, force: true });
    return { status: 'fast_forward', commit: theirs, conflicts: [] };
  }
  const [mergeBase] = await git.findMergeBase({ ...base, oids: [ours, theirs] });
  const message = `Merge remote-tracking branch 'origin/${branch}'`;
  try {
    const r = await git.merge({ ...base, ours: branch, theirs, author, committer: author, message, abortOnConflict: false });
    await git.checkout({ ...base, ref: branch, force: true });
    return { status: 'merged', commit: r.oid ?? (await refOid(repo, 'HEAD')), conflicts: [] };
  } catch (err) {
    if (!(err instanceof Errors.MergeConflictError)) throw unsafeFromGit(err);
    const files = [...new Set(err.data.filepaths)].sort();
    writeMergeState(repo, { ours, theirs, base: (mergeBase as string | undefined) ?? null, files, resolved: [], message });
    return { status: 'conflict', commit: ours, conflicts: files };
  }
}

export async function mergeStatus(
  repo: LocalRepo,
): Promise<{ has_unfinished_merge: boolean; ours: string | null; theirs: string | null; conflicts: ConflictFile[] }> {
  const s = readMergeState(repo);
  if (!s) return { has_unfinished_merge: false, ours: null, theirs: null, conflicts: [] };
  const conflicts: ConflictFile[] = [];
  for (const f of s.files) {
    conflicts.push({
      path: f,
      ours: await blobAt(repo, s.ours, f),
      theirs: await blobAt(repo, s.theirs, f),
      base: await blobAt(repo, s.base, f),
      working: repo.files.read(f),
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
export async function resolve(repo: LocalRepo, resolutions: Resolution[]): Promise<{ resolved: Planned[]; remaining: string[] }> {
  const s = inProgress(repo);
  const planned: Planned[] = [];
  const errors: Array<{ field: string; message: string }> = [];
  for (const [i, r] of resolutions.entries()) {
    if (!s.files.includes(r.path)) {
      errors.push({ field: `body.resolutions.${i}.path`, message: `${r.path} is not a conflicted file of this merge` });
      continue;
    }
    const content = r.strategy === 'content' ? r.content : await blobAt(repo, r.strategy === 'ours' ? s.ours : s.theirs, r.path);
    const problem = content === null ? null : contentProblem(r.path, content);
    if (problem) errors.push({ field: `body.resolutions.${i}.content`, message: problem });
    else planned.push({ path: r.path, strategy: r.strategy, content });
  }
  if (errors.length) throw new ValidationError(errors.map((e) => e.message).join('; '), errors);
  for (const p of planned) {
    if (p.content === null) {
      repo.files.remove(p.path);
      await git.remove({ ...repo.base, filepath: p.path });
    } else {
      repo.files.write(p.path, p.content);
      await git.add({ ...repo.base, filepath: p.path });
    }
    if (!s.resolved.includes(p.path)) s.resolved.push(p.path);
  }
  writeMergeState(repo, s);
  return { resolved: planned, remaining: s.files.filter((f) => !s.resolved.includes(f)) };
}

/** Why a resolved file's content cannot be taken: markers left in it, or a bundle file that is not YAML. */
function contentProblem(filepath: string, content: string): string | null {
  if (CONFLICT_MARKER.test(content)) return `${filepath} still holds conflict markers`;
  if (!/\.ya?ml$/.test(filepath)) return null;
  try {
    fromYaml(content);
    return null;
  } catch (err) {
    return `${filepath} is not valid YAML: ${(err as Error).message.split('\n')[0]}`;
  }
}

export async function abortMerge(repo: LocalRepo): Promise<void> {
  const s = inProgress(repo);
  await git.abortMerge({ ...repo.base, commit: 'HEAD' });
  // Files the merge brought in that HEAD does not have are not part of the pre-merge state.
  for (const f of s.files) {
    if ((await blobAt(repo, s.ours, f)) === null) repo.files.remove(f);
  }
  await git.checkout({ ...repo.base, ref: await currentBranch(repo), force: true });
  clearMergeState(repo);
}

export async function continueMerge(repo: LocalRepo, message: string | undefined, author: Author): Promise<string> {
  const s = inProgress(repo);
  const remaining = s.files.filter((f) => !s.resolved.includes(f));
  if (remaining.length)
    throw new ConflictError(`Resolve every conflicted file first (left: ${remaining.join(', ')})`, 'unresolved_conflicts', {
      files: remaining,
    });
  // Files merged cleanly were written by the merge; stage the whole tree as it now stands.
  const st = await fileStatus(repo);
  await stageAsIs(repo, [...st.modified, ...st.untracked]);
  const oid = await git.commit({ ...repo.base, message: message ?? s.message, author, parent: [s.ours, s.theirs] });
  clearMergeState(repo);
  return oid;
}
