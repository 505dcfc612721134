/**
 * A dashboard's export bundle as the files of its repository, and back. The files are written so
 * that exporting an unchanged dashboard twice gives the same bytes (no diff) and a changed chart
 * shows as one readable hunk:
 *   - paths are named by UUID (`dashboards/<uuid>.yaml`, `charts/<uuid>.yaml`, ...), not by
 *     Superset's title-and-id file names, which change with a rename and differ per environment;
 *   - the export timestamp and the zip's dated root folder are dropped;
 *   - mapping keys are sorted at every level; JSON held in strings (a chart's query context) is
 *     re-serialised with sorted keys;
 *   - databases are referenced by name and UUID, as Superset exports them (passwords masked).
 */
import { createHash } from 'node:crypto';
import { strFromU8, strToU8, zipSync } from 'fflate';
import { parse, stringify } from 'yaml';
import { BundleError, MAX_BUNDLE_BYTES, unzipBundle } from '../bundles/bundle.ts';
import { refuseMergeKeyIn, refusePlainMergeKey } from '../bundles/merge-keys.ts';

export const KINDS = ['dashboards', 'charts', 'datasets', 'databases'] as const;
export type DashboardFileKind = (typeof KINDS)[number];

export interface DashboardFiles {
  dashboardUuid: string;
  title: string;
  /** path → normalised YAML text */
  files: Map<string, string>;
}

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const JSON_STRING_FIELDS = new Set(['query_context']);

function sortDeep(value: unknown, key?: string): unknown {
  if (typeof value === 'string' && key && JSON_STRING_FIELDS.has(key)) {
    try {
      return JSON.stringify(sortDeep(JSON.parse(value)));
    } catch {
      // expected: not JSON: kept as the text it is.
      return value;
    }
  }
  if (Array.isArray(value)) return value.map((v) => sortDeep(v));
  if (value && typeof value === 'object' && !(value instanceof Date)) {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, sortDeep((value as Record<string, unknown>)[k], k)]),
    );
  }
  return value;
}

/** YAML 1.1 (what Superset's PyYAML reads): strings that look like dates or booleans stay quoted. */
export function toYaml(content: unknown): string {
  refuseMergeKeyIn(content);
  return stringify(sortDeep(content), { version: '1.1', lineWidth: 0, sortMapEntries: true });
}

/** A plain merge key (`<<`) is refused, as by the bundle reader (lib/bundles/merge-keys.ts), so both read what Superset reads. */
export function fromYaml(text: string): Record<string, unknown> {
  refusePlainMergeKey(text);
  const v = parse(text, { version: '1.1' }) as unknown;
  if (!v || typeof v !== 'object' || Array.isArray(v)) throw new Error('not a YAML mapping');
  return v as Record<string, unknown>;
}

function kindOf(path: string): DashboardFileKind | 'metadata' | undefined {
  if (path === 'metadata.yaml') return 'metadata';
  return KINDS.find((k) => path.startsWith(`${k}/`));
}

/**
 * Superset's export ZIP of one dashboard → the repository's files. The archive is unpacked within
 * `maxBytes` by the one archive decider (through unzipBundle); every refusal is a BundleError.
 */
export function filesFromExport(zip: Uint8Array, maxBytes = MAX_BUNDLE_BYTES): DashboardFiles {
  const entries = unzipBundle(zip, maxBytes);
  const files = new Map<string, string>();
  let dashboardUuid = '';
  let title = '';
  for (const [name, data] of entries) {
    const inner = name.slice(name.indexOf('/') + 1);
    if (!/\.ya?ml$/.test(inner)) continue;
    const kind = kindOf(inner);
    if (!kind) continue;
    let content: Record<string, unknown>;
    try {
      content = fromYaml(strFromU8(data));
    } catch (err) {
      throw new BundleError('unreadable', `${inner} in the export is not a YAML mapping: ${(err as Error).message}`, err);
    }
    if (kind === 'metadata') {
      delete content.timestamp;
      files.set('metadata.yaml', toYaml(content));
      continue;
    }
    const uuid = typeof content.uuid === 'string' ? content.uuid.toLowerCase() : '';
    // The UUID names the file: anything but a UUID could name a path outside the repository.
    if (!UUID.test(uuid)) throw new BundleError('unreadable', `${inner} in the export has no valid uuid`);
    if (kind === 'dashboards') {
      if (dashboardUuid) throw new BundleError('unreadable', 'the export holds more than one dashboard');
      dashboardUuid = uuid;
      title = typeof content.dashboard_title === 'string' ? content.dashboard_title : '';
    }
    files.set(`${kind}/${uuid}.yaml`, toYaml(content));
  }
  if (!files.has('metadata.yaml')) throw new BundleError('not_an_export', 'not a Superset export: metadata.yaml is missing');
  if (!dashboardUuid) throw new BundleError('no_dashboard', 'the export holds no dashboard');
  return { dashboardUuid, title, files };
}

/** The repository's files → a ZIP Superset's dashboard import accepts. */
export function exportFromFiles(files: Map<string, string> | Record<string, string>, now = new Date()): Uint8Array {
  const entries: Record<string, Uint8Array> = {};
  const root = 'dashboard_export';
  for (const [path, text] of files instanceof Map ? files : Object.entries(files)) {
    const kind = kindOf(path);
    if (!kind) continue; // README and other files of the repository are not part of the bundle
    if (kind === 'metadata') {
      const meta = fromYaml(text);
      meta.timestamp = now.toISOString().replace('Z', '+00:00');
      entries[`${root}/metadata.yaml`] = strToU8(stringify(meta, { version: '1.1', lineWidth: 0 }));
    } else {
      entries[`${root}/${path}`] = strToU8(text);
    }
  }
  return zipSync(entries, { level: 6, mtime: new Date('2000-01-01T00:00:00Z') });
}

/**
 * The dashboard's companions (owners, tags, reports, ...: what no export carries) live beside the
 * bundle's files under `companions/<kind>/`, one YAML each (activities/git/companion-files.ts
 * writes and reads them); Superset's import never sees them.
 */
export const COMPANIONS_DIR = 'companions';

export function isCompanionPath(path: string): boolean {
  return path.startsWith(`${COMPANIONS_DIR}/`) && path.endsWith('.yaml');
}

/** True when a path is one of the dashboard's files, bundle or companion (everything else in the repository is left alone by sync). */
export function isBundlePath(path: string): boolean {
  return (kindOf(path) !== undefined && path.endsWith('.yaml')) || isCompanionPath(path);
}

/** A name as a file name: kept when it is plain, else made plain with a digest of the name so two names never share a file. */
export function fileNameOf(name: string): string {
  const plain = name
    .normalize('NFKD')
    .replace(/[^A-Za-z0-9._ -]+/g, '_')
    .replace(/^[.\s]+|\s+$/g, '')
    .slice(0, 80);
  if (plain === name && plain.length) return plain;
  return `${plain || 'unnamed'}-${createHash('sha256').update(name).digest('hex').slice(0, 8)}`;
}
