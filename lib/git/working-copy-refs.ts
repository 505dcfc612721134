/**
 * The parts of a working copy every operation shares: the repository handle (its confined files
 * and isomorphic-git's arguments) and reading its refs, commits and blobs.
 */
import path from 'node:path';
import git, { Errors } from 'isomorphic-git';
import type { EgressPolicy } from '../egress/policy.ts';
import { AppError, ValidationError } from '../errors.ts';
import { ConfinedDir } from './confined-path.ts';
import { isGitError } from './git-errors.ts';
import { unsafeFromGit } from './safe-tree.ts';

/** One working copy as its operations see it; isomorphic-git reaches its files only through `files`. */
export interface LocalRepo {
  readonly dir: string;
  readonly files: ConfinedDir;
  /** The arguments every isomorphic-git call takes: the confined fs, the folders and the object cache. */
  readonly base: { fs: ReturnType<ConfinedDir['fs']>; dir: string; gitdir: string; cache: object };
  /** Where remotes may be (ALLOWED_UPSTREAM_HOSTS); none: anywhere. */
  readonly egress?: EgressPolicy;
}

export function openRepo(dir: string, egress: EgressPolicy | undefined): LocalRepo {
  const files = new ConfinedDir(dir);
  return { dir, files, egress, base: { fs: files.fs(), dir, gitdir: path.join(dir, '.git'), cache: {} } };
}

export async function currentBranch(repo: LocalRepo): Promise<string> {
  return (await git.currentBranch({ ...repo.base, fullname: false })) ?? 'main';
}

/** The commit a ref points at, or null when the ref does not exist (yet). */
export async function refOid(repo: LocalRepo, ref: string): Promise<string | null> {
  try {
    return await git.resolveRef({ ...repo.base, ref });
  } catch (err) {
    if (err instanceof Errors.NotFoundError) return null;
    throw err;
  }
}

export async function remoteUrl(repo: LocalRepo): Promise<string | null> {
  return ((await git.getConfig({ ...repo.base, path: 'remote.origin.url' })) as string | undefined) ?? null;
}

/** A commit id (full or abbreviated), a branch or tag name, `HEAD`, optionally followed by `~N` or `^`. */
export async function resolveCommit(repo: LocalRepo, ref: string): Promise<string> {
  const m = /^([A-Za-z0-9._\/-]{1,200})((?:~\d{0,4}|\^)*)$/.exec(ref);
  if (!m || ref.includes('..')) throw new ValidationError(`'${ref}' is not a valid git reference`);
  let oid = await resolveName(repo, m[1], ref);
  for (const step of m[2].match(/~\d*|\^/g) ?? []) {
    const n = step === '^' || step === '~' ? 1 : Number(step.slice(1));
    for (let i = 0; i < n; i++) {
      const { commit } = await git.readCommit({ ...repo.base, oid });
      if (!commit.parent[0]) throw new AppError(404, 'unknown_ref', 'Unknown reference', `'${ref}' goes past the first commit`);
      oid = commit.parent[0];
    }
  }
  return oid;
}

async function resolveName(repo: LocalRepo, name: string, ref: string): Promise<string> {
  const base = repo.base;
  try {
    const oid = /^[0-9a-f]{4,40}$/i.test(name)
      ? // expected: a hex name that is no object's prefix is tried as a ref, which reports its own failure.
        await git.expandOid({ ...base, oid: name.toLowerCase() }).catch(() => git.resolveRef({ ...base, ref: name }))
      : await git.resolveRef({ ...base, ref: name });
    // expected: an object that cannot be read is no commit: NotFoundError below.
    const { type } = await git.readObject({ ...base, oid, format: 'parsed' }).catch(() => ({ type: 'missing' }));
    if (type !== 'commit') throw new Errors.NotFoundError(ref);
    return oid;
  } catch (err) {
    // Any of isomorphic-git's own refusals (not found, ambiguous, invalid name) means "no such commit".
    if (err instanceof Errors.NotFoundError || err instanceof Errors.AmbiguousError || isGitError(err))
      throw new AppError(404, 'unknown_ref', 'Unknown reference', `'${ref}' names no commit of this repository`);
    throw err;
  }
}

/** A file's text at a commit, or null when the commit (or the file in it) does not exist. */
export async function blobAt(repo: LocalRepo, oid: string | null, filepath: string): Promise<string | null> {
  if (!oid) return null;
  try {
    const { blob } = await git.readBlob({ ...repo.base, oid, filepath });
    return Buffer.from(blob).toString('utf8');
  } catch (err) {
    if (err instanceof Errors.NotFoundError) return null;
    throw err;
  }
}

/** Stages each file as it now stands in the working tree: added when present, removed when gone. */
export async function stageAsIs(repo: LocalRepo, files: Iterable<string>): Promise<void> {
  for (const f of files) {
    if (repo.files.exists(f)) await git.add({ ...repo.base, filepath: f });
    else await git.remove({ ...repo.base, filepath: f });
  }
}

/** Runs isomorphic-git, reporting its refusal of an unsafe name the way safe-tree.ts does (a 409 naming the path). */
export async function unsafeNamed<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw unsafeFromGit(err);
  }
}
