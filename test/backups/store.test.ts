import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BlobNotFoundError,
  createBackupStore,
  DirectoryBackupStore,
  S3BackupStore,
  type BackupStore,
} from '../../lib/backup-store/index.ts';
import { loadConfig } from '../../lib/config.ts';
import { EgressPolicy } from '../../lib/egress/policy.ts';
import { startLocalS3, type LocalS3 } from '../support/s3-server.ts';

const hashOf = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');
const blob = (n = 2048) => new Uint8Array(randomBytes(n));

let s3: LocalS3;
let dir: string;
beforeAll(async () => {
  s3 = await startLocalS3();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'backup-dir-'));
});
afterAll(async () => {
  await s3?.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

const stores: Array<[string, () => BackupStore]> = [
  ['directory', () => new DirectoryBackupStore(dir)],
  [
    's3 bucket (real local S3 server)',
    () =>
      new S3BackupStore({
        endpoint: s3.endpoint,
        bucket: s3.bucket,
        region: 'us-east-1',
        accessKeyId: s3.accessKeyId,
        secretAccessKey: s3.secretAccessKey,
        forcePathStyle: true,
      }),
  ],
];

describe.each(stores)('%s store', (_name, make) => {
  it('stores a blob once under its hash, reads it back byte for byte, and deletes it idempotently', async () => {
    const store = make();
    const bytes = blob();
    const hash = hashOf(bytes);
    expect(await store.has(hash)).toBe(false);
    expect(await store.put(hash, bytes)).toEqual({ created: true });
    expect(await store.put(hash, bytes)).toEqual({ created: false }); // content-addressed: nothing new
    expect(await store.has(hash)).toBe(true);
    expect(Buffer.from(await store.get(hash)).equals(Buffer.from(bytes))).toBe(true);
    const listed: string[] = [];
    for await (const h of store.list()) listed.push(h);
    expect(listed).toContain(hash);
    await store.delete(hash);
    await store.delete(hash);
    expect(await store.has(hash)).toBe(false);
    await expect(store.get(hash)).rejects.toBeInstanceOf(BlobNotFoundError);
  });

  it('refuses keys that are not sha256 hashes (no path or key injection)', async () => {
    const store = make();
    for (const bad of ['../../etc/passwd', 'ABC', `${'a'.repeat(63)}/`, '']) {
      await expect(store.put(bad, blob(10))).rejects.toThrow(/not a sha256 content hash/);
      await expect(store.get(bad)).rejects.toThrow(/not a sha256 content hash/);
    }
  });

  it('keeps concurrent writers of the same content consistent', async () => {
    const store = make();
    const bytes = blob(64 * 1024);
    const hash = hashOf(bytes);
    const results = await Promise.all(Array.from({ length: 6 }, () => store.put(hash, bytes)));
    expect(results.filter((r) => r.created).length).toBeGreaterThanOrEqual(1);
    expect(Buffer.from(await store.get(hash)).equals(Buffer.from(bytes))).toBe(true);
    await store.delete(hash);
  });
});

describe('directory store layout', () => {
  it('writes <dir>/sha256/ab/<hash>.zip and leaves no temporary files', async () => {
    const store = new DirectoryBackupStore(dir);
    const bytes = blob();
    const hash = hashOf(bytes);
    await store.put(hash, bytes);
    const file = path.join(dir, 'sha256', hash.slice(0, 2), `${hash}.zip`);
    expect(fs.existsSync(file)).toBe(true);
    expect(fs.readdirSync(path.dirname(file)).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });
});

describe('s3 store against the real server', () => {
  it('stores objects under switchyard/backups/sha256/ in the bucket (seen on the server side)', async () => {
    const store = stores[1]![1]();
    const bytes = blob();
    const hash = hashOf(bytes);
    await store.put(hash, bytes);
    const onDisk = fs.readdirSync(s3.directory, { recursive: true }).map(String);
    expect(onDisk.some((p) => p.includes(path.join('switchyard', 'backups', 'sha256', hash.slice(0, 2))) && p.includes(hash))).toBe(true);
  });

  it('surfaces a refused request with the operation, key and HTTP status (unknown access key)', async () => {
    const store = new S3BackupStore({
      endpoint: s3.endpoint,
      bucket: s3.bucket,
      region: 'us-east-1',
      accessKeyId: 'NOT-A-KEY',
      secretAccessKey: 'wrong',
      forcePathStyle: true,
    });
    const bytes = blob();
    await expect(store.put(hashOf(bytes), bytes)).rejects.toThrow(/S3 (HEAD|PUT) switchyard\/backups\/sha256\/.* failed \(HTTP 403\)/);
  });

  it('names a missing bucket in the error', async () => {
    const store = new S3BackupStore({
      endpoint: s3.endpoint,
      bucket: 'no-such-bucket',
      region: 'us-east-1',
      accessKeyId: 'S3RVER',
      secretAccessKey: 'S3RVER',
      forcePathStyle: true,
    });
    const bytes = blob();
    await expect(store.put(hashOf(bytes), bytes)).rejects.toThrow(/HTTP 404|NoSuchBucket/);
  });
});

describe('configuration', () => {
  it('chooses the bucket when BACKUP_S3_BUCKET is set, else the directory (default under the data dir)', () => {
    const d = createBackupStore(loadConfig({ SWITCHYARD_DATA_DIR: dir }));
    expect(d.kind).toBe('dir');
    expect(d.location).toBe(path.join(dir, 'backups'));
    expect(createBackupStore(loadConfig({ SWITCHYARD_DATA_DIR: dir, BACKUP_DIR: path.join(dir, 'elsewhere') })).location).toBe(
      path.join(dir, 'elsewhere'),
    );
    const b = createBackupStore(loadConfig({ SWITCHYARD_DATA_DIR: dir, ...s3.env }));
    expect(b.kind).toBe('s3');
    expect(b.location).toContain(`s3://${s3.bucket}/`);
  });

  it.each([
    [{ BACKUP_S3_ENDPOINT: 'http://127.0.0.1:1' }, /BACKUP_S3_BUCKET is required/],
    [{ BACKUP_S3_BUCKET: 'b', BACKUP_S3_ACCESS_KEY_ID: 'k' }, /must be set together/],
    [{ BACKUP_S3_BUCKET: 'b', BACKUP_S3_ENDPOINT: 'ftp://x' }, /BACKUP_S3_ENDPOINT/],
    [{ BACKUP_S3_FORCE_PATH_STYLE: 'maybe' }, /BACKUP_S3_FORCE_PATH_STYLE/],
    [{ BACKUP_RETENTION_COUNT: '0' }, /BACKUP_RETENTION_COUNT/],
    [{ BACKUP_RETENTION_DAYS: 'soon' }, /BACKUP_RETENTION_DAYS/],
  ])('rejects %j', (env, message) => {
    expect(() => loadConfig(env)).toThrow(message);
  });
});

describe('the S3 store under ALLOWED_UPSTREAM_HOSTS', () => {
  const store = (policy: string[]) =>
    new S3BackupStore({
      endpoint: s3.endpoint.replace('127.0.0.1', 'localhost'),
      bucket: s3.bucket,
      region: 'us-east-1',
      accessKeyId: s3.accessKeyId,
      secretAccessKey: s3.secretAccessKey,
      forcePathStyle: true,
      egress: EgressPolicy.parse(policy),
    });

  it('connects only where the policy allows: a name resolving outside its ranges is refused before anything is sent', async () => {
    const bytes = blob(64);
    await expect(store(['192.0.2.0/24']).put(hashOf(bytes), bytes)).rejects.toMatchObject({ code: 'host_not_allowed' });
    expect(await store(['localhost']).put(hashOf(bytes), bytes)).toEqual({ created: true });
    expect(await store(['127.0.0.0/8', '::1']).has(hashOf(bytes))).toBe(true);
  });
});
