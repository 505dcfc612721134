import { createHash } from 'node:crypto';
import type { S3Client, S3ServiceException } from '@aws-sdk/client-s3';
import { egressAgents } from '../egress/connect.ts';
import { egressRefusal, type EgressPolicy } from '../egress/policy.ts';
import { BlobNotFoundError, blobKey, type BackupStore } from './store.ts';

export interface S3BackupStoreOptions {
  bucket: string;
  /** S3-compatible endpoint (MinIO, Ceph, R2 ...); unset means AWS S3 itself. */
  endpoint?: string;
  region: string;
  /** Unset: the SDK's default credential chain (instance role, AWS_* variables ...). */
  accessKeyId?: string;
  secretAccessKey?: string;
  /** `http://host/bucket/key` instead of `http://bucket.host/key`; most self-hosted servers need it. */
  forcePathStyle?: boolean;
  /** Where the bucket's server may be (ALLOWED_UPSTREAM_HOSTS): its connections resolve through the policy. */
  egress?: EgressPolicy;
}

const PREFIX = 'switchyard/backups/sha256/';

type Sdk = typeof import('@aws-sdk/client-s3');
// Loaded on first use: the SDK costs about 30 MB in every process that merely imports it.
let sdkLoading: Promise<Sdk> | undefined;
const loadSdk = () => (sdkLoading ??= import('@aws-sdk/client-s3'));

/**
 * Blobs as objects `switchyard/backups/sha256/ab/<hash>.zip` in one bucket. A HEAD before the PUT
 * makes an unchanged dashboard cost one request and no upload. Uploads carry Content-MD5 so the
 * server rejects a corrupted body.
 */
export class S3BackupStore implements BackupStore {
  readonly kind = 's3' as const;
  readonly location: string;
  private readonly bucket: string;
  private readonly opts: S3BackupStoreOptions;
  private connecting?: Promise<{ client: S3Client; sdk: Sdk }>;

  constructor(opts: S3BackupStoreOptions) {
    this.bucket = opts.bucket;
    this.opts = opts;
    this.location = `s3://${opts.bucket}/${PREFIX}${opts.endpoint ? ` at ${opts.endpoint}` : ''}`;
  }

  private connect(): Promise<{ client: S3Client; sdk: Sdk }> {
    return (this.connecting ??= loadSdk().then((sdk) => ({ sdk, client: this.newClient(sdk) })));
  }

  private newClient(sdk: Sdk): S3Client {
    const opts = this.opts;
    const agents = opts.egress ? egressAgents(opts.egress) : undefined;
    return new sdk.S3Client({
      ...(agents ? { requestHandler: agents } : {}),
      region: opts.region,
      endpoint: opts.endpoint,
      forcePathStyle: opts.forcePathStyle ?? false,
      credentials:
        opts.accessKeyId && opts.secretAccessKey ? { accessKeyId: opts.accessKeyId, secretAccessKey: opts.secretAccessKey } : undefined,
      // Checksums only where the operation requires them: several S3-compatible servers reject the
      // SDK's default trailing-checksum (aws-chunked) uploads. Integrity is covered by Content-MD5 below.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      maxAttempts: 3,
    });
  }

  private key(hash: string): string {
    return PREFIX + blobKey(hash);
  }

  async has(hash: string): Promise<boolean> {
    const { client, sdk } = await this.connect();
    try {
      await client.send(new sdk.HeadObjectCommand({ Bucket: this.bucket, Key: this.key(hash) }));
      return true;
    } catch (err) {
      if (isNotFound(err)) return false;
      throw describe(err, 'HEAD', this.key(hash));
    }
  }

  async put(hash: string, bytes: Uint8Array): Promise<{ created: boolean }> {
    if (await this.has(hash)) return { created: false };
    const { client, sdk } = await this.connect();
    try {
      await client.send(
        new sdk.PutObjectCommand({
          Bucket: this.bucket,
          Key: this.key(hash),
          Body: bytes,
          ContentLength: bytes.byteLength,
          ContentType: 'application/zip',
          ContentMD5: createHash('md5').update(bytes).digest('base64'),
          Metadata: { 'content-hash': hash },
        }),
      );
    } catch (err) {
      throw describe(err, 'PUT', this.key(hash));
    }
    return { created: true };
  }

  async get(hash: string): Promise<Uint8Array> {
    const { client, sdk } = await this.connect();
    try {
      const res = await client.send(new sdk.GetObjectCommand({ Bucket: this.bucket, Key: this.key(hash) }));
      return await res.Body!.transformToByteArray();
    } catch (err) {
      if (isNotFound(err)) throw new BlobNotFoundError(hash, this.location);
      throw describe(err, 'GET', this.key(hash));
    }
  }

  async delete(hash: string): Promise<void> {
    const { client, sdk } = await this.connect();
    try {
      await client.send(new sdk.DeleteObjectCommand({ Bucket: this.bucket, Key: this.key(hash) }));
    } catch (err) {
      if (isNotFound(err)) return;
      throw describe(err, 'DELETE', this.key(hash));
    }
  }

  async *list(): AsyncIterable<string> {
    const { client, sdk } = await this.connect();
    let token: string | undefined;
    do {
      const page = await client.send(new sdk.ListObjectsV2Command({ Bucket: this.bucket, Prefix: PREFIX, ContinuationToken: token }));
      for (const o of page.Contents ?? []) {
        const m = /([0-9a-f]{64})\.zip$/.exec(o.Key ?? '');
        if (m) yield m[1]!;
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
  }

  destroy(): void {
    this.connecting?.then(
      ({ client }) => {
        client.destroy();
      },
      // expected: a client that never connected has nothing to destroy (its failure was the caller's).
      () => undefined,
    );
  }
}

function isNotFound(err: unknown): boolean {
  const e = err as { name?: string; $metadata?: { httpStatusCode?: number } };
  return e?.name === 'NotFound' || e?.name === 'NoSuchKey' || e?.$metadata?.httpStatusCode === 404;
}

/** The SDK's errors name neither the bucket nor the key; a user reading a task log needs both. */
function describe(err: unknown, op: string, key: string): Error {
  // The egress policy's refusal is passed on as it is (its code says why nothing was sent).
  const refused = egressRefusal(err);
  if (refused) return refused;
  const status = (err as S3ServiceException)?.$metadata?.httpStatusCode;
  const name = (err as Error)?.name ?? 'Error';
  const msg = (err as Error)?.message ?? String(err);
  return new Error(`S3 ${op} ${key} failed${status ? ` (HTTP ${status})` : ''}: ${name}: ${msg}`, { cause: err });
}
