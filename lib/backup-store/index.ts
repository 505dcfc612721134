import type { Config } from '../config.ts';
import { egressPolicy } from '../egress/policy.ts';
import { DirectoryBackupStore } from './directory.ts';
import { S3BackupStore } from './s3.ts';
import type { BackupStore } from './store.ts';

export { BlobNotFoundError, type BackupStore, type BackupStoreKind } from './store.ts';
export { DirectoryBackupStore } from './directory.ts';
export { S3BackupStore } from './s3.ts';

/** The configured store: the bucket when BACKUP_S3_BUCKET is set, else the directory. */
export function createBackupStore(config: Config): BackupStore {
  if (config.BACKUP_S3_BUCKET) {
    return new S3BackupStore({
      bucket: config.BACKUP_S3_BUCKET,
      endpoint: config.BACKUP_S3_ENDPOINT,
      region: config.BACKUP_S3_REGION,
      accessKeyId: config.BACKUP_S3_ACCESS_KEY_ID,
      secretAccessKey: config.BACKUP_S3_SECRET_ACCESS_KEY,
      forcePathStyle: config.BACKUP_S3_FORCE_PATH_STYLE,
      egress: egressPolicy(config),
    });
  }
  return new DirectoryBackupStore(config.BACKUP_DIR ?? `${config.SWITCHYARD_DATA_DIR}/backups`);
}
