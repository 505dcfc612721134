/**
 * One dashboard's verification from its charts: each chart checked in the target and, paired by
 * uuid, in the source, then classified (./classify.ts). The dashboard passes when it is there,
 * its charts are linked and no chart is broken by the migration.
 */
import type { Context } from '@temporalio/activity';
import type { ChartClassification, ChartVerification, Verification } from '../../../contracts/migration.ts';
import type { MigrationUpstream } from '../upstream.ts';
import { classify } from './classify.ts';
import { inParallel } from './parallel.ts';
import { runCheck } from './run.ts';
import type { ChartAnswer, ChartForCheck } from './types.ts';

/** Charts of one dashboard checked at once. */
const CHART_PARALLELISM = 2;

export interface JudgeSides {
  target: MigrationUpstream;
  targetRelease: string | null;
  source?: MigrationUpstream;
  sourceRelease: string | null;
}

export async function judgeDashboard(
  sides: JudgeSides,
  d: { dashboardId: number; expectedChartUuids: string[] },
  charts: ChartForCheck[],
  sourceCharts: ChartForCheck[] | { unreadable: string } | null,
  log: Context['log'],
): Promise<Verification> {
  const byUuid = new Map(Array.isArray(sourceCharts) ? sourceCharts.filter((c) => c.uuid).map((c) => [c.uuid!, c]) : []);
  const results: ChartVerification[] = new Array(charts.length);
  // A few charts at a time per dashboard (the verifier checks a few dashboards at once); each chart's source and target checks together.
  await inParallel([...charts.keys()], CHART_PARALLELISM, async (at) => {
    const c = charts[at]!;
    const twin = c.uuid ? byUuid.get(c.uuid) : undefined;
    const [target, source] = await Promise.all([
      runCheck(sides.target, c, sides.targetRelease),
      sourceAnswer(sides, twin, sourceCharts),
    ]);
    const judged = classify(target.answer, source);
    const r: ChartVerification = {
      id: c.id,
      name: c.name,
      ok: judged.classification !== 'broken_by_migration',
      ...(c.uuid ? { uuid: c.uuid } : {}),
      viz_type: c.viz_type,
      ...(target.method ? { check: target.method } : {}),
      classification: judged.classification,
      ...('ok' in target.answer && target.answer.ok ? { rows: target.answer.rows } : {}),
      ...('error' in target.answer ? { error: target.answer.error } : {}),
      ...(source && 'error' in source && judged.classification === 'failing_in_source' ? { source_error: source.error } : {}),
      ...(judged.reason ? { reason: judged.reason } : {}),
    };
    if (!r.ok) log.warn(`chart '${c.name}' (${c.id}) is broken by the migration: ${r.error ?? r.reason}`);
    results[at] = r;
  });
  const classes = countClasses(results);
  const ok = charts.length >= d.expectedChartUuids.length && classes.broken_by_migration === 0;
  log.info(
    `verified target dashboard ${d.dashboardId}: ${charts.length}/${d.expectedChartUuids.length} charts linked; ` +
      Object.entries(classes).map(([k, n]) => `${n} ${k}`).join(', '),
  );
  return { ok, dashboard_present: true, charts_expected: d.expectedChartUuids.length, charts_linked: charts.length, charts: results, classes };
}

/** The source's answer for a chart's twin: null without a source to compare with; not verifiable when the source could not be read. */
async function sourceAnswer(
  sides: JudgeSides,
  twin: ChartForCheck | undefined,
  sourceCharts: ChartForCheck[] | { unreadable: string } | null,
): Promise<ChartAnswer | null> {
  if (sourceCharts && !Array.isArray(sourceCharts)) return { unverifiable: sourceCharts.unreadable };
  if (!twin || !sides.source) return null;
  return (await runCheck(sides.source, twin, sides.sourceRelease)).answer;
}

function countClasses(results: ChartVerification[]): Record<ChartClassification, number> {
  const classes: Record<ChartClassification, number> = { passes: 0, broken_by_migration: 0, failing_in_source: 0, not_verifiable: 0 };
  for (const r of results) classes[r.classification!]++;
  return classes;
}
