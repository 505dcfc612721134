/**
 * One dashboard of an environment checked with the migration's chart checks
 * (../../domain/migration/chart-check): each chart planned and run the way that release's
 * frontend asks for it, through the worker's per-environment bound on chart queries. Alone, with
 * no source to compare with, a verdict is what that Superset answers: its refusal is the chart's
 * failure (its own message), no faithful check or no answer is not_verifiable with the reason.
 */
import type { ChartValidation, ChartVerdict } from '../../contracts/validation.ts';
import { type ChartCheck, type ChartForCheck, type MigrationUpstream, runChecks } from '../../domain/migration/index.ts';

/** Chart-data calls of one dashboard at once (the environment's bound still caps them all). */
const CALLS_AT_ONCE = 2;

export interface CheckedDashboard {
  title: string | null;
  charts: Array<Omit<ChartValidation, 'first_seen_broken_at' | 'last_passed_at' | 'newly_broken'>>;
}

/** The dashboard's charts checked now; throws what Superset answered when its charts cannot be read. */
export async function checkDashboardCharts(up: MigrationUpstream, dashboardId: number): Promise<CheckedDashboard> {
  const [found, charts, release] = await Promise.all([up.findDashboard(String(dashboardId)), up.chartsForCheck(dashboardId), up.version()]);
  const checks = await runChecks(up, charts, release, CALLS_AT_ONCE);
  const checkedAt = new Date().toISOString();
  return { title: found?.dashboard_title ?? null, charts: charts.map((c, i) => chartVerdict(c, checks[i]!, checkedAt)) };
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
