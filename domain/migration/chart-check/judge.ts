/**
 * One dashboard's verification from its charts: each chart checked in the target and, paired by
 * uuid, in the source, then classified (./classify.ts). The dashboard passes when it is there,
 * its charts are linked and no chart is broken by the migration.
 */
import type { ChartClassification, ChartVerification, Verification } from '../../../contracts/migration.ts';
import type { Log } from '../port.ts';
import type { MigrationUpstream } from '../upstream.ts';
import { classify } from './classify.ts';
import { runChecks } from './run.ts';
import type { SourceChecks } from './source-cache.ts';
import { standsIn } from './target-ahead.ts';
import type { ChartCheck, ChartForCheck } from './types.ts';

/** Calls of one dashboard's checks at once per side (the environment's own bound is ./limit.ts's). */
const CHART_PARALLELISM = 2;

export interface JudgeSides {
  target: MigrationUpstream;
  targetRelease: string | null;
  source?: MigrationUpstream;
  sourceRelease: string | null;
  /** Source checks that passed before, by content (./source-cache.ts): such a chart is not queried again. */
  sourceChecks?: SourceChecks;
}

export async function judgeDashboard(
  sides: JudgeSides,
  d: { dashboardId: number; expectedChartUuids: string[] },
  charts: ChartForCheck[],
  sourceCharts: ChartForCheck[] | { unreadable: string } | null,
  log: Log,
  /** The charts' checks made right after the import (./target-ahead.ts), in the charts' order: those that passed stand in. */
  targetMade?: ChartCheck[],
): Promise<Verification> {
  const byUuid = new Map(Array.isArray(sourceCharts) ? sourceCharts.filter((c) => c.uuid).map((c) => [c.uuid!, c]) : []);
  const twins = charts.map((c) => (c.uuid ? byUuid.get(c.uuid) : undefined));
  // Each side's checks together (the charts on one dataset in one call), both sides at once.
  const [targetChecks, sourceChecks] = await Promise.all([
    targetChecksOf(sides, charts, targetMade),
    sourceChecksOf(sides, twins, sourceCharts),
  ]);
  const results: ChartVerification[] = charts.map((c, at) => {
    const target = targetChecks[at]!;
    const twin = sourceChecks[at]!;
    const source = twin?.answer ?? null;
    // Each answer judged with its release and method: what releases answer differently is not compared.
    const judged = classify(target.answer, source, {
      target: { release: sides.targetRelease, method: target.method, columnsFromData: target.columnsFromData },
      source: { release: sides.sourceRelease, method: twin?.method ?? null, columnsFromData: twin?.columnsFromData },
    });
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
    return r;
  });
  const classes = countClasses(results);
  const ok = charts.length >= d.expectedChartUuids.length && classes.broken_by_migration === 0;
  log.info(
    `verified target dashboard ${d.dashboardId}: ${charts.length}/${d.expectedChartUuids.length} charts linked; ` +
      Object.entries(classes)
        .map(([k, n]) => `${n} ${k}`)
        .join(', '),
  );
  return {
    ok,
    dashboard_present: true,
    charts_expected: d.expectedChartUuids.length,
    charts_linked: charts.length,
    charts: results,
    classes,
  };
}

/** The target charts' checks: those made after the import that passed taken as made, the rest run now. */
async function targetChecksOf(sides: JudgeSides, charts: ChartForCheck[], made: ChartCheck[] | undefined): Promise<ChartCheck[]> {
  if (!made || made.length !== charts.length) return runChecks(sides.target, charts, sides.targetRelease, CHART_PARALLELISM);
  const todo = [...charts.keys()].filter((i) => !standsIn(made[i]));
  const ran = await runChecks(
    sides.target,
    todo.map((i) => charts[i]!),
    sides.targetRelease,
    CHART_PARALLELISM,
  );
  const out = [...made];
  for (const [k, i] of todo.entries()) out[i] = ran[k]!;
  return out;
}

/** Each chart's check in the source (its twin's): null without a twin or a source to compare with; not verifiable when the source could not be read. */
async function sourceChecksOf(
  sides: JudgeSides,
  twins: Array<ChartForCheck | undefined>,
  sourceCharts: ChartForCheck[] | { unreadable: string } | null,
): Promise<Array<ChartCheck | null>> {
  if (sourceCharts && !Array.isArray(sourceCharts))
    return twins.map(() => ({ method: null, answer: { unverifiable: sourceCharts.unreadable } }));
  if (!sides.source) return twins.map(() => null);
  const present = twins.flatMap((t) => (t ? [t] : []));
  const checks = await sourceChecksKept(sides, sides.source, present);
  let next = 0;
  return twins.map((t) => (t ? checks[next++]! : null));
}

/** The source charts' checks: those that passed before with the same content taken as kept, the rest run (and kept when they pass). */
async function sourceChecksKept(sides: JudgeSides, source: MigrationUpstream, charts: ChartForCheck[]): Promise<ChartCheck[]> {
  const kept = sides.sourceChecks;
  if (!kept) return runChecks(source, charts, sides.sourceRelease, CHART_PARALLELISM);
  const keys = charts.map((c) => kept.cache.keyOf(kept.envId, c, sides.sourceRelease));
  const out: Array<ChartCheck | undefined> = keys.map((k) => kept.cache.get(k));
  const todo = [...charts.keys()].filter((i) => !out[i]);
  const ran = await runChecks(
    source,
    todo.map((i) => charts[i]!),
    sides.sourceRelease,
    CHART_PARALLELISM,
  );
  for (const [k, i] of todo.entries()) {
    out[i] = ran[k]!;
    kept.cache.record(keys[i]!, ran[k]!);
  }
  return out as ChartCheck[];
}

function countClasses(results: ChartVerification[]): Record<ChartClassification, number> {
  const classes: Record<ChartClassification, number> = { passes: 0, broken_by_migration: 0, failing_in_source: 0, not_verifiable: 0 };
  for (const r of results) classes[r.classification!]++;
  return classes;
}
