/**
 * Which trees a working copy may take from a remote: only folders and plain files, each named so
 * that it stays where it is on every file system. A tree is walked (isomorphic-git's readTree,
 * from its objects, nothing written) before anything of it is checked out or merged, and the
 * first entry that could write outside the working copy, or through a link, refuses the whole
 * commit with its path named:
 *   - a symbolic link (mode 120000): a later write of the file would follow it anywhere;
 *   - a submodule (gitlink, mode 160000): not a file, and nothing a dashboard repository holds;
 *   - a name git itself refuses in verify_path(): empty, `.`, `..`, one holding `/`, `\` or NUL,
 *     and `.git` as any file system may read it (any case, trailing dots or spaces as NTFS drops
 *     them, an NTFS stream suffix, the 8.3 alias `git~1`, HFS+'s ignored characters).
 * isomorphic-git refuses most such names while parsing a tree; that refusal is reported the same
 * way (unsafeFromGit), so a caller sees one error whichever layer saw the name first.
 */
import git, { Errors } from 'isomorphic-git';
import { UnsafePathError, type UnsafePathReason } from './confined-path.ts';

const FILE_MODES = new Set(['100644', '100755']);
const TREE_MODE = '040000';
// Characters HFS+ ignores when it compares names (git's is_hfs_dotgit).
const HFS_IGNORED = /[\u200C-\u200F\u202A-\u202E\u206A-\u206F\uFEFF]/g;

/** Why one tree entry may not be checked out, or null when it may. */
export function entryProblem(name: string, mode: string): UnsafePathReason | null {
  if (name.includes('\0')) return 'nul';
  if (name === '') return 'empty_name';
  if (name.includes('/') || name.includes('\\')) return 'separator';
  const hfs = name.replace(HFS_IGNORED, '');
  if (hfs === '.') return 'current_directory';
  if (hfs === '..') return 'parent_directory';
  const ntfs = hfs
    .split(':')[0]
    .toLowerCase()
    .replace(/[. ]+$/, '');
  if (ntfs === '.git' || /^git~\d$/.test(ntfs)) return 'git_directory';
  if (mode === '120000') return 'symlink';
  if (mode === '160000') return 'submodule';
  if (!FILE_MODES.has(mode) && mode !== TREE_MODE) return 'symlink'; // no other mode is a file or folder
  return null;
}

type GitBase = Pick<Parameters<typeof git.readTree>[0], 'fs' | 'dir' | 'gitdir' | 'cache'>;

function refusal(filepath: string, reason: UnsafePathReason, commit?: string): UnsafePathError {
  return new UnsafePathError(filepath, reason, {
    where: commit ? `commit ${commit.slice(0, 10)} was refused before checkout` : 'a commit of the repository was refused',
    nextActions: [
      {
        action: 'fix_remote',
        description: `Replace ${JSON.stringify(filepath)} in the remote branch by a plain file (or remove it), push that, and pull again; Switchyard takes only folders and plain files`,
      },
    ],
  });
}

/** Walks every tree of `commit`; throws UnsafePathError naming the first entry that may not be checked out. */
export async function assertSafeTree(base: GitBase, commit: string): Promise<void> {
  const { commit: c } = await git.readCommit({ ...base, oid: commit });
  const pending: Array<{ oid: string; dir: string }> = [{ oid: c.tree, dir: '' }];
  while (pending.length) {
    const { oid, dir } = pending.pop()!;
    let entries;
    try {
      ({ tree: entries } = await git.readTree({ ...base, oid }));
    } catch (err) {
      throw unsafeFromGit(err, { commit, dir });
    }
    for (const e of entries) {
      const filepath = dir ? `${dir}/${e.path}` : e.path;
      const reason = entryProblem(e.path, e.mode);
      if (reason) throw refusal(filepath, reason, commit);
      if (e.mode === TREE_MODE) pending.push({ oid: e.oid, dir: filepath });
    }
  }
}

/**
 * isomorphic-git's UnsafeFilepathError (a tree or index entry with a name it will not use) as
 * UnsafePathError naming the path; any other error is returned unchanged.
 */
export function unsafeFromGit(err: unknown, at: { commit?: string; dir?: string } = {}): unknown {
  if ((err as { code?: string })?.code !== Errors.UnsafeFilepathError.code) return err;
  const name = String((err as { data?: { filepath?: unknown } }).data?.filepath ?? '');
  const filepath = at.dir ? `${at.dir}/${name}` : name;
  const reason = entryProblem(name, '100644') ?? 'outside_working_copy';
  return refusal(filepath, reason, at.commit);
}
