import { Bundle, type BundleFile } from './bundle.ts';

/**
 * Splits an export of several dashboards into one bundle per dashboard, each holding exactly
 * what Superset's export of that dashboard alone holds: the dashboard, then every file whose
 * uuid it reaches (charts in its layout, datasets of its native filters, a theme), then what
 * those reach (a chart's dataset, a dataset's database), and metadata.yaml.
 *
 * Reachability is read from the YAML itself (any string equal to another file's uuid), not from
 * a list of known keys, so a field a later release adds still carries its object along.
 *
 * Keys are the source dashboard ids, read from the file names Superset gives dashboard exports
 * (`<title>_<id>.yaml`); a dashboard whose id cannot be read is left out (the caller exports it
 * alone).
 */
export function splitByDashboard(bundle: Bundle): Map<number, Bundle> {
  const byUuid = new Map<string, BundleFile>();
  for (const f of bundle.files.values()) if (typeof f.content.uuid === 'string') byUuid.set(f.content.uuid, f);
  const metadata = bundle.files.get('metadata.yaml');
  const out = new Map<number, Bundle>();
  for (const dashboard of bundle.of('dashboards')) {
    const id = idFromFileName(dashboard.path);
    if (id === null || out.has(id)) continue;
    const keep = new Map<string, BundleFile>();
    const queue: BundleFile[] = [dashboard];
    while (queue.length) {
      const f = queue.pop()!;
      if (keep.has(f.path)) continue;
      keep.set(f.path, f);
      for (const uuid of uuidsIn(f.content)) {
        const next = byUuid.get(uuid);
        // Another dashboard is never part of this one's bundle, whatever refers to it.
        if (next && next.kind !== 'dashboards' && !keep.has(next.path)) queue.push(next);
      }
    }
    if (metadata) keep.set(metadata.path, metadata);
    const files = new Map([...keep.values()].sort((a, b) => a.path.localeCompare(b.path)).map((f) => [f.path, f]));
    out.set(id, new Bundle(bundle.root, files).clone());
  }
  return out;
}

/** `dashboards/Sales_12.yaml` → 12 (Superset appends the id to every exported file's name). */
export function idFromFileName(path: string): number | null {
  const m = /_(\d+)\.ya?ml$/.exec(path.split('/').pop() ?? '');
  return m ? Number(m[1]) : null;
}

/**
 * The id in an exported file's name, where the name is exactly the one Superset gives the object
 * (`<secure_filename(name)>_<id>.yaml`, or `<id>.yaml` for a name with no safe character); null
 * otherwise (a release naming files another way, or a name ending in digits that is no id).
 */
export function idOfNamedFile(path: string, name: string): number | null {
  const stem = (path.split('/').pop() ?? '').replace(/\.ya?ml$/, '');
  const m = /(?:^|_)(\d+)$/.exec(stem);
  if (!m) return null;
  const id = Number(m[1]);
  const safe = secureFilename(name);
  return stem === (safe ? `${safe}_${id}` : String(id)) ? id : null;
}

/** Werkzeug's secure_filename, which Superset names exported files with (POSIX: no alternative separator). */
export function secureFilename(name: string): string {
  const ascii = name.normalize('NFKD').replace(/[^\x00-\x7f]/g, '');
  const joined = ascii
    .replaceAll('/', ' ')
    .split(/[\s\x1c-\x1f]+/)
    .filter(Boolean)
    .join('_');
  return joined.replace(/[^A-Za-z0-9_.-]/g, '').replace(/^[._]+|[._]+$/g, '');
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function uuidsIn(value: unknown, out = new Set<string>()): Set<string> {
  if (typeof value === 'string') {
    if (UUID.test(value)) out.add(value);
  } else if (Array.isArray(value)) {
    for (const v of value) uuidsIn(v, out);
  } else if (value && typeof value === 'object') {
    for (const v of Object.values(value)) uuidsIn(v, out);
  }
  return out;
}

/** One bundle of several (the files of all; a file several hold, such as a shared dataset, once). */
export function mergeBundles(bundles: Bundle[]): Bundle {
  const files = new Map<string, BundleFile>();
  for (const b of bundles) for (const f of b.files.values()) if (!files.has(f.path)) files.set(f.path, f);
  return new Bundle(bundles[0]?.root ?? 'bundle', files).clone();
}
