/**
 * Timestamps arrive in two flavours: zone-aware (`2026-11-22T10:00:00+02:00`, `…Z`, Superset's
 * `…+0000`, Date objects from timestamptz columns) and naive (`2026-11-22 10:00:00`, Superset's
 * detail answers `2025-06-01T10:20:30.123456`). Comparing them as strings, or letting the
 * reader's time zone decide what a naive value means, gives answers that depend on formatting
 * and on the machine. So every timestamp goes through this one parser: a naive value is UTC (the
 * zone Superset and this service write in), offsets may be `Z`, `±HH`, `±HHMM` or `±HH:MM`,
 * fractions beyond milliseconds are cut, and answers carry ISO-8601 UTC with `Z` only.
 */
const ISO = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?)?\s*(Z|[+-]\d{2}(?::?\d{2})?)?$/i;

export function toEpochMs(value: Date | string | number | null | undefined): number | null {
  if (value === null || value === undefined || value === '') return null;
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : value.getTime();
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  const m = ISO.exec(value.trim());
  if (!m) return null;
  const [, y, mo, d, h = '0', mi = '0', s = '0', frac = '', zone] = m;
  const ms = Number(frac.slice(0, 3).padEnd(3, '0'));
  const utc = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s), ms);
  if (Number.isNaN(utc)) return null;
  return utc - offsetMinutes(zone) * 60_000;
}

export function toUtcIso(value: Date | string | number | null | undefined): string | null {
  const ms = toEpochMs(value);
  return ms === null ? null : new Date(ms).toISOString();
}

function offsetMinutes(zone: string | undefined): number {
  if (!zone || zone.toUpperCase() === 'Z') return 0;
  const sign = zone.startsWith('-') ? -1 : 1;
  const digits = zone.slice(1).replace(':', '');
  return sign * (Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2, 4) || '0'));
}
