/**
 * Digests of a release. An artifact's digest covers its normalised files exactly as they will be
 * imported. Its portable digest leaves out what an environment assigns on import (numeric ids,
 * the database connection, query contexts naming ids), so the same dashboard re-exported from the
 * target after a publish digests the same as the manifest says.
 */
import { createHash } from 'node:crypto';
import { canonicalJson } from '../bundles/bundle.ts';
import { fromYaml } from '../git/dashboard-files.ts';

type Files = Map<string, string> | Record<string, string>;
const entriesOf = (files: Files) => (files instanceof Map ? [...files] : Object.entries(files)).sort(([a], [b]) => a.localeCompare(b));

/** sha256 over the files (path and text), without metadata.yaml (its only content is the export's timestamp and version). */
export function artifactDigest(files: Files): string {
  const h = createHash('sha256');
  for (const [path, text] of entriesOf(files)) {
    if (path === 'metadata.yaml') continue;
    h.update(path).update('\0').update(text).update('\0');
  }
  return h.digest('hex');
}

/** Keys whose values an environment assigns: ids of charts and datasets, and what is built from them. */
const ENVIRONMENT_KEYS = new Set([
  'id',
  'chartId',
  'slice_id',
  'datasource',
  'datasource_id',
  'query_context',
  'chartsInScope',
  'tabsInScope',
  'chart_configuration',
  'global_chart_configuration',
  'expanded_slices',
  'filter_scopes',
  'timed_refresh_immune_slices',
  'database_uuid',
  'datasetId',
  'version',
]);

function isEmpty(v: unknown): boolean {
  return (
    v === null ||
    v === undefined ||
    v === '' ||
    (Array.isArray(v) ? v.length === 0 : typeof v === 'object' && Object.keys(v as object).length === 0)
  );
}

/**
 * A chart's native annotation layer entry names its layer by the environment's id (`value`): a
 * publish points it at the target's layer of the same name, so the id is left out like the others.
 */
function withoutLayerIds(entries: unknown): unknown {
  if (!Array.isArray(entries)) return entries;
  return entries.map((e) => {
    if (!e || typeof e !== 'object' || (e as Record<string, unknown>).sourceType !== 'NATIVE') return e;
    const { value: _id, ...rest } = e as Record<string, unknown>;
    return rest;
  });
}

function portable(value: unknown): unknown {
  if (typeof value === 'string') {
    const t = value.trim();
    if ((t.startsWith('{') && t.endsWith('}')) || (t.startsWith('[') && t.endsWith(']'))) {
      try {
        return portable(JSON.parse(t));
      } catch {
        // expected: not JSON: digested as the text it is.
        return value;
      }
    }
    return value;
  }
  if (Array.isArray(value)) return value.map(portable);
  if (value && typeof value === 'object') {
    // An empty value and an absent key mean the same to Superset, and its import fills in some
    // (annotation_layers: [], native_filter_configuration: []) and drops others (default_filters: {}).
    return Object.fromEntries(
      Object.entries(value)
        .filter(([k]) => !ENVIRONMENT_KEYS.has(k))
        .map(([k, v]) => [k, portable(k === 'annotation_layers' ? withoutLayerIds(v) : v)] as const)
        .filter(([, v]) => !isEmpty(v)),
    );
  }
  return value;
}

/** The dashboard, chart and dataset files without environment-assigned values, as canonical JSON by path; databases are left out (each environment has its own connection). */
export function portableForm(files: Files): Map<string, string> {
  const out = new Map<string, string>();
  for (const [path, text] of entriesOf(files)) {
    if (!/^(dashboards|charts|datasets)\//.test(path)) continue;
    out.set(path, canonicalJson(portable(fromYaml(text))));
  }
  return out;
}

export function portableDigest(files: Files): string {
  const h = createHash('sha256');
  for (const [path, json] of portableForm(files)) h.update(path).update('\0').update(json).update('\0');
  return h.digest('hex');
}

/** The files whose portable forms differ (missing on either side included), with the first differing keys. */
export function portableDifferences(expected: Files, actual: Files): Array<{ path: string; keys: string[] }> {
  const a = portableForm(expected);
  const b = portableForm(actual);
  const out: Array<{ path: string; keys: string[] }> = [];
  for (const path of [...new Set([...a.keys(), ...b.keys()])].sort()) {
    const x = a.get(path);
    const y = b.get(path);
    if (x === y) continue;
    if (!x || !y) {
      out.push({ path, keys: [x ? 'missing in the target' : 'not in the artifact'] });
      continue;
    }
    const keys: string[] = [];
    leafDifferences(JSON.parse(x), JSON.parse(y), '', keys);
    out.push({ path, keys });
  }
  return out;
}

/** Key paths (a.b[2].c) where two JSON values differ, at most 10. */
function leafDifferences(x: unknown, y: unknown, at: string, out: string[]): void {
  if (out.length >= 10 || JSON.stringify(x) === JSON.stringify(y)) return;
  if (x && y && typeof x === 'object' && typeof y === 'object' && Array.isArray(x) === Array.isArray(y)) {
    const ks = Array.isArray(x)
      ? [...Array(Math.max(x.length, (y as unknown[]).length)).keys()].map(String)
      : [...new Set([...Object.keys(x), ...Object.keys(y)])];
    for (const k of ks) {
      const next = Array.isArray(x) ? `${at}[${k}]` : at ? `${at}.${k}` : k;
      leafDifferences((x as Record<string, unknown>)[k], (y as Record<string, unknown>)[k], next, out);
    }
    return;
  }
  out.push(`${at || '(root)'}: ${JSON.stringify(x)?.slice(0, 60)} → ${JSON.stringify(y)?.slice(0, 60)}`);
}

export function sha256Json(value: unknown): string {
  return createHash('sha256').update(canonicalJson(value)).digest('hex');
}
