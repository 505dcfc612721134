// The approval gate (workflows/approval-gate.ts, through runAsTask) of a migration into a protected
// environment, on Temporal's time-skipping test server with mocked activities: the 24-hour window
// runs out in milliseconds (the server skips to the timer while the test awaits the result), and a
// decision inside the window is refused from the requester and taken from another person. The
// end-to-end counterpart is test/tasks/protected-environments.test.ts (a real task row, a short window).
import { randomUUID } from 'node:crypto';
import { CancelledFailure, WorkflowFailedError, WorkflowUpdateFailedError, type WorkflowHandle } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { WorkflowBundle } from '@temporalio/worker';
import { describe, expect, it } from 'vitest';
import type { MigrationInput, MigrationSummary } from '../../contracts/migration.ts';
import type { ApprovalOutcome, TaskApproval } from '../../contracts/tasks.ts';
import { decideApprovalUpdate } from '../../contracts/workflow-messages.ts';
import type { migrationWorkflow } from '../../workflows/migration.ts';
import {
  callsOf,
  hasTestServer,
  recorded,
  onTimeSkipping,
  testWorker,
  type ActivityCall,
  type MockActivities,
} from '../support/time-skipping.ts';
import { migrationTotals } from '../support/migration-totals.ts';

let env: TestWorkflowEnvironment;
let bundle: WorkflowBundle;

onTimeSkipping((e, b) => {
  env = e;
  bundle = b;
});

const DAY_MS = 24 * 60 * 60 * 1000;
const APPROVAL: TaskApproval = { required: true, requestedBy: 'user-requester', timeoutSeconds: DAY_MS / 1000, envId: 'env-prod' };
const INPUT: MigrationInput = {
  approval: APPROVAL,
  sourceEnvId: 'env-dev',
  targetEnvId: 'env-prod',
  dashboardIds: [7],
  dbMappings: [],
  overwrite: false,
  dryRun: false,
};
const SUCCEEDED: MigrationSummary = {
  status: 'SUCCEEDED',
  message: null,
  totals: migrationTotals({ requested: 1, processed: 1, imported: 1 }),
  cancelled: false,
};

/** The gate's activities and a one-dashboard migration's; `waiting` settles when the row is marked waiting. */
function mocks(
  waiting: PromiseWithResolvers<void>,
): MockActivities<
  'markTaskRunning' | 'recordTaskApproval' | 'finishTask' | 'taskItemsPerRun' | 'migrateBatch' | 'verifyMigratedBatch' | 'finishMigration'
> {
  return {
    markTaskRunning: async () => 'running',
    recordTaskApproval: async (input) => {
      if (input.waiting) waiting.resolve();
    },
    finishTask: async () => undefined,
    taskItemsPerRun: async () => 1000,
    migrateBatch: async (input) => ({
      items: input.batch.map((d) => ({ ...d, status: 'imported', target_dashboard_id: 70, dashboard_uuid: 'uuid-7', planned_hash: 'h' })),
      learned: [],
    }),
    verifyMigratedBatch: async () => ({ failed: 0 }),
    finishMigration: async () => SUCCEEDED,
  };
}

/** Starts the gated migration on a worker of its own, runs `meanwhile` (decisions), then awaits its end. */
async function runGated(
  calls: ActivityCall[],
  meanwhile: (handle: Handle, waiting: Promise<void>) => Promise<void> = async () => undefined,
) {
  const taskQueue = `approval-gate-${randomUUID()}`;
  const waiting = Promise.withResolvers<void>();
  const worker = await testWorker(env, taskQueue, bundle, recorded(mocks(waiting), calls));
  return worker.runUntil(async () => {
    const handle = await env.client.workflow.start<typeof migrationWorkflow>('migrationWorkflow', {
      args: [INPUT],
      taskQueue,
      workflowId: `task-${randomUUID()}`,
    });
    await meanwhile(handle, waiting.promise);
    // Awaiting the result is what lets the test server skip time (until then it runs at the wall clock's pace).
    const [outcome] = await Promise.allSettled([handle.result()]);
    return { handle, outcome: outcome! };
  });
}
type Handle = WorkflowHandle<typeof migrationWorkflow>;

