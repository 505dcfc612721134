/** What the chart check knows of Superset releases: their order, and how each answers a chart's query. */

/** Compares two releases by major and minor ("6.0.1" and "6.0" are the same release line). */
export function compareRelease(a: string, b: string): number {
  const [am = 0, an = 0] = a.split('.').map((n) => Number.parseInt(n, 10) || 0);
  const [bm = 0, bn = 0] = b.split('.').map((n) => Number.parseInt(n, 10) || 0);
  return am !== bm ? am - bm : an - bn;
}

/** Whether two releases are one release line (major.minor); an unknown release (null) is only its own. */
export function sameReleaseLine(a: string | null, b: string | null): boolean {
  if (a === null || b === null) return a === b;
  return compareRelease(a, b) === 0;
}

/**
 * Whether the release answers a chart query that found no rows without its columns. Before 6.0
 * Superset's result set builds its columns from the rows it fetched (superset/result_set.py builds
 * them only when there are rows), so an empty answer's `colnames` is `[]`; from 6.0 on it keeps the
 * cursor's columns. No release post-processes an empty result (query_context_processor skips it),
 * so an empty answer's columns are the query's own, never the pivoted or renamed ones.
 */
export function answersEmptyWithoutColumns(release: string | null): boolean {
  return release !== null && compareRelease(release, '6.0') < 0;
}

/** A release for a message: its version, or "an unknown release". */
export const releaseName = (release: string | null): string => (release === null ? 'an unknown release' : release);
