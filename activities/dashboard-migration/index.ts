/**
 * The migration's activities, as the workflows call them (names, inputs and results are what
 * running workflows replay against: they stay as they are). Each one delegates: a batch is a
 * straight sequence of steps (../../domain/migration/batch.ts), over the services built here once per worker
 * (../../domain/migration/context.ts) and the worker's caches (../../domain/migration/caches.ts).
 */
import { Context } from '@temporalio/activity';
import type { ItemFailure } from '../../contracts/failures.ts';
import type {
  DashboardOutcome,
  FinishMigrationInput,
  MigrationBatchInput,
  MigrationBatchResult,
  MigrationSummary,
  RejectionRule,
  Verification,
  VerifyBatchInput,
} from '../../contracts/migration.ts';
import { activityPort } from '../activity-port.ts';
import type { ActivityDeps } from '../deps.ts';
import { currentTaskId } from '../task-context.ts';
import {
  chartQueryVerifier,
  createMigrationCaches,
  createMigrationServices,
  finishTask,
  forgetTask,
  migrateDashboard,
  type MigrationCaches,
  type MigrationServices,
  recordFailures,
  type Request,
  runBatch,
  unwrapStep,
  type Verifier,
  verifyDeployed,
  verifyImported,
} from '../../domain/migration/index.ts';
import { clientsOnce } from './activity-clients.ts';

/**
 * The migration activities of a worker. `caches` (what the worker keeps between batches of a
 * task) and `verifier` are injected; by default a worker's own caches and the chart-query verifier.
 */
export function createMigrationActivities(deps: ActivityDeps, opts: { caches?: MigrationCaches; verifier?: Verifier } = {}) {
  const svc = createMigrationServices(deps, opts.caches ?? createMigrationCaches(), opts.verifier ?? chartQueryVerifier);
  return { ...dashboardActivities(svc), ...batchActivities(svc), ...bookkeepingActivities(svc) };
}

/** One dashboard at a time: the drift report's comparison, a git deploy's check. */
function dashboardActivities(svc: MigrationServices) {
  return {
    /**
     * Plans (dry run) or migrates one dashboard on its own and returns its outcome (the drift
     * report's comparison). Upstream outages are retried by Temporal; a refusal is the outcome.
     */
    async migrateDashboard(input: Request & { dashboardId: number; learnedRejections: RejectionRule[] }): Promise<DashboardOutcome> {
      return withHeartbeat(() => migrateDashboard(clientsOnce(svc), currentTaskId(), input, activityPort()));
    },

    /** The dashboard is there, its charts are linked, and each chart's query runs in the target (a git deploy's check). */
    async verifyMigratedDashboard(input: {
      targetEnvId: string;
      dashboardId: number;
      expectedChartUuids: string[];
    }): Promise<Verification> {
      return withHeartbeat(() => verifyDeployed(clientsOnce(svc), input, activityPort().log));
    },
  };
}

/** A migration task's batches and their verifications. */
function batchActivities(svc: MigrationServices) {
  return {
    /**
     * Plans (dry run) or migrates a batch of dashboards (../../domain/migration/batch.ts): their sources exported in
     * one call, the target's existing copies in one more, each planned on its own, the ready ones
     * imported together (one by one when Superset refuses the lot). Upstream outages are retried
     * by Temporal (the batch again: recorded outcomes are kept, intent rows stop a second import);
     * a refusal is its dashboard's outcome, so its siblings carry on. Outcomes are recorded in
     * PostgreSQL; the workflow gets only what it needs to go on.
     */
    async migrateBatch(input: MigrationBatchInput): Promise<MigrationBatchResult> {
      return withHeartbeat(() => runBatch(clientsOnce(svc), input, currentTaskId(), activityPort()));
    },

    /**
     * Verifies imported dashboards a few at a time (each: present, charts linked, every chart's
     * query runs), updates their recorded outcomes, and records the target's state for the next
     * run. The workflow starts it for each batch's imports as the batch returns, beside the next
     * batch; chart queries to an environment stay within VERIFY_CONCURRENCY (../../domain/migration/chart-check/limit.ts).
     */
    async verifyMigratedBatch(input: VerifyBatchInput): Promise<{ failed: number }> {
      return withHeartbeat(() => verifyImported(clientsOnce(svc), currentTaskId(), input, activityPort().log));
    },
  };
}

/** What a migration task records of the dashboards that failed, and its end. */
function bookkeepingActivities(svc: MigrationServices) {
  return {
    /**
     * Dashboards whose activity failed for good. A batch (step `migrate`): each one without an
     * outcome is recorded as failed with the cause. A verification (step `verify`): each imported
     * one is recorded as imported with errors.
     */
    async recordDashboardFailures(input: {
      step: 'migrate' | 'verify';
      dashboards: Array<{ sourceDashboardId: number; position: number }>;
      failure: ItemFailure;
    }): Promise<void> {
      await recordFailures(svc, currentTaskId(), input);
    },

    /**
     * Ends the task: its result assembled from the recorded outcomes and written to its row with
     * the final status (CANCELLED, FAILED when any dashboard did not migrate cleanly, else
     * SUCCEEDED). The workflow gets the totals and the status to close with. The task's last
     * engine activity: whatever this worker still holds of it (reads begun ahead that no later
     * activity took, its source exports and snapshot) is settled and dropped here.
     */
    async finishMigration(input: FinishMigrationInput): Promise<MigrationSummary> {
      const taskId = currentTaskId();
      try {
        return await finishTask(svc, taskId, input);
      } finally {
        await forgetTask(svc.caches, taskId);
      }
    },
  };
}

/**
 * Runs an activity's work with a heartbeat every 3 s while Superset works, so a killed worker is
 * noticed within the heartbeat timeout. What it throws leaves as it was thrown (never tagged with
 * a dashboard's step, ../../domain/migration/step.ts), for Temporal's retry policy.
 */
async function withHeartbeat<T>(fn: () => Promise<T>): Promise<T> {
  const beat = setInterval(() => Context.current().heartbeat(), 3000);
  try {
    return await fn();
  } catch (err) {
    throw unwrapStep(err);
  } finally {
    clearInterval(beat);
  }
}
