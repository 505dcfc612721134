/**
 * The one decider of where a working copy's files may be read and written: inside its folder, as
 * the file system resolves it. A path is joined to the folder, then the real path of its parent
 * (fs.realpath: every symbolic link on the way resolved) must lie inside the folder's real path,
 * and the leaf itself must not be a symbolic link (lstat), since reading or writing it would
 * follow the link wherever it points. Only removing a link, or reading what it says (lstat,
 * readlink), is allowed on one.
 *
 * Switchyard never makes a link in a working copy (a remote tree holding one is refused before
 * checkout, lib/git/safe-tree.ts), so a link found here came from outside; everything that
 * touches a working copy goes through this module: WorkingCopy's own reads and writes, and
 * isomorphic-git's, which gets `confinedFs` as its file system and so is held to the same rule
 * while it checks out, merges and writes its index.
 */
import fs from 'node:fs';
import path from 'node:path';
import { AppError } from '../errors.ts';

/** What a person can do about a refusal (the shape of contracts/outcomes.ts NextAction; lib imports no contracts). */
export interface PathNextAction {
  action: string;
  description: string;
  request?: { method: string; path: string; body: unknown };
}

export type UnsafePathReason =
  | 'symlink'
  | 'submodule'
  | 'parent_directory'
  | 'current_directory'
  | 'git_directory'
  | 'separator'
  | 'empty_name'
  | 'nul'
  | 'outside_working_copy';

const REASON_WORDS: Record<UnsafePathReason, string> = {
  symlink: 'is a symbolic link',
  submodule: 'is a submodule (a gitlink) where a file is expected',
  parent_directory: "is named '..'",
  current_directory: "is named '.'",
  git_directory: 'is named like .git (the repository folder) on some file system',
  separator: 'holds a path separator (/ or \\) in one name',
  empty_name: 'has an empty name',
  nul: 'holds a NUL character',
  outside_working_copy: 'resolves outside the working copy',
};

/** A path a working copy may not read or write, named, with the reason and what to do about it. */
export class UnsafePathError extends AppError {
  override name = 'UnsafePathError';
  readonly path: string;
  readonly reason: UnsafePathReason;
  constructor(filepath: string, reason: UnsafePathReason, opts: { where: string; nextActions: PathNextAction[] }) {
    super(409, 'unsafe_path', 'Unsafe path', `${opts.where}: ${JSON.stringify(filepath)} ${REASON_WORDS[reason]}; nothing was written`, {
      extra: { path: filepath, reason, next_actions: opts.nextActions },
    });
    this.path = filepath;
    this.reason = reason;
  }
}

type Leaf = 'no_link' | 'any';

const within = (root: string, p: string) => p === root || p.startsWith(root.endsWith(path.sep) ? root : root + path.sep);

function outside(root: string, abs: string): UnsafePathError {
  const rel = path.relative(root, abs) || '.';
  return new UnsafePathError(rel.split(path.sep).join('/'), 'outside_working_copy', {
    where: 'the working copy refused a file access',
    nextActions: [
      {
        action: 'remove_link',
        description: `A symbolic link in the working copy (${root}) leads outside it; an administrator removes it (or the working copy, then init again), since Switchyard never makes one`,
      },
    ],
  });
}

function linkLeaf(root: string, abs: string): UnsafePathError {
  const rel = path.relative(root, abs).split(path.sep).join('/');
  return new UnsafePathError(rel, 'symlink', {
    where: 'the working copy refused a file access',
    nextActions: [
      {
        action: 'remove_link',
        description: `${rel} in the working copy (${root}) is a symbolic link; an administrator removes it (or the working copy, then init again), since Switchyard never makes one`,
      },
    ],
  });
}

const isMissing = (err: unknown) => ['ENOENT', 'ENOTDIR'].includes((err as NodeJS.ErrnoException)?.code ?? '');

/**
 * A working copy's folder and the only ways into it. `root` need not exist yet: the parts of a
 * path that do not exist cannot be links, so the real path of its deepest existing folder decides.
 */
export class ConfinedDir {
  readonly root: string;
  /** The folder's real path, once it exists (the server makes it; nothing in it can move it). */
  private rootReal?: string;
  constructor(root: string) {
    this.root = path.resolve(root);
  }

  private realRootSync(): string {
    if (this.rootReal) return this.rootReal;
    const real = this.realSync(this.root);
    if (lstatSync(this.root)) this.rootReal = real;
    return real;
  }

  private async realRoot(): Promise<string> {
    if (this.rootReal) return this.rootReal;
    const real = await this.real(this.root);
    if (lstatSync(this.root)) this.rootReal = real;
    return real;
  }

  private lexical(p: string): string {
    if (typeof p !== 'string') throw new TypeError('a path is required');
    // A NUL needs no rule here: Node refuses it in every file system call (a fault, not a refusal).
    const abs = path.resolve(this.root, p);
    if (!within(this.root, abs)) throw outside(this.root, abs);
    return abs;
  }

  /** The real path of `p`'s deepest existing ancestor, with the missing rest appended. */
  private realSync(p: string): string {
    try {
      return fs.realpathSync.native(p);
    } catch (err) {
      if (!isMissing(err) || path.dirname(p) === p) throw err;
      return path.join(this.realSync(path.dirname(p)), path.basename(p));
    }
  }

