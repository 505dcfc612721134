/**
 * One dashboard from start to end, asking Superset for everything itself: the path of a
 * dashboard on its own (the drift report's comparison, and a dashboard of a refused joint import).
 */
import { MIGRATION_OUTCOME, type DashboardOutcome, type RejectionRule } from '../../contracts/migration.ts';
import {
  envRulesFor,
  mappingsFor,
  openUpstreams,
  refuseStale,
  type MigrationServices,
  type PlanScope,
  type Request,
  type Upstreams,
} from './context.ts';
import { failedOutcome } from './failure.ts';
import { importOne } from './import.ts';
import { planOne, type Planned } from './plan-one.ts';
import type { PreparedBundle } from './plan.ts';
import type { ActivityPort } from './port.ts';

/** Plans the dashboard without anything read ahead and, unless its outcome is final there, imports it alone. */
export async function migrateOne(scope: PlanScope, dashboardId: number, learned: RejectionRule[]): Promise<DashboardOutcome> {
  let prepared: PreparedBundle | undefined;
  try {
    const planned = await planOne(scope, dashboardId, undefined);
    if ('done' in planned) return planned.done;
    prepared = planned.ready.prepared;
    return await importOne(scope, planned.ready, learned);
  } catch (err) {
    return failedOutcome(scope, dashboardId, err, { fallback: 'export', index: scope.up.index, prepared });
  }
}

/** A planned dashboard imported alone, or its failure. */
export async function importAlone(scope: PlanScope, p: Planned, learned: RejectionRule[]): Promise<DashboardOutcome> {
  try {
    return await importOne(scope, p, learned);
  } catch (err) {
    return failedOutcome(scope, p.dashboardId, err, { fallback: 'import', index: scope.up.index, prepared: p.prepared });
  }
}

/**
 * Plans (dry run) or migrates one dashboard on its own, as the migrateDashboard activity: a
 * failure to read either environment is the dashboard's failure at `plan`.
 */
export async function migrateDashboard(
  svc: MigrationServices,
  taskId: string,
  input: Request & { dashboardId: number; learnedRejections: RejectionRule[] },
  activity: ActivityPort,
): Promise<DashboardOutcome> {
  await refuseStale(svc.deps, input);
  let up: Upstreams;
  try {
    up = await openUpstreams(svc, input, taskId);
  } catch (err) {
    return await failedOutcome({ input, log: activity.log }, input.dashboardId, err, { fallback: 'plan' });
  }
  const scope: PlanScope = {
    svc,
    input,
    taskId,
    ...activity,
    up,
    mappings: await mappingsFor(svc.deps, input),
    envRules: await envRulesFor(svc.deps, input),
  };
  const o = await migrateOne(scope, input.dashboardId, input.learnedRejections);
  return { ...o, outcome: MIGRATION_OUTCOME[o.status] };
}
