/** Reading a working copy's commits: the bundle files at one, diffs between them, the log. */
import git, { TREE, WORKDIR, type ReadCommitResult, type WalkerEntry } from 'isomorphic-git';
import { createTwoFilesPatch } from 'diff';
import { isBundlePath } from './dashboard-files.ts';
import { assertSafeTree } from './safe-tree.ts';
import type { FileDiff, HistoryEntry } from './working-copy-types.ts';
import { refOid, resolveCommit, unsafeNamed, type LocalRepo } from './working-copy-refs.ts';

const EMPTY_TREE = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';

/** The bundle files at a commit: path → text. */
export async function filesAt(repo: LocalRepo, ref: string): Promise<Map<string, string>> {
  const oid = await resolveCommit(repo, ref);
  // A commit holding a link reads as the link's text, never as a file: refused as at checkout.
  await assertSafeTree(repo.base, oid);
  const out = new Map<string, string>();
  await git.walk({
    ...repo.base,
    trees: [TREE({ ref: oid })],
    map: async (filepath, [entry]) => {
      if (!entry || filepath === '.') return true;
      if ((await entry.type()) === 'blob' && isBundlePath(filepath)) out.set(filepath, await text(entry));
      return true;
    },
  });
  return out;
}

const text = async (entry: WalkerEntry) => Buffer.from((await entry.content()) ?? new Uint8Array()).toString('utf8');

/** Unified diffs: working tree against HEAD, or between two commits. */
export async function diff(repo: LocalRepo, opts: { from?: string; to?: string; paths?: string[] } = {}): Promise<FileDiff[]> {
  const fromOid = opts.from ? await resolveCommit(repo, opts.from) : await refOid(repo, 'HEAD');
  const toOid = opts.to ? await resolveCommit(repo, opts.to) : null;
  const trees = [TREE({ ref: fromOid ?? EMPTY_TREE }), toOid ? TREE({ ref: toOid }) : WORKDIR()];
  const out: FileDiff[] = [];
  const label = (oid: string | null) => (oid ? oid.slice(0, 7) : 'empty');
  const labels = [label(fromOid), toOid ? label(toOid) : 'working tree'] as const;
  await unsafeNamed(() =>
    git.walk({
      ...repo.base,
      trees,
      map: async (filepath, [a, b]) => {
        if (filepath === '.') return true;
        if (filepath === '.git' || filepath.startsWith('.git/')) return null;
        const [ta, tb] = await Promise.all([a?.type(), b?.type()]);
        if (ta === 'tree' || tb === 'tree') return true;
        if (opts.paths && !opts.paths.includes(filepath)) return null;
        const change = await fileDiff(filepath, a, b, labels);
        if (change) out.push(change);
        return null;
      },
    }),
  );
  return out.sort((x, y) => x.path.localeCompare(y.path));
}

/** One file's diff between two walked entries (either missing), or null when its content is the same. */
async function fileDiff(
  filepath: string,
  a: WalkerEntry | null,
  b: WalkerEntry | null,
  [fromLabel, toLabel]: readonly [string, string],
): Promise<FileDiff | null> {
  const [oa, ob] = await Promise.all([a?.oid(), b?.oid()]);
  if (oa === ob) return null;
  const before = a ? await text(a) : '';
  const after = b ? await text(b) : '';
  if (a && b && before === after) return null;
  const change = !a ? 'added' : !b ? 'deleted' : 'modified';
  const patch = createTwoFilesPatch(
    a ? `a/${filepath}` : '/dev/null',
    b ? `b/${filepath}` : '/dev/null',
    before,
    after,
    fromLabel,
    toLabel,
    { context: 3 },
  );
  return { path: filepath, change, patch: patch.replace(/^=+\n/, '') };
}

export async function history(repo: LocalRepo, depth: number): Promise<HistoryEntry[]> {
  if (!(await refOid(repo, 'HEAD'))) return [];
  const logged: ReadCommitResult[] = await unsafeNamed(() => git.log({ ...repo.base, ref: 'HEAD', depth, includeChanges: true }));
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
