/**
 * Timestamps arrive in two flavours: timezone-aware (`2026-11-22T10:00:00+02:00`, `…Z`, Date
 * objects from timestamptz columns) and naive (`2026-11-22 10:00:00`, as older writers and some
 * upstream JSON carry them). Comparing them as strings or mixing the two in one sort gives an order
 * that depends on formatting (and, for naive values, on the reader's time zone). Every timestamp
 * is therefore turned into epoch milliseconds first, reading a naive value as UTC, the zone the
 * service writes in; answers carry ISO-8601 UTC with `Z` only.
 */
const HAS_ZONE = /(Z|[+-]\d{2}(:?\d{2})?)$/i;

export function toEpochMs(value: Date | string | number | null | undefined): number | null {
  if (value === null || value === undefined || value === '') return null;
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : value.getTime();
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  const s = value.trim();
  const iso = s.includes('T') || !/^\d{4}-\d{2}-\d{2} /.test(s) ? s : s.replace(' ', 'T');
  const ms = Date.parse(HAS_ZONE.test(iso) || !/^\d{4}-\d{2}-\d{2}T/.test(iso) ? iso : `${iso}Z`);
  return Number.isNaN(ms) ? null : ms;
}

export function toUtcIso(value: Date | string | number | null | undefined): string | null {
  const ms = toEpochMs(value);
  return ms === null ? null : new Date(ms).toISOString();
}
