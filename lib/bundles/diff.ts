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
export function diffObjects(source: Record<string, unknown>, target: Record<string, unknown>, depth = 2): FieldDifference[] {
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
  walk(parseJsonString(source), parseJsonString(target), '', 0);
  return out;
}

/** Charts carry query_context as a JSON string; compare its content, not its spelling. */
function parseJsonString(o: Record<string, unknown>): Record<string, unknown> {
  if (typeof o.query_context !== 'string') return o;
  try {
    return { ...o, query_context: JSON.parse(o.query_context) };
  } catch {
    return o;
  }
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
