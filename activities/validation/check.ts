/**
 * One dashboard of an environment checked with the migration's chart checks
 * (../../domain/migration/chart-check): each chart planned and run the way that release's
 * frontend asks for it, through the worker's per-environment bound on chart queries. Alone, with
 * no source to compare with, a verdict is what that Superset answers: its refusal is the chart's
 * failure (its own message), no faithful check or no answer is not_verifiable with the reason.
 */
import type { ChartValidation, ChartVerdict } from '../../contracts/validation.ts';
import {
  type ChartCheck,
  type ChartForCheck,
  exportedCharts,
  type ExportedChart,
  type MigrationUpstream,
  runChecks,
} from '../../domain/migration/index.ts';
import { Bundle } from '../../lib/bundles/bundle.ts';
import { fallbackLogged, type DetachedLog } from '../../lib/detached.ts';
import type { DashboardChart } from '../../lib/superset/types.ts';

/** Chart-data calls of one dashboard at once (the environment's bound still caps them all). */
const CALLS_AT_ONCE = 2;

/**
 * From this many charts on, one export of the dashboard (and one list call for the charts' uuids)
 * stands in for a detail read per chart: the saved query contexts and types come from the export.
 * Below it the detail reads cost less than the export's YAML.
 */
const EXPORT_FROM_CHARTS = 3;

export interface CheckedDashboard {
  title: string | null;
  charts: Array<Omit<ChartValidation, 'first_seen_broken_at' | 'last_passed_at' | 'newly_broken'>>;
}

/** The dashboard's charts checked now; throws what Superset answered when its charts cannot be read. */
export async function checkDashboardCharts(
  up: MigrationUpstream,
  dashboardId: number,
  opts: { maxBundleBytes: number; log: DetachedLog },
): Promise<CheckedDashboard> {
  const [found, list, release] = await Promise.all([
    up.findDashboard(String(dashboardId)),
    up.dashboardCharts(dashboardId) as Promise<DashboardChart[]>,
    up.version(),
  ]);
  // An export refused (an account that may read but not export, a bundle over the limit) costs speed, not the check:
  // the charts are then read one detail at a time, as below the threshold.
  const exported =
    list.length >= EXPORT_FROM_CHARTS
      ? await fallbackLogged(
          `dashboard ${dashboardId}: its export for the chart checks (each chart is read alone instead)`,
          exportedOf(up, dashboardId, list, opts.maxBundleBytes),
          undefined,
          opts.log,
        )
      : undefined;
  const charts = await up.chartsForCheck(dashboardId, Promise.resolve(list), exported);
  const checks = await runChecks(up, charts, release, CALLS_AT_ONCE);
  const checkedAt = new Date().toISOString();
  return { title: found?.dashboard_title ?? null, charts: charts.map((c, i) => chartVerdict(c, checks[i]!, checkedAt)) };
}

/** The dashboard's charts as its export wrote them, by id (a chart the export lacks is read in detail). */
async function exportedOf(
  up: MigrationUpstream,
  dashboardId: number,
  list: DashboardChart[],
  maxBundleBytes: number,
): Promise<Map<number, ExportedChart>> {
  const [zip, uuids] = await Promise.all([up.exportDashboards([dashboardId]), up.chartUuids(list.map((c) => c.id))]);
  return exportedCharts(Bundle.fromZip(zip, maxBundleBytes), uuids);
}

function chartVerdict(chart: ChartForCheck, check: ChartCheck, checkedAt: string): CheckedDashboard['charts'][number] {
  const base = { id: chart.id, name: chart.name, viz_type: chart.viz_type, check: check.method, checked_at: checkedAt };
  const a = check.answer;
  if ('unverifiable' in a) return { ...base, verdict: 'not_verifiable', reason: a.unverifiable };
  if (!a.ok) return { ...base, verdict: 'broken', error: a.error };
  return { ...base, verdict: 'passed', rows: a.rows };
}

export function verdictTotals(charts: ReadonlyArray<{ verdict: ChartVerdict }>): Record<ChartVerdict, number> {
  const totals: Record<ChartVerdict, number> = { passed: 0, broken: 0, not_verifiable: 0 };
  for (const c of charts) totals[c.verdict]++;
  return totals;
}
