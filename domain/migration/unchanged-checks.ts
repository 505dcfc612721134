/**
 * The verification of a rerun's unchanged dashboards (issue 50): neither export changed, yet the
 * target may have changed under them (a table dropped, a column renamed), which no export shows.
 * So, by default, each one's target side is checked again, begun beside the step that told it
 * unchanged (./settle-unchanged.ts, or the full plan's ./plan-one.ts): its charts are read from
 * the copy's export the comparison was made on and checked in the target
 * (./target-checks-ahead.ts), bounded by the environment's chart-query limit
 * (./chart-check/limit.ts); its source charts' verdicts are reused by content where they passed
 * before (./chart-check/source-cache.ts, ./source-checks-ahead.ts). The verification activity the
 * workflow starts for them (./verify.ts) takes both and classifies as for an import.
 * With `verification: "if_changed"` a dashboard whose last verification passed carries it
 * instead (contracts/migration.ts carriedVerification), and nothing here runs for it.
 *
 * The target's queries ask Superset for a fresh answer (`force`): an unchanged dashboard's charts
 * send the very queries its last verification sent, so a Superset with a data cache would answer
 * them from it (the dataset's `changed_on`, part of its cache key, does not move when a table
 * under it is dropped) and a check would pass on what it did not look at.
 */
import type { Bundle } from '../../lib/bundles/bundle.ts';
import type { AheadScope } from './batch-context.ts';
import type { MigrationUpstream } from './upstream.ts';
import { checkSourcesAhead } from './source-checks-ahead.ts';
import { checkTargetsAhead } from './target-checks-ahead.ts';

export interface UnchangedToCheck {
  sourceDashboardId: number;
  targetDashboardId: number;
  /** The target's export of the copy, as the comparison read it (absent: exported again, one call for the batch). */
  copy?: Bundle;
  /** Its charts' uuids in the target by id, as the plan on the copy named them. */
  chartUuids?: ReadonlyMap<number, string>;
}

/** Begins both sides' checks of these unchanged dashboards and returns at once (nothing here throws: what is not checked ahead, the verification checks). */
export function checkUnchangedAhead(
  ctx: AheadScope & {
    /** What the companions' source views are kept under (./companions/step.ts snapshotOf): the task's snapshot. */
    taskSnapshot: object;
  },
  dashboards: UnchangedToCheck[],
): void {
  if (!dashboards.length) return;
  checkSourcesAhead(
    ctx,
    'unchangedSourceChecks',
    dashboards.map((d) => d.sourceDashboardId),
    Promise.resolve(),
    ctx.taskSnapshot,
  );
  const exports = new Map(dashboards.flatMap((d) => (d.copy ? [[d.targetDashboardId, d.copy] as const] : [])));
  const uuids = new Map(dashboards.flatMap((d) => [...(d.chartUuids ?? [])]));
  checkTargetsAhead(
    ctx,
    'unchangedTargetChecks',
    dashboards.map((d) => d.targetDashboardId),
    { exports, uuids, wrap: freshAnswers },
  );
}

/** The upstream with its chart-data queries sent with `force`: Superset runs them rather than answering from its data cache. */
export function freshAnswers(up: MigrationUpstream): MigrationUpstream {
  const forced = (qc: Record<string, unknown>) => ({ ...qc, force: true });
  return {
    ...up,
    runQueryContext: (qc) => up.runQueryContext(forced(qc)),
    ...(up.runQueryContexts ? { runQueryContexts: (qcs) => up.runQueryContexts!(qcs.map(forced)) } : {}),
  };
}

/** The charts' uuids by their id in the target, from a plan's objects (those with a target id). */
export function targetChartUuids(objects: ReadonlyArray<{ kind: string; uuid: string; target_id?: number | null }>): Map<number, string> {
  return new Map(objects.flatMap((o) => (o.kind === 'chart' && typeof o.target_id === 'number' ? [[o.target_id, o.uuid] as const] : [])));
}
