import { createHash } from 'node:crypto';
import { strFromU8, strToU8, unzipSync, zipSync } from 'fflate';
import { parse, stringify } from 'yaml';

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

export class Bundle {
  readonly root: string;
  readonly files: Map<string, BundleFile>;

  constructor(root: string, files: Map<string, BundleFile>) {
    this.root = root;
    this.files = files;
  }

  static fromZip(zip: Uint8Array): Bundle {
    const entries = unzipSync(zip);
    let root = '';
    const files = new Map<string, BundleFile>();
    for (const [name, data] of Object.entries(entries)) {
      if (name.endsWith('/')) continue;
      const slash = name.indexOf('/');
      if (slash < 0) continue; // files at the zip root are ignored by Superset too
      root ||= name.slice(0, slash);
      const path = name.slice(slash + 1);
      if (!/\.ya?ml$/.test(path) || path.split('/').some((p) => p.startsWith('.') || p.startsWith('_'))) continue;
      const content = parse(strFromU8(data)) as Record<string, unknown>;
      files.set(path, { path, kind: kindOf(path), content: content ?? {} });
    }
    if (!files.has('metadata.yaml')) throw new Error('not a Superset export: metadata.yaml is missing');
    return new Bundle(root || 'bundle', files);
  }

  toZip(): Uint8Array {
    const entries: Record<string, Uint8Array> = {};
    // Superset reads YAML 1.1 (PyYAML): strings such as timestamps or "yes" must be quoted or they change type.
    for (const f of this.files.values())
      entries[`${this.root}/${f.path}`] = strToU8(stringify(f.content, { version: '1.1', lineWidth: 0 }));
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
