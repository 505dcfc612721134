import { CancellationScope, log, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities/index.ts';
import { NON_RETRYABLE_FAILURE_TYPES } from '../contracts/failures.ts';
import {
  failedDashboardOutcome,
  MIGRATION_OUTCOME,
  type DashboardOutcome,
  type MigrationInput,
  type MigrationResult,
  type RejectionRule,
} from '../contracts/migration.ts';
import { failureOf } from './item-failure.ts';
import { endTaskWithResult, reportTaskProgress, runAsTask } from './task-run.ts';

/**
 * One dashboard = one activity: export, rewrite, import and confirm, safe to repeat. Only what
 * passes by itself (a Superset outage) is retried; a refusal comes back as the dashboard's outcome.
 */
const dashboards = proxyActivities<Activities>({
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '15 seconds', // a dead worker's dashboard moves on within seconds
  retry: {
    initialInterval: '2 seconds',
    maximumInterval: '30 seconds',
    maximumAttempts: 4,
    nonRetryableErrorTypes: NON_RETRYABLE_FAILURE_TYPES,
  },
});

const verify = proxyActivities<Activities>({
  startToCloseTimeout: '5 minutes',
  heartbeatTimeout: '15 seconds',
  retry: { initialInterval: '2 seconds', maximumInterval: '20 seconds', maximumAttempts: 3, nonRetryableErrorTypes: NON_RETRYABLE_FAILURE_TYPES },
});

/**
 * Migrates (or, with dryRun, plans) dashboards one by one. Each dashboard succeeds or fails on
 * its own. Cancellation is honoured between dashboards only: the dashboard in flight finishes,
 * so every dashboard ends either fully imported or untouched.
 */
export async function migrationWorkflow(input: MigrationInput): Promise<MigrationResult> {
  return runAsTask(async () => {
    const outcomes: DashboardOutcome[] = [];
    let learned: RejectionRule[] = [];
    let cancelled = false;
    for (const [i, dashboardId] of input.dashboardIds.entries()) {
      if (CancellationScope.current().consideredCancelled) {
        cancelled = true;
        break;
      }
      // The dashboard, its verification and its progress line run as one non-cancellable unit:
      // a cancel lands between dashboards, never inside one.
      // An activity that fails for good fails its dashboard, never the task: every dashboard ends with an outcome.
      const outcome = await CancellationScope.nonCancellable(async () => {
        let o: DashboardOutcome;
        try {
          o = await dashboards.migrateDashboard({ ...input, dashboardId, learnedRejections: learned });
        } catch (err) {
          o = failedDashboardOutcome(dashboardId, failureOf(err, 'migrate'));
        }
        if (o.status === 'imported' && o.target_dashboard_id !== null) {
          try {
            o.verification = await verify.verifyMigratedDashboard({
              targetEnvId: input.targetEnvId,
              dashboardId: o.target_dashboard_id,
              expectedChartUuids: o.chart_uuids,
            });
            if (!o.verification.ok) o.status = 'imported_with_errors';
          } catch (err) {
            Object.assign(o, { status: 'imported_with_errors' }, failureOf(err, 'verify'));
          }
        }
        o.outcome = MIGRATION_OUTCOME[o.status];
        await reportTaskProgress({ done: i + 1, total: input.dashboardIds.length, message: `dashboard ${dashboardId}: ${o.status}` });
        return o;
      });
      learned = mergeRules(learned, outcome.learned_rejections);
      outcomes.push(outcome);
      log.info(`dashboard ${dashboardId}: ${outcome.status}${outcome.error ? ` (${outcome.error})` : ''}`);
    }
    const result = summarise(input, outcomes, cancelled);
    if (cancelled) {
      await endTaskWithResult(
        'CANCELLED',
        result,
        `cancelled after ${outcomes.length} of ${input.dashboardIds.length} dashboards; the rest were not touched`,
      );
    }
    const failed = result.totals.failed + result.totals.imported_with_errors;
    if (failed > 0) {
      // Never report success for a partial migration: the row says FAILED and keeps every outcome.
      await endTaskWithResult(
        'FAILED',
        result,
        `${failed} of ${input.dashboardIds.length} dashboard(s) did not migrate cleanly; see the report`,
        'PartialMigration',
      );
    }
    return result;
  });
}

function mergeRules(a: RejectionRule[], b: RejectionRule[]): RejectionRule[] {
  const all = new Map([...a, ...b].map((r) => [`${r.kind}:${r.field}`, r]));
  return [...all.values()];
}

function summarise(input: MigrationInput, outcomes: DashboardOutcome[], cancelled: boolean): MigrationResult {
  const count = (...s: DashboardOutcome['status'][]) => outcomes.filter((o) => s.includes(o.status)).length;
  const failed = outcomes.filter((o) => o.status === 'failed' || o.status === 'imported_with_errors').map((o) => o.id);
  return {
    dry_run: input.dryRun,
    source_env_id: input.sourceEnvId,
    target_env_id: input.targetEnvId,
    totals: {
      requested: input.dashboardIds.length,
      processed: outcomes.length,
      imported: count('imported'),
      unchanged: count('unchanged'),
      imported_with_errors: count('imported_with_errors'),
      planned: count('planned'),
      skipped: count('skipped'),
      failed: count('failed'),
      not_started: input.dashboardIds.length - outcomes.length,
    },
    cancelled,
    items: outcomes,
    not_started: input.dashboardIds.length - outcomes.length,
    next_actions: failed.length
      ? [
          {
            action: 'retry_failed',
            description: `Retry the ${failed.length} failed dashboard(s) with one call once their causes are fixed`,
            request: {
              method: 'POST',
              path: '/api/dashboards/migrate',
              body: {
                source_env_id: input.sourceEnvId,
                target_env_id: input.targetEnvId,
                dashboard_ids: failed,
                overwrite: input.overwrite,
                ...(input.rls && input.rls !== 'strict' ? { rls: input.rls } : {}),
              },
            },
          },
        ]
      : [],
  };
}
