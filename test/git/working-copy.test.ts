import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { WorkingCopy } from '../../lib/git/working-copy.ts';
import { openRepo } from '../../lib/git/working-copy-refs.ts';
import { status } from '../../lib/git/working-copy-status.ts';

// The working copy on its own (no server): status stays true when it is answered from the
// stat fingerprint, whatever changed since the last scan.
const author = { name: 'T', email: 't@example.com' };
const OLD = (s: number) => new Date(Date.UTC(2020, 0, 1, 0, 0, s));
/**
 * The status on a clock a minute ahead: every file then counts as settled (past the racy window),
 * so the scan is cached at once, where waiting out the window took 3 s a test (a file's ctime,
 * part of the fingerprint, cannot be set back the way its mtime is).
 */
const statusSettled = (dir: string) => status(openRepo(dir, undefined), () => Date.now() + 60_000);

async function repo() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wc-'));
  const wc = new WorkingCopy(dir);
  await wc.init({ branch: 'main', author, readme: '# r\n', remoteUrl: 'http://127.0.0.1:9/x/y.git' });
  await wc.writeBundle(
    new Map([
      ['metadata.yaml', 'version: 1\n'],
      ['charts/c.yaml', 'name: aaaa\n'],
    ]),
  );
  await wc.commit('first', author);
  const age = (s: number) => {
    for (const f of ['README.md', 'metadata.yaml', 'charts/c.yaml', '.git/index', '.git/HEAD', '.git/config', '.git/refs/heads/main'])
      fs.utimesSync(path.join(dir, f), OLD(s), OLD(s));
  };
  return { dir, wc, age };
}

describe('working copy status', () => {
  it('a same-size edit with the old mtime restored is still seen (ctime and inode are part of the fingerprint)', async () => {
    const { dir, age } = await repo();
    age(1);
    const clean = await statusSettled(dir);
    expect(clean).toMatchObject({ modified: [], untracked: [], staged: [], ahead: 2 });
    expect(await statusSettled(dir)).toEqual(clean);
    fs.writeFileSync(path.join(dir, 'charts/c.yaml'), 'name: bbbb\n');
    fs.utimesSync(path.join(dir, 'charts/c.yaml'), OLD(1), OLD(1));
    expect((await statusSettled(dir)).modified).toEqual(['charts/c.yaml']);
  });

  it('a new file and a commit by another process each change the answer', async () => {
    const { dir, age } = await repo();
    age(2);
    const before = await statusSettled(dir);
    fs.writeFileSync(path.join(dir, 'notes.txt'), 'x\n');
    expect((await statusSettled(dir)).untracked).toEqual(['notes.txt']);
    fs.rmSync(path.join(dir, 'notes.txt'));
    const other = new WorkingCopy(dir); // another instance: as another process would see it
    await other.writeBundle(
      new Map([
        ['metadata.yaml', 'version: 2\n'],
        ['charts/c.yaml', 'name: aaaa\n'],
      ]),
    );
    const c = await other.commit('second', author);
    const after = await statusSettled(dir);
    expect(after.head).toBe(c.commit);
    expect(after.head).not.toBe(before.head);
    expect(after.ahead).toBe(3);
  });
});

describe('working copy history', () => {
  it('lists each commit once after a merge, newest first, however many parents lead to it', async () => {
    const { dir, wc } = await repo();
    const git = (await import('isomorphic-git')).default;
    const base = { fs, dir };
    const sign = { name: author.name, email: author.email };
    await git.branch({ ...base, ref: 'side' });
    fs.writeFileSync(path.join(dir, 'charts/c.yaml'), 'name: main\n');
    await git.add({ ...base, filepath: 'charts/c.yaml' });
    await git.commit({ ...base, message: 'on main', author: sign });
    await git.checkout({ ...base, ref: 'side' });
    fs.writeFileSync(path.join(dir, 'metadata.yaml'), 'version: 2\n');
    await git.add({ ...base, filepath: 'metadata.yaml' });
    await git.commit({ ...base, message: 'on side', author: sign });
    await git.checkout({ ...base, ref: 'main' });
    await git.merge({ ...base, ours: 'main', theirs: 'side', author: sign, message: 'merge side' });
    await git.checkout({ ...base, ref: 'main' });

    const history = await wc.history(50);
    const ids = history.map((h) => h.commit);
    expect(new Set(ids).size).toBe(ids.length);
    expect(history.map((h) => h.message)).toEqual(expect.arrayContaining(['merge side', 'on main', 'on side', 'first']));
    expect(history[0]!.message).toBe('merge side');
    expect(await wc.history(2)).toHaveLength(2);
  });
});