  private async real(p: string): Promise<string> {
    try {
      return await fs.promises.realpath(p);
    } catch (err) {
      if (!isMissing(err) || path.dirname(p) === p) throw err;
      return path.join(await this.real(path.dirname(p)), path.basename(p));
    }
  }

  /** `p` (relative to the folder, or absolute) as an absolute path, once it is known to stay inside. */
  resolveSync(p: string, leaf: Leaf = 'no_link'): string {
    const abs = this.lexical(p);
    if (abs === this.root) return abs;
    if (!within(this.realRootSync(), this.realSync(path.dirname(abs)))) throw outside(this.root, abs);
    if (leaf === 'no_link' && lstatSync(abs)?.isSymbolicLink()) throw linkLeaf(this.root, abs);
    return abs;
  }

  async resolve(p: string, leaf: Leaf = 'no_link'): Promise<string> {
    const abs = this.lexical(p);
    if (abs === this.root) return abs;
    const [root, parent] = await Promise.all([this.realRoot(), this.real(path.dirname(abs))]);
    if (!within(root, parent)) throw outside(this.root, abs);
    if (leaf === 'no_link') {
      const st = await fs.promises.lstat(abs).catch((err: unknown) => {
        if (isMissing(err)) return null;
        throw err;
      });
      if (st?.isSymbolicLink()) throw linkLeaf(this.root, abs);
    }
    return abs;
  }

  // --- what WorkingCopy reads and writes itself ------------------------------------------------

  exists(rel: string): boolean {
    return lstatSync(this.resolveSync(rel, 'any')) !== null;
  }

  /** Size, times and inode of the entry itself (a link is not followed); null when missing. */
  lstat(rel: string): fs.Stats | null {
    return lstatSync(this.resolveSync(rel, 'any'));
  }

  /** The file's text, or null when there is none. */
  read(rel: string): string | null {
    const abs = this.resolveSync(rel);
    try {
      return fs.readFileSync(abs, 'utf8');
    } catch (err) {
      if (isMissing(err)) return null;
      throw err;
    }
  }

  /** Writes the file, making its folders first. */
  write(rel: string, text: string): void {
    const abs = this.resolveSync(rel);
    fs.mkdirSync(this.resolveSync(path.dirname(abs)), { recursive: true });
    // The folders just made are plain ones, so the check above still holds for the leaf.
    fs.writeFileSync(this.resolveSync(abs), text);
  }

  /** Removes a file (or a link itself, never what it points to); nothing when missing. */
  remove(rel: string): void {
    fs.rmSync(this.resolveSync(rel, 'any'), { force: true });
  }

  removeEmptyDir(rel: string): void {
    const abs = this.resolveSync(rel);
    if (lstatSync(abs)?.isDirectory() && fs.readdirSync(abs).length === 0) fs.rmdirSync(abs);
  }

  /** Every file of the working tree (links listed, never followed; `.git` left out), relative, with `/`. */
  listFiles(rel = ''): string[] {
    const out: string[] = [];
    const dir = this.resolveSync(rel || '.');
    if (!lstatSync(dir)?.isDirectory()) return out;
    for (const d of fs.readdirSync(dir, { withFileTypes: true })) {
      if (d.name === '.git') continue;
      const p = rel ? `${rel}/${d.name}` : d.name;
      if (d.isDirectory()) out.push(...this.listFiles(p));
      else out.push(p);
    }
    return out;
  }

  /** The file system isomorphic-git is given: every path it names is held to the same rule. */
  fs() {
    const p = fs.promises;
    const at = (leaf: Leaf) => (f: string) => this.resolve(f, leaf);
    const [safe, any] = [at('no_link'), at('any')];
    const promises = {
      readFile: async (f: string, o?: unknown) => p.readFile(await safe(f), o as never),
      writeFile: async (f: string, d: Uint8Array | string, o?: unknown) => p.writeFile(await safe(f), d, o as never),
      mkdir: async (f: string, o?: unknown) => p.mkdir(await safe(f), o as never),
      rmdir: async (f: string, o?: unknown) => p.rmdir(await safe(f), o as never),
      unlink: async (f: string) => p.unlink(await any(f)),
      rm: async (f: string, o?: unknown) => p.rm(await any(f), o as never),
      stat: async (f: string, o?: unknown) => p.stat(await safe(f), o as never),
      lstat: async (f: string, o?: unknown) => p.lstat(await any(f), o as never),
      readdir: async (f: string, o?: unknown) => p.readdir(await safe(f), o as never),
      readlink: async (f: string, o?: unknown) => p.readlink(await any(f), o as never),
      // Never made: a tree holding a link is refused before checkout (safe-tree.ts); this is the backstop.
      symlink: async (_target: string, f: string) => {
        const rel = path.relative(this.root, this.lexical(f)).split(path.sep).join('/');
        throw new UnsafePathError(rel, 'symlink', {
          where: 'a symbolic link was about to be written into the working copy',
          nextActions: [{ action: 'fix_remote', description: `Replace ${rel} in the remote branch by a plain file, push, and pull again` }],
        });
      },
    };
    return { promises };
  }
}

function lstatSync(abs: string): fs.Stats | null {
  try {
    return fs.lstatSync(abs);
  } catch (err) {
    if (isMissing(err)) return null;
    throw err;
  }
}
