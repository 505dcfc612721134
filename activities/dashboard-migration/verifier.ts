/**
 * How a migrated dashboard is verified, behind the `Verifier` interface. The first
 * implementation, `chartQueryVerifier`, checks that the dashboard is in the target, its charts
 * are linked and each chart's query runs there.
 */
import type { Context } from '@temporalio/activity';
import type { Verification } from '../../contracts/migration.ts';
import { SupersetNotFoundError } from '../../lib/superset/errors.ts';
import type { MigrationUpstream } from './upstream.ts';

/** A target dashboard to verify, with the charts its plan expected to link. */
export interface VerifyTarget {
  dashboardId: number;
  expectedChartUuids: string[];
}

/** Checks migrated dashboards in a target. */
export interface Verifier {
  /**
   * Each dashboard's verification, in order, or the error that kept it from one (an outage, or a
   * refusal that is this dashboard's verification failure).
   */
  verify(target: MigrationUpstream, dashboards: VerifyTarget[], log: Context['log']): Promise<Array<Verification | { error: unknown }>>;
}

/** Dashboards verified at once: Superset answers chart queries on a few threads. */
const VERIFY_PARALLELISM = 3;

/**
 * The dashboard is there, its charts are linked, and each chart's query runs in the target:
 * each dashboard's charts read (a few dashboards at a time; the charts' path answers 404 for a
 * dashboard that is not there), then every chart's query, those on one dataset in one call.
 */
export const chartQueryVerifier: Verifier = {
  async verify(target, dashboards, log) {
    type Charts = Awaited<ReturnType<MigrationUpstream['dashboardCharts']>>;
    const charts: Array<Charts | null | { error: unknown }> = new Array(dashboards.length);
    await inParallel([...dashboards.keys()], VERIFY_PARALLELISM, async (i) => {
      try {
        charts[i] = await target.dashboardCharts(dashboards[i]!.dashboardId);
      } catch (err) {
        charts[i] = err instanceof SupersetNotFoundError ? null : { error: err };
      }
    });
    const all = charts.flatMap((c) => (Array.isArray(c) ? c : []));
    const answers = all.length ? await target.runChartQueries(all) : [];
    let next = 0;
    return dashboards.map((d, i) => {
      const mine = charts[i];
      const expected = d.expectedChartUuids.length;
      if (mine && !Array.isArray(mine)) return mine;
      if (!mine) return { ok: false, dashboard_present: false, charts_expected: expected, charts_linked: 0, charts: [] };
      const results: Verification['charts'] = mine.map((c) => {
        const r = answers[next++]!;
        if (!r.ok) log.warn(`chart '${c.slice_name}' (${c.id}) does not run in the target: ${r.error}`);
        return { id: c.id, name: c.slice_name ?? String(c.id), ok: r.ok, ...(r.ok ? { rows: r.rows } : { error: r.error }) };
      });
      const ok = mine.length >= expected && results.every((r) => r.ok);
      log.info(`verified target dashboard ${d.dashboardId}: ${mine.length}/${expected} charts linked, ${results.filter((r) => r.ok).length} run`);
      return { ok, dashboard_present: true, charts_expected: expected, charts_linked: mine.length, charts: results };
    });
  },
};

/** Runs `fn` over `list` with at most `limit` at a time. */
async function inParallel<T>(list: T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < list.length) await fn(list[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, list.length) }, lane));
}
