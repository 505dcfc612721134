/**
 * Charts as an environment's own export wrote them: what a chart check needs beyond a dashboard's
 * chart list (the uuid, the viz type, the saved query context), so a chart the batch has just
 * exported is not read again one detail at a time (./superset.ts chartsForCheck).
 */
import type { Bundle } from '../../../lib/bundles/bundle.ts';

export interface ExportedChart {
  uuid: string;
  viz_type: string;
  /** The saved query context, parsed (null when the chart has none). */
  query_context: Record<string, unknown> | null;
}

/**
 * The charts of an environment's export of a dashboard, by their id there (`uuids`: the ids'
 * uuids as that environment's chart list gave them). A chart the export does not hold, or holds
 * without a viz type, is left out: its detail is read.
 */
export function exportedCharts(bundle: Bundle, uuids: ReadonlyMap<number, string | null>): Map<number, ExportedChart> {
  const byUuid = new Map(bundle.of('charts').map((f) => [String(f.content.uuid ?? ''), f.content]));
  const out = new Map<number, ExportedChart>();
  for (const [id, uuid] of uuids) {
    const chart = uuid ? byUuid.get(uuid) : undefined;
    if (!chart || typeof chart.viz_type !== 'string' || !chart.viz_type) continue;
    out.set(id, { uuid: uuid!, viz_type: chart.viz_type, query_context: parseSaved(chart.query_context) });
  }
  return out;
}

/** A saved JSON object as Superset stores it (a string; an object as some answers give it); null when there is none or it does not parse. */
export function parseSaved(v: unknown): Record<string, unknown> | null {
  if (typeof v !== 'string' || !v) return v && typeof v === 'object' ? (v as Record<string, unknown>) : null;
  try {
    const parsed: unknown = JSON.parse(v);
    return parsed && typeof parsed === 'object' ? (parsed as Record<string, unknown>) : null;
  } catch {
    // expected: a saved value that does not parse reads as none (the caller reads the chart instead).
    return null;
  }
}
