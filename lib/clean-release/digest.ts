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

function portable(value: unknown): unknown {
  if (typeof value === 'string') {
    const t = value.trim();
    if ((t.startsWith('{') && t.endsWith('}')) || (t.startsWith('[') && t.endsWith(']'))) {
      try {
        return portable(JSON.parse(t));
      } catch {
        return value;
      }
    }
    return value;
  }
  if (Array.isArray(value)) return value.map(portable);
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value)
        .filter(([k]) => !ENVIRONMENT_KEYS.has(k))
        .map(([k, v]) => [k, portable(v)]),
    );
  }
  return value;
}

/** sha256 of the dashboard, chart and dataset files without environment-assigned values; databases are left out (each environment has its own connection). */
export function portableDigest(files: Files): string {
  const h = createHash('sha256');
  for (const [path, text] of entriesOf(files)) {
    if (!/^(dashboards|charts|datasets)\//.test(path)) continue;
    h.update(path).update('\0').update(canonicalJson(portable(fromYaml(text)))).update('\0');
  }
  return h.digest('hex');
}

export function sha256Json(value: unknown): string {
  return createHash('sha256').update(canonicalJson(value)).digest('hex');
}
