import { canonicalJson } from './bundle.ts';

export interface FieldDifference {
  field: string;
  source: unknown;
  target: unknown;
}

// Identity and bookkeeping fields: they differ between environments by design.
const IGNORED = new Set(['uuid', 'version', 'database_uuid', 'dataset_uuid', 'id', 'changed_on', 'created_on']);

/**
 * Field-level differences between the bundle's object and the target's, two levels deep so a
 * reviewer sees `params.metrics` rather than "params changed". Values are kept short.
 */
export function diffObjects(kind: string, source: Record<string, unknown>, target: Record<string, unknown>, depth = 2): FieldDifference[] {
  const out: FieldDifference[] = [];
  const walk = (a: unknown, b: unknown, path: string, level: number) => {
    if (isEmpty(a) && isEmpty(b)) return; // Superset writes null, [], {} and "{}" for the same "nothing"
    if (canonicalJson(a) === canonicalJson(b)) return;
    const bothObjects = a && b && typeof a === 'object' && typeof b === 'object' && !Array.isArray(a) && !Array.isArray(b);
    if (bothObjects && level < depth) {
      const keys = new Set([...Object.keys(a as object), ...Object.keys(b as object)]);
      for (const k of [...keys].sort()) {
        if (level === 0 && IGNORED.has(k)) continue;
        walk((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k], path ? `${path}.${k}` : k, level + 1);
      }
      return;
    }
    out.push({ field: path, source: preview(a), target: preview(b) });
  };
  const [a, b] = sharedKeys(withoutLocalIds(kind, source), withoutLocalIds(kind, target));
  walk(a, b, '', 0);
  return out;
}

/**
 * Both sides restricted to the keys both have, at every depth (list items position by position).
 * Superset exports every field its release knows, so a key only one side has is a field of another
 * release (a 6.1 column's `datetime_format` against 4.1), not a change.
 */
function sharedKeys(a: unknown, b: unknown): [unknown, unknown] {
  if (Array.isArray(a) && Array.isArray(b)) {
    const pairs = a.map((x, i) => (i < b.length ? sharedKeys(x, b[i]) : [x, undefined]));
    return [pairs.map((p) => p[0]), [...pairs.filter((_, i) => i < b.length).map((p) => p[1]), ...b.slice(a.length)]];
  }
  if (a && b && typeof a === 'object' && typeof b === 'object' && !Array.isArray(a) && !Array.isArray(b)) {
    const x: Record<string, unknown> = {};
    const y: Record<string, unknown> = {};
    for (const k of Object.keys(a)) {
      if (!Object.hasOwn(b, k)) continue;
      [x[k], y[k]] = sharedKeys((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]);
    }
    return [x, y];
  }
  return [a, b];
}

// Dashboard metadata keys whose content is keyed by environment-local chart ids (the importer remaps them).
const ID_KEYED_METADATA = [
  'chart_configuration',
  'global_chart_configuration',
  'filter_scopes',
  'expanded_slices',
  'timed_refresh_immune_slices',
  'default_filters',
  'positions',
];

function parse(v: unknown): unknown {
  if (typeof v !== 'string') return v;
  try {
    return JSON.parse(v);
  } catch {
    // expected: not JSON: compared as the text it is.
    return v;
  }
}

/**
 * Ids are local to each Superset (a chart's dataset id, a dashboard's chart ids): the same object
 * carries other numbers in each environment. They are left out of the comparison, and JSON held
 * in strings (query_context, its form_data) is compared by content, not spelling.
 */
function withoutLocalIds(kind: string, o: Record<string, unknown>): Record<string, unknown> {
  const c = structuredClone(o);
  if (kind === 'charts') {
    const params = c.params as Record<string, unknown> | undefined;
    if (params) {
      delete params.datasource;
      delete params.slice_id;
    }
    const qc = parse(c.query_context) as Record<string, unknown> | null;
    if (qc && typeof qc === 'object') {
      delete qc.datasource;
      const fd = parse(qc.form_data) as Record<string, unknown> | null;
      if (fd && typeof fd === 'object') {
        delete fd.datasource;
        delete fd.slice_id;
        qc.form_data = fd;
      }
      c.query_context = qc;
    }
  }
  if (kind === 'dashboards') {
    for (const node of Object.values((c.position ?? {}) as Record<string, { meta?: Record<string, unknown> }>)) {
      if (node && typeof node === 'object' && node.meta) delete node.meta.chartId;
    }
    const metadata = c.metadata as Record<string, unknown> | undefined;
    if (metadata) for (const k of ID_KEYED_METADATA) delete metadata[k];
  }
  return c;
}

function isEmpty(v: unknown): boolean {
  if (v === null || v === undefined || v === '' || v === '{}' || v === '[]') return true;
  if (Array.isArray(v)) return v.length === 0;
  return typeof v === 'object' && Object.keys(v as object).length === 0;
}

function preview(v: unknown): unknown {
  const s = canonicalJson(v);
  if (s === undefined) return null;
  return s.length > 300 ? `${s.slice(0, 297)}...` : v;
}
