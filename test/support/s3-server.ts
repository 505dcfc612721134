// A real S3-compatible HTTP server (s3rver, from npm) on loopback, for the bucket backup store.
// Nothing is mocked: the AWS SDK client talks S3's REST protocol (SigV4, XML) to it over TCP.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

interface S3rverInstance {
  run(): Promise<{ address: string; port: number }>;
  close(): Promise<void>;
}
type S3rverCtor = new (opts: Record<string, unknown>) => S3rverInstance;

export interface LocalS3 {
  endpoint: string;
  bucket: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** Where s3rver keeps the objects on disk. */
  directory: string;
  /** BACKUP_S3_* variables for loadConfig / createHarness. */
  env: Record<string, string>;
  stop(): Promise<void>;
}

export async function startLocalS3(bucket = 'switchyard-backups'): Promise<LocalS3> {
  const S3rver = require('s3rver') as S3rverCtor;
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), 's3rver-'));
  const server = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory,
    configureBuckets: [{ name: bucket, configs: [] }],
  });
  const { port } = await server.run();
  const endpoint = `http://127.0.0.1:${port}`;
  // s3rver's built-in account: requests signed with another access key are refused (403
  // InvalidAccessKeyId). It parses SigV4 but does not recompute the signature.
  return {
    endpoint,
    bucket,
    accessKeyId: 'S3RVER',
    secretAccessKey: 'S3RVER',
    directory,
    env: {
      BACKUP_S3_ENDPOINT: endpoint,
      BACKUP_S3_BUCKET: bucket,
      BACKUP_S3_REGION: 'us-east-1',
      BACKUP_S3_ACCESS_KEY_ID: 'S3RVER',
      BACKUP_S3_SECRET_ACCESS_KEY: 'S3RVER',
      BACKUP_S3_FORCE_PATH_STYLE: 'true',
    },
    async stop() {
      await server.close();
      fs.rmSync(directory, { recursive: true, force: true });
    },
  };
}
