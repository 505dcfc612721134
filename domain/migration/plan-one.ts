import { mayShortcut } from '../../db/dashboard-migration/store.ts';
import type { DashboardOutcome } from '../../contracts/migration.ts';
import { uniqueActions } from '../../contracts/outcomes.ts';
import { maxBundleBytes } from './deps.ts';
import { outcomeBase } from './apply.ts';
import type { PlanScope } from './context.ts';
import { exportDashboard, planDashboard, type PlanAhead, type PreparedBundle } from './plan.ts';
import { applyCompanions, checkCompanions, defersCopyKinds, type CompanionCheck } from './companions/step.ts';
import { rehashAfterCompanions, wroteCompanions } from './companion-state.ts';
import { checkDashboardRls, copyRules, type RlsCheck } from './rls-step.ts';
import { withStep } from './step.ts';

/** One dashboard between planning and its import: what the import and its report need. */
export interface Planned {
  position: number;
  dashboardId: number;
  prepared: PreparedBundle;
  outcome: DashboardOutcome;
  rls: RlsCheck;
  /** Companion assets compared before the import; the copy kinds are written after it. */
  companions?: CompanionCheck;
  plannedHash: string;
}

/** A plan's end: the dashboard's outcome is final (dry run, blocked, unchanged), or it is ready to import. */
export type PlanResult = { done: DashboardOutcome } | { ready: Omit<Planned, 'position'> };

/**
 * Plans one dashboard, step by step: exported (or read ahead), remapped, collisions resolved,
 * row-level security compared, and the unchanged check. What a step throws carries the step
 * (./step.ts), for the dashboard's failure.
 */
export async function planOne(scope: PlanScope, dashboardId: number, ahead: PlanAhead | undefined): Promise<PlanResult> {
  const { svc, input, up, log } = scope;
  const opts = {
    source: up.source,
    target: up.target,
    index: up.index,
    sourceEnvId: input.sourceEnvId,
    targetEnvId: input.targetEnvId,
    dashboardId,
    overwrite: input.overwrite,
    mappings: scope.mappings,
    envRules: scope.envRules,
    maxBundleBytes: maxBundleBytes(svc.deps),
    ahead,
  };
  const exported = await withStep('export', () => exportDashboard(opts));
  const prepared = await withStep('plan', () => planDashboard(exported, opts));
  const outcome = outcomeBase(dashboardId, prepared);
  if (prepared.blocked) {
    log.warn(`dashboard ${dashboardId} ('${prepared.title}'): ${prepared.blocked.error}`);
    return {
      done: {
        ...outcome,
        status: prepared.blocked.status,
        step: 'plan',
        error: prepared.blocked.error,
        next_actions: prepared.blocked.next_actions,
      },
    };
  }
  for (const c of prepared.collisions) log.warn(`collision: ${c.detail}; ${c.resolution}`);

  // Row-level security: no export carries it, so the rules are compared here (read once per task and environment).
  await withStep('rls', () => up.sourceIndex.rlsRules(), input.sourceEnvId);
  // The unchanged check and the rules it copies report as `rls` too, the last step reached.
  return withStep('rls', () => compareAndSettle(scope, dashboardId, prepared, outcome));
}

/** Row-level security compared and decided by mode; then a dry run's end, or the unchanged check. */
async function compareAndSettle(
  scope: PlanScope,
  dashboardId: number,
  prepared: PreparedBundle,
  outcome: DashboardOutcome,
): Promise<PlanResult> {
  const { svc, input, log } = scope;
  const rls = await rlsCompared(scope, dashboardId, prepared, outcome);
  if (rls.blocked) {
    log.warn(`dashboard ${dashboardId} ('${prepared.title}'): ${rls.blocked.error}`);
    return { done: { ...outcome, status: 'failed', step: 'rls', ...rls.blocked } };
  }
  if (rls.report.ignored_by_request)
    log.warn(
      `'${prepared.title}': row-level security differs and the request says to ignore it (${rls.report.differences.length} difference(s))`,
    );
  // Companions (reports, owners, roles, tags, layers, templates, queries): no export carries them either.
  // A migration that may import compares the copy kinds after the import (./companions/step.ts checkCompanions).
  const companions = await withStep('companions', () =>
    checkCompanions(scope, dashboardId, prepared, { deferCopy: defersCopyKinds(input) }),
  );
  outcome.companions = companions.reports;
  outcome.next_actions = [...(outcome.next_actions ?? []), ...companions.next_actions];
  if (companions.blocked) {
    log.warn(`dashboard ${dashboardId} ('${prepared.title}'): ${companions.blocked.error}`);
    return { done: { ...outcome, status: 'failed', step: 'companions', ...companions.blocked } };
  }
  if (input.dryRun) {
    log.info(`dry run of '${prepared.title}': ${summary(outcome.objects)}`);
    return { done: { ...outcome, status: 'planned' } };
  }

  const plannedHash = prepared.bundle.contentHash();
  const unchanged = await settledIfUnchanged(scope, dashboardId, prepared, outcome, { rls, companions, plannedHash });
  if (unchanged) return unchanged;
  await svc.states.forget(input.targetEnvId, prepared.dashboardUuid);
  return { ready: { dashboardId, prepared, outcome, rls, companions, plannedHash } };
}