describe.runIf(hasTestServer)('the approval gate of a migration into a protected environment (time-skipping test server)', () => {
  it('ends CANCELLED when nobody decides within the 24-hour window, having migrated nothing', async () => {
    const calls: ActivityCall[] = [];
    const { outcome } = await runGated(calls);

    expect(outcome.status).toBe('rejected');
    const failure = (outcome as PromiseRejectedResult).reason as WorkflowFailedError;
    expect(failure).toBeInstanceOf(WorkflowFailedError);
    expect(failure.cause).toBeInstanceOf(CancelledFailure);
    const message = 'no approval within 86400s: the approval window ran out; nothing was done';
    expect(failure.cause?.message).toBe(message);
    const timedOut: ApprovalOutcome = { required: true, decision: 'timeout', by: null, comment: null };
    expect(calls.map((c) => [c.activity, c.input])).toEqual([
      ['markTaskRunning', undefined],
      ['recordTaskApproval', { waiting: true }],
      ['recordTaskApproval', { waiting: false, outcome: timedOut }],
      ['finishTask', { status: 'CANCELLED', result: { approval: timedOut }, error: { message, type: 'ApprovalTimeout' } }],
      // runAsTask's own write for a cancellation; the row is closed by then, so it changes nothing (db/tasks/store.ts).
      ['finishTask', { status: 'CANCELLED', error: { message: 'cancelled on request' } }],
    ]);
    // The window ran out on the server's clock: a day after the row was marked waiting, not sooner.
    const [asked, ended] = callsOf(calls, 'recordTaskApproval').map((c) => c.scheduledMs);
    expect(ended! - asked!).toBeGreaterThanOrEqual(DAY_MS);
    expect(ended! - asked!).toBeLessThan(DAY_MS + 60_000);
  });

  it('refuses the requester’s own approval, takes another person’s within the window, and then migrates', async () => {
    const calls: ActivityCall[] = [];
    const { outcome } = await runGated(calls, async (handle, waiting) => {
      await waiting;
      const own = handle.executeUpdate(decideApprovalUpdate, {
        args: [{ decision: 'approve', userId: APPROVAL.requestedBy, username: 'rita' }],
      });
      const refused = await own.then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(refused).toBeInstanceOf(WorkflowUpdateFailedError);
      expect((refused as WorkflowUpdateFailedError).cause).toBeInstanceOf(ApplicationFailure);
      expect(((refused as WorkflowUpdateFailedError).cause as ApplicationFailure).type).toBe('SelfApproval');
      const taken = await handle.executeUpdate(decideApprovalUpdate, {
        args: [{ decision: 'approve', userId: 'user-approver', username: 'anna', comment: 'checked the diff' }],
      });
      expect(taken).toEqual({ decision: 'approve', status: 'RUNNING' });
    });

    expect(outcome).toEqual({ status: 'fulfilled', value: SUCCEEDED });
    const approved: ApprovalOutcome = { required: true, decision: 'approve', by: 'anna', comment: 'checked the diff' };
    expect(callsOf(calls, 'recordTaskApproval').map((c) => c.input)).toEqual([{ waiting: true }, { waiting: false, outcome: approved }]);
    const [asked, decided] = callsOf(calls, 'recordTaskApproval').map((c) => c.scheduledMs);
    expect(decided! - asked!).toBeLessThan(DAY_MS);
    expect(callsOf(calls, 'migrateBatch').map((c) => c.input.batch)).toEqual([[{ id: 7, position: 0 }]]);
    expect(callsOf(calls, 'finishMigration')).toHaveLength(1);
    expect(callsOf(calls, 'finishTask')).toEqual([]);
  });
});
