import { createHash } from 'node:crypto';
import { strFromU8, strToU8, zipSync } from 'fflate';
import { stringify } from 'yaml';
import { ArchiveError, formatBytes, unzipWithin } from '../archive/unzip.ts';
import { parseExportYaml } from './export-yaml.ts';
import { MergeKeyError, refuseMergeKeyIn } from './merge-keys.ts';

/**
 * A Superset export bundle (ZIP with one root folder of YAML files) as data. Superset only
 * reads the first folder under the root (`dashboards/`, `charts/`, `datasets/`, `databases/`),
 * so files are keyed by their path without the root, exactly as its `passwords` map keys them.
 */
export type BundleKind = 'dashboards' | 'charts' | 'datasets' | 'databases' | 'themes' | 'metadata' | 'other';

export interface BundleFile {
  path: string; // without the root folder, e.g. "charts/Sales_12.yaml"
  kind: BundleKind;
  content: Record<string, unknown>;
}

/**
 * Most a bundle may unpack to. An export of even a large dashboard is a few MiB of YAML; a ZIP
 * that claims more is refused before anything is inflated, and one that inflates past what it
 * claims is stopped as it does (a zip bomb, or not a dashboard).
 */
export const MAX_BUNDLE_BYTES = 64 * 1024 * 1024;
/** Most files a bundle may hold. */
export const MAX_BUNDLE_FILES = 10_000;

export type BundleProblem = 'unreadable' | 'not_an_export' | 'too_large' | 'no_dashboard';

/** A ZIP that is not a Superset export this project can work with, and why. */
export class BundleError extends Error {
  override name = 'BundleError';
  readonly problem: BundleProblem;
  constructor(problem: BundleProblem, message: string, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.problem = problem;
  }
}

export class Bundle {
  readonly root: string;
  readonly files: Map<string, BundleFile>;

  constructor(root: string, files: Map<string, BundleFile>) {
    this.root = root;
    this.files = files;
  }

  /**
   * Reads an export, unpacked within `maxBytes` by the one archive decider (lib/archive/unzip.ts):
   * declared sizes past the cap refuse it before anything inflates, and an entry that inflates
   * past the size it declares is stopped there and refuses it too.
   */
  static fromZip(zip: Uint8Array, maxBytes = MAX_BUNDLE_BYTES): Bundle {
    const entries = unzipBundle(zip, maxBytes);
    let root = '';
    const files = new Map<string, BundleFile>();
    for (const [name, data] of entries) {
      const slash = name.indexOf('/');
      if (slash < 0) continue; // files at the zip root are ignored by Superset too
      root ||= name.slice(0, slash);
      const path = name.slice(slash + 1);
      if (!/\.ya?ml$/.test(path) || path.split('/').some((p) => p.startsWith('.') || p.startsWith('_'))) continue;
      let content: unknown;
      try {
        content = parseExportYaml(strFromU8(data));
      } catch (err) {
        const what = err instanceof MergeKeyError ? 'cannot be read as Superset reads it' : 'is not YAML';
        throw new BundleError('unreadable', `${path} in the bundle ${what}: ${(err as Error).message}`, err);
      }
      files.set(path, { path, kind: kindOf(path), content: isRecord(content) ? content : {} });
    }
    if (!files.has('metadata.yaml')) throw new BundleError('not_an_export', 'not a Superset export: metadata.yaml is missing');
    return new Bundle(root || 'bundle', files);
  }

  toZip(): Uint8Array {
    const entries: Record<string, Uint8Array> = {};
    // Superset reads YAML 1.1 (PyYAML): strings such as timestamps or "yes" must be quoted or they change type.
    for (const f of this.files.values()) {
      try {
        refuseMergeKeyIn(f.content);
      } catch (err) {
        throw new BundleError('unreadable', `${f.path} cannot be written as Superset would read it: ${(err as Error).message}`, err);
      }
      entries[`${this.root}/${f.path}`] = strToU8(stringify(f.content, { version: '1.1', lineWidth: 0 }));
    }
    return zipSync(entries, { level: 6, mtime: new Date('2000-01-01T00:00:00Z') });
  }

  of(kind: BundleKind): BundleFile[] {
    return [...this.files.values()].filter((f) => f.kind === kind).sort((a, b) => a.path.localeCompare(b.path));
  }

  clone(): Bundle {
    return new Bundle(this.root, new Map([...this.files].map(([k, f]) => [k, { ...f, content: structuredClone(f.content) }])));
  }

  /** Content hash that ignores the export timestamp and root name: unchanged dashboards hash the same. */
  contentHash(): string {
    const h = createHash('sha256');
    for (const f of [...this.files.values()].sort((a, b) => a.path.localeCompare(b.path))) {
      if (f.kind === 'metadata') continue;
      h.update(f.path).update('\0').update(canonicalJson(f.content)).update('\0');
    }
    return h.digest('hex');
  }
}

/**
 * An export's entries (path → bytes), unpacked within `maxBytes` by the one archive decider
 * (lib/archive/unzip.ts); its refusals become BundleErrors.
 */
export function unzipBundle(zip: Uint8Array, maxBytes = MAX_BUNDLE_BYTES): Map<string, Uint8Array> {
  try {
    return unzipWithin(zip, { maxBytes, maxEntries: MAX_BUNDLE_FILES });
  } catch (err) {
    if (!(err instanceof ArchiveError)) throw err;
    if (err.problem !== 'too_large') throw new BundleError('unreadable', `the bundle is not a readable ZIP: ${err.message}`, err);
    throw new BundleError(
      'too_large',
      (err.declared?.entries ?? 0) > MAX_BUNDLE_FILES
        ? `the bundle holds more than ${MAX_BUNDLE_FILES} files`
        : `the bundle unpacks to more than ${formatBytes(maxBytes)} (the most a bundle may hold)`,
      err,
    );
  }
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function kindOf(path: string): BundleKind {
  if (path === 'metadata.yaml') return 'metadata';
  const first = path.split('/')[0];
  return (['dashboards', 'charts', 'datasets', 'databases', 'themes'] as const).find((k) => k === first) ?? 'other';
}

export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_k, v) =>
    v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => a.localeCompare(b))) : v,
  );
}