/** The dashboard's row-level security compared with the target's, the report and what to do recorded in its outcome. */
async function rlsCompared(scope: PlanScope, dashboardId: number, prepared: PreparedBundle, outcome: DashboardOutcome): Promise<RlsCheck> {
  const { input, up } = scope;
  const rls: RlsCheck = await checkDashboardRls({
    mode: input.rls ?? 'strict',
    dryRun: input.dryRun,
    replaceExisting: input.rlsOverwrite,
    sourceIndex: up.sourceIndex,
    targetIndex: up.index,
    prepared,
    request: { ...input, dashboardId },
  });
  outcome.rls = rls.report;
  if (rls.next_actions.length) outcome.next_actions = [...(outcome.next_actions ?? []), ...rls.next_actions];
  return rls;
}

/**
 * Nothing changed since the last migration into this target, on either side: nothing to import,
 * the dashboard's end returned. Undefined when it is to be imported (changed, never recorded, or
 * unchanged but its last verification failed: then marked `reverified_after_failure`).
 */
async function settledIfUnchanged(
  scope: PlanScope,
  dashboardId: number,
  prepared: PreparedBundle,
  outcome: DashboardOutcome,
  checked: { rls: RlsCheck; companions: CompanionCheck; plannedHash: string },
): Promise<PlanResult | undefined> {
  const { svc, input, log } = scope;
  if (!input.overwrite || prepared.targetDashboardId === null || prepared.targetHash === null) return undefined;
  const last = await svc.states.get(input.targetEnvId, prepared.dashboardUuid);
  // Recorded by this very task: an earlier attempt imported it (a retry after a crash), which importPrepared reports as such.
  const same =
    last && last.task_id !== scope.taskId && last.bundle_hash === checked.plannedHash && last.target_hash === prepared.targetHash;
  if (same && !mayShortcut(last)) {
    log.info(
      `'${prepared.title}' is unchanged since task ${last.task_id ?? '?'}, but its verification there failed: imported and verified again`,
    );
    outcome.reverified_after_failure = true;
    return undefined;
  }
  if (!same) return undefined;
  return keptUnchanged(scope, dashboardId, prepared, outcome, {
    ...checked,
    targetDashboardId: prepared.targetDashboardId,
    lastTaskId: last.task_id,
  });
}

/**
 * An unchanged dashboard is not imported, but what is written beside the import still is: its
 * rules to copy, its companions (and the hash a rerun compares, when they wrote the target).
 */
async function keptUnchanged(
  scope: PlanScope,
  dashboardId: number,
  prepared: PreparedBundle,
  outcome: DashboardOutcome,
  kept: { rls: RlsCheck; companions: CompanionCheck; targetDashboardId: number; lastTaskId: string | null },
): Promise<PlanResult> {
  const { svc, input, up, log } = scope;
  const { rls, companions, targetDashboardId } = kept;
  if (rls.toCopy.length)
    rls.report.writes = await copyRules({
      source: up.source,
      target: up.target,
      targetIndex: up.index,
      prepared,
      rules: rls.toCopy,
      replaceExisting: input.rlsOverwrite,
    });
  const refused = await withStep('companions', () => applyCompanions(scope, dashboardId, prepared, companions));
  outcome.next_actions = uniqueActions([...(outcome.next_actions ?? []), ...companions.next_actions]);
  if (refused.length)
    return {
      done: {
        ...outcome,
        target_dashboard_id: targetDashboardId,
        status: 'imported_with_errors',
        step: 'companions',
        error: `unchanged, but companions were not written: ${refused.join('; ')}`,
      },
    };
  if (wroteCompanions(companions.reports))
    await rehashAfterCompanions(svc, input.targetEnvId, up.target, [{ targetDashboardId, dashboardUuid: prepared.dashboardUuid }], log);
  log.info(
    `'${prepared.title}' is unchanged since task ${kept.lastTaskId ?? '?'} migrated it and the target holds it as then: not imported`,
  );
  return { done: { ...outcome, status: 'unchanged', target_dashboard_id: targetDashboardId } };
}

function summary(objects: DashboardOutcome['objects']): string {
  const counts: Record<string, number> = {};
  for (const o of objects) counts[o.action] = (counts[o.action] ?? 0) + 1;
  return Object.entries(counts)
    .map(([a, n]) => `${n} ${a}`)
    .join(', ');
}
