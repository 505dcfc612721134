/**
 * Where backup bundles live. Content-addressed: a blob's key is the sha256 content hash of the
 * normalized bundle (Bundle.contentHash, which ignores the export timestamp), its value the zip
 * Superset exported. Backing up an unchanged dashboard therefore writes no new blob; the index
 * of backups (which dashboard, when, by which task) lives in PostgreSQL (`backups` table).
 *
 * Implementations must make put/delete idempotent: activities are retried, and two tasks may
 * store the same content at once (same key, same bytes, so last writer wins harmlessly).
 */
export type BackupStoreKind = 'dir' | 's3';

export interface BackupStore {
  readonly kind: BackupStoreKind;
  /** Where blobs go, for logs (no credentials). */
  readonly location: string;
  has(hash: string): Promise<boolean>;
  /** Stores the bytes unless a blob with this hash exists; `created` says whether it wrote one. */
  put(hash: string, bytes: Uint8Array): Promise<{ created: boolean }>;
  /** The blob's bytes; BlobNotFoundError when absent. */
  get(hash: string): Promise<Uint8Array>;
  /** Removes the blob; absent is fine. */
  delete(hash: string): Promise<void>;
  /** Every stored hash (for audits and tests). */
  list(): AsyncIterable<string>;
}

export class BlobNotFoundError extends Error {
  override name = 'BlobNotFoundError';
  readonly hash: string;
  constructor(hash: string, where: string) {
    super(`backup blob ${hash} is missing from ${where}`);
    this.hash = hash;
  }
}

const HASH = /^[0-9a-f]{64}$/;

/** Keys are built from the hash, so a malformed one must never reach a path or an object key. */
export function assertHash(hash: string): void {
  if (!HASH.test(hash)) throw new Error(`not a sha256 content hash: ${JSON.stringify(hash).slice(0, 80)}`);
}

/** `ab/abcdef….zip`: two-level fan-out keeps directories small. */
export function blobKey(hash: string): string {
  assertHash(hash);
  return `${hash.slice(0, 2)}/${hash}.zip`;
}
