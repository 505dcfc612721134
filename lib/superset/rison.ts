import rison from 'rison';

/** Rison, as Flask-AppBuilder's `q=` parameter expects it (the `rison` package Superset's own UI uses). */
export function encodeRison(value: unknown): string {
  return rison.encode(stripUndefined(value));
}

export function decodeRison<T = unknown>(text: string): T {
  return rison.decode<T>(text);
}

// rison.encode writes `undefined` object members as `key:` (invalid); drop them first.
function stripUndefined(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(stripUndefined);
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) if (v !== undefined) out[k] = stripUndefined(v);
    return out;
  }
  return value;
}
