/**
 * How a migrated dashboard is verified, behind the `Verifier` interface. The first
 * implementation, `chartQueryVerifier`, checks that the dashboard is in the target and its charts
 * are linked, and judges each chart the way Superset renders it, in the target and in the source
 * (./chart-check/): a chart fails the dashboard only when the migration broke it.
 */
import type { Verification } from '../../contracts/migration.ts';
import { SupersetNotFoundError } from '../../lib/superset/errors.ts';
import { judgeDashboard } from './chart-check/judge.ts';
import { inParallel } from './chart-check/parallel.ts';
import type { SourceChecks } from './chart-check/source-cache.ts';
import type { ChartForCheck } from './chart-check/types.ts';
import type { Log } from './port.ts';
import type { PrefetchRun } from './prefetch-runs.ts';
import type { MigrationUpstream } from './upstream.ts';

/** A target dashboard to verify, with the charts its plan expected to link and, when known, the source dashboard it came from. */
export interface VerifyTarget {
  dashboardId: number;
  expectedChartUuids: string[];
  sourceDashboardId?: number;
}

/** Checks migrated dashboards in a target. */
export interface Verifier {
  /**
   * Each dashboard's verification, in order, or the error that kept it from one (an outage, or a
   * refusal that is this dashboard's verification failure). With `source`, each chart is checked
   * there too (a chart failing in both is not the migration's fault).
   */
  verify(
    target: MigrationUpstream,
    dashboards: VerifyTarget[],
    log: Log,
    source?: MigrationUpstream,
    /** The worker's source checks that passed before (a chart unchanged since is not queried again in the source). */
    sourceChecks?: SourceChecks,
    /**
     * What the batch made ahead for its verification, taken once per dashboard from the task's
     * prefetch plan: the source's charts read beside its import (./source-checks-ahead.ts) and the
     * target's checks made right after it (./target-checks-ahead.ts).
     */
    made?: Pick<PrefetchRun, 'take'>,
  ): Promise<Array<Verification | { error: unknown }>>;
}

/** Dashboards verified at once: Superset answers chart queries on a few threads. */
const VERIFY_PARALLELISM = 3;

export const chartQueryVerifier: Verifier = {
  async verify(target, dashboards, log, source, sourceChecks, made) {
    const [targetRelease, sourceRelease] = await Promise.all([releaseOf(target), source ? releaseOf(source) : null]);
    const out: Array<Verification | { error: unknown }> = new Array(dashboards.length);
    await inParallel([...dashboards.keys()], VERIFY_PARALLELISM, async (i) => {
      const d = dashboards[i]!;
      let charts: ChartForCheck[];
      // The source's charts are read meanwhile (another Superset): a missing target dashboard leaves them unused.
      // Read (and checked) beside the import when the batch checked the source then (./source-checks-ahead.ts); awaited here.
      const readAhead = d.sourceDashboardId !== undefined ? made?.take('sourceCharts', d.sourceDashboardId) : undefined;
      const sourceRead = (readAhead ?? Promise.resolve(undefined)).then(
        (ahead) => ahead ?? sourceChartsOf(source, d.sourceDashboardId, log),
      );
      const checked = await made?.take('targetChecks', d.dashboardId);
      try {
        charts = checked?.charts ?? (await target.chartsForCheck(d.dashboardId));
      } catch (err) {
        out[i] =
          err instanceof SupersetNotFoundError
            ? { ok: false, dashboard_present: false, charts_expected: d.expectedChartUuids.length, charts_linked: 0, charts: [] }
            : { error: err };
        return;
      }
      const sourceCharts = await sourceRead;
      try {
        out[i] = await judgeDashboard(
          { target, targetRelease, source, sourceRelease, sourceChecks },
          d,
          charts,
          sourceCharts,
          log,
          checked?.checks,
        );
      } catch (err) {
        out[i] = { error: err };
      }
    });
    return out;
  },
};

/** The source dashboard's charts, or why they could not be read (then no chart can be compared). */
async function sourceChartsOf(
  source: MigrationUpstream | undefined,
  id: number | undefined,
  log: Log,
): Promise<ChartForCheck[] | { unreadable: string } | null> {
  if (!source || id === undefined) return null;
  try {
    return await source.chartsForCheck(id);
  } catch (err) {
    log.warn(`the source dashboard ${id}'s charts could not be read for the comparison: ${(err as Error).message}`);
    return { unreadable: `the source dashboard's charts could not be read: ${(err as Error).message}` };
  }
}

/** The release (null when it cannot be told: taken as the newest by the decider). */
async function releaseOf(up: MigrationUpstream): Promise<string | null> {
  try {
    return await up.version();
  } catch {
    // expected: a release that cannot be told is taken as the newest by the decider (a failing target is met by the checks themselves).
    return null;
  }
}
