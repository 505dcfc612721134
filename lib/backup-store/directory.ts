import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { BlobNotFoundError, blobKey, type BackupStore } from './store.ts';

/**
 * Blobs as files under `<dir>/sha256/ab/<hash>.zip`. Writes go to a temporary file first and are
 * renamed into place, so a crash never leaves a truncated blob under its final name, and
 * concurrent writers of one hash (same bytes) cannot interleave.
 */
export class DirectoryBackupStore implements BackupStore {
  readonly kind = 'dir' as const;
  readonly location: string;
  private readonly root: string;

  constructor(dir: string) {
    this.location = path.resolve(dir);
    this.root = path.join(this.location, 'sha256');
  }

  private file(hash: string): string {
    return path.join(this.root, blobKey(hash));
  }

  async has(hash: string): Promise<boolean> {
    try {
      return (await fs.stat(this.file(hash))).isFile();
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
      throw err;
    }
  }

  async put(hash: string, bytes: Uint8Array): Promise<{ created: boolean }> {
    const file = this.file(hash);
    if (await this.has(hash)) return { created: false };
    await fs.mkdir(path.dirname(file), { recursive: true, mode: 0o750 });
    const tmp = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
    const handle = await fs.open(tmp, 'wx', 0o640);
    try {
      await handle.writeFile(bytes);
      await handle.sync(); // durable before it becomes visible under its final name
    } finally {
      await handle.close();
    }
    try {
      await fs.rename(tmp, file);
    } catch (err) {
      await fs.rm(tmp, { force: true });
      throw err;
    }
    return { created: true };
  }

  async get(hash: string): Promise<Uint8Array> {
    try {
      return new Uint8Array(await fs.readFile(this.file(hash)));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new BlobNotFoundError(hash, this.location);
      throw err;
    }
  }

  async delete(hash: string): Promise<void> {
    await fs.rm(this.file(hash), { force: true });
  }

  async *list(): AsyncIterable<string> {
    let fans: string[];
    try {
      fans = await fs.readdir(this.root);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw err;
    }
    for (const fan of fans.sort()) {
      for (const name of (await fs.readdir(path.join(this.root, fan))).sort()) {
        const m = /^([0-9a-f]{64})\.zip$/.exec(name);
        if (m) yield m[1]!;
      }
    }
  }
}
