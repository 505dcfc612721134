// The migration workflow's batching on Temporal's time-skipping test server, with its activities
// mocked (typed by the real `Activities`): batch sizes and order, continue-as-new every
// TASK_ITEMS_PER_RUN dashboards, each batch's verification beside the next batch, the last batch's
// verification handed to the next run, and a cancel honoured between batches. What the batches
// do to Superset is proven end to end (test/dashboard-migration/, verify-beside-imports and
// bounded-history among them); this file proves the workflow's own decisions, in about a second.
import { randomUUID } from 'node:crypto';
import { CancelledFailure, WorkflowFailedError, type WorkflowHandleWithFirstExecutionRunId } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { WorkflowBundle } from '@temporalio/worker';
import { describe, expect, it } from 'vitest';
import { IMPORT_LIMIT, MAX_BATCH, RERUN_BATCH } from '../../contracts/migration-batching.ts';
import type {
  MigrationBatchInput,
  MigrationBatchResult,
  MigrationInput,
  MigrationSummary,
  RejectionRule,
  VerifyBatchInput,
} from '../../contracts/migration.ts';
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

const REQUEST: Omit<MigrationInput, 'dashboardIds'> = {
  sourceEnvId: 'env-source',
  targetEnvId: 'env-target',
  dbMappings: [{ source_database_id: 1, target_database_id: 2 }],
  overwrite: true,
  dryRun: false,
};
/** Source dashboard ids, out of order on purpose: positions follow the request, not the ids. */
const ids = (n: number) => Array.from({ length: n }, (_, i) => 500 - i * 3);
const LEARNED: RejectionRule = { kind: 'dataset', field: 'columns.*.datetime_format' };

/** The batch answer: every dashboard imported, except those the test names unchanged (target checked again) or failed. */
function answer(input: MigrationBatchInput, special: { unchanged?: number[]; failed?: number[] } = {}): MigrationBatchResult {
  return {
    items: input.batch.map((d) => {
      if (special.failed?.includes(d.id)) return { ...d, status: 'failed', target_dashboard_id: null, dashboard_uuid: null };
      const at = { ...d, target_dashboard_id: 9000 + d.id, dashboard_uuid: `uuid-${d.id}` };
      return special.unchanged?.includes(d.id)
        ? { ...at, status: 'unchanged', reverify: true }
        : { ...at, status: 'imported', planned_hash: `hash-${d.id}` };
    }),
    learned: input.doneBefore === 0 ? [LEARNED] : [],
  };
}

/** What the workflow sends to the verification for a dashboard the batch imported (or found unchanged). */
const verified = (all: number[], id: number, unchanged = false): VerifyBatchInput['dashboards'][number] => ({
  sourceDashboardId: id,
  position: all.indexOf(id),
  targetDashboardId: 9000 + id,
  dashboardUuid: `uuid-${id}`,
  ...(unchanged ? { unchanged: true } : { plannedHash: `hash-${id}` }),
});

const summary = (cancelled: boolean): MigrationSummary => ({
  status: cancelled ? 'CANCELLED' : 'SUCCEEDED',
  message: cancelled ? 'cancelled on request' : null,
  totals: migrationTotals(),
  cancelled,
});

type Handle = WorkflowHandleWithFirstExecutionRunId<typeof migrationWorkflow>;
type MigrationMocks = MockActivities<
  | 'markTaskRunning'
  | 'taskItemsPerRun'
  | 'migrateBatch'
  | 'verifyMigratedBatch'
  | 'recordDashboardFailures'
  | 'finishMigration'
  | 'finishTask'
>;

/** Runs one migration task on a worker of its own with these mocks; answers its handle once the workflow closed. */
async function runMigration(
  dashboardIds: number[],
  mocks: (started: Promise<Handle>) => MigrationMocks,
  calls: ActivityCall[],
): Promise<{ handle: Handle; outcome: PromiseSettledResult<MigrationSummary> }> {
  const taskQueue = `migration-batching-${randomUUID()}`;
  const started = Promise.withResolvers<Handle>();
  const worker = await testWorker(env, taskQueue, bundle, recorded(mocks(started.promise), calls));
  return worker.runUntil(async () => {
    const handle = await env.client.workflow.start<typeof migrationWorkflow>('migrationWorkflow', {
      args: [{ ...REQUEST, dashboardIds }],
      taskQueue,
      workflowId: `task-${randomUUID()}`,
    });
    started.resolve(handle);
    const [outcome] = await Promise.allSettled([handle.result()]);
    return { handle, outcome: outcome! };
  });
}

describe.runIf(hasTestServer)('migrationWorkflow batching (time-skipping test server, mocked activities)', () => {
  it('batches of MAX_BATCH in request order, continues as new every TASK_ITEMS_PER_RUN dashboards, and hands the last batch of a run to the next', async () => {
    const all = ids(40);
    const calls: ActivityCall[] = [];
    // Each batch after the first waits until the verification of the batch before it has started:
    // a workflow that verified after its batches (or in the run that imported them) never gets its answer.
    const verifyStarted = new Map<number, PromiseWithResolvers<void>>([16, 32].map((at) => [at, Promise.withResolvers<void>()]));
    const { handle, outcome } = await runMigration(
      all,
      () => ({
        markTaskRunning: async () => 'running',
        taskItemsPerRun: async () => 32,
        migrateBatch: async (input) => {
          await verifyStarted.get(input.doneBefore)?.promise;
          return answer(input, { unchanged: [all[3]!], failed: [all[5]!] });
        },
        verifyMigratedBatch: async (input) => {
          verifyStarted.get(input.dashboards[0]!.position + MAX_BATCH)?.resolve();
          return { failed: 0 };
        },
        recordDashboardFailures: async () => undefined,
        finishMigration: async () => summary(false),
        finishTask: async () => undefined,
      }),
      calls,
    );

    expect(outcome).toEqual({ status: 'fulfilled', value: summary(false) });
    const runs = [...new Set(calls.map((c) => c.runId))];
    expect(runs).toHaveLength(2);
    expect(runs[0]).toBe(handle.firstExecutionRunId);
    const runOf = (c: ActivityCall) => runs.indexOf(c.runId) + 1;

    const batch = (from: number, to: number) => all.slice(from, to).map((id, i) => ({ id, position: from + i }));
    expect(callsOf(calls, 'migrateBatch').map((c) => [runOf(c), c.input])).toEqual([
      [
        1,
        {
          ...REQUEST,
          batch: batch(0, 16),
          importLimit: IMPORT_LIMIT,
          learnedRejections: [],
          upcoming: all.slice(16, 32),
          doneBefore: 0,
          total: 40,
        },
      ],
      [
        1,
        {
          ...REQUEST,
          batch: batch(16, 32),
          importLimit: IMPORT_LIMIT,
          learnedRejections: [LEARNED],
          upcoming: all.slice(32, 40),
          doneBefore: 16,
          total: 40,
        },
      ],
      [
        2,
        {
          ...REQUEST,
          batch: batch(32, 40),
          importLimit: IMPORT_LIMIT,
          learnedRejections: [LEARNED],
          upcoming: [],
          doneBefore: 32,
          total: 40,
        },
      ],
    ]);
    // The first batch's verification in run 1 (its failed dashboard left out, its unchanged one checked again);
    // the second batch's, run 1's last, in run 2 beside that run's first batch; the third's in run 2.
    const part = (from: number, to: number) => all.slice(from, to).map((id) => verified(all, id));
    const first = all.slice(0, 16).flatMap((id) => (id === all[5] ? [] : [verified(all, id, id === all[3])]));
    const sources = { sourceEnvId: REQUEST.sourceEnvId, targetEnvId: REQUEST.targetEnvId };
    expect(callsOf(calls, 'verifyMigratedBatch').map((c) => [runOf(c), c.input])).toEqual([
      [1, { ...sources, dashboards: first }],
      [2, { ...sources, dashboards: part(16, 32) }],
      [2, { ...sources, dashboards: part(32, 40) }],
    ]);
    expect(callsOf(calls, 'markTaskRunning').map(runOf)).toEqual([1, 2]);
    expect(callsOf(calls, 'taskItemsPerRun').map(runOf)).toEqual([1]); // carried to run 2 in its input
    expect(callsOf(calls, 'finishMigration').map((c) => [runOf(c), c.input])).toEqual([
      [
        2,
        { ...REQUEST, requested: 40, cancelled: false, timings: { migration_ms: expect.any(Number), verification_ms: expect.any(Number) } },
      ],
    ]);
    // Every verification ended before the task did; nothing failed, so nothing else was recorded.
    expect(calls.at(-1)?.activity).toBe('finishMigration');
    expect(callsOf(calls, 'recordDashboardFailures')).toEqual([]);
    expect(callsOf(calls, 'finishTask')).toEqual([]);
  });

  it('reads a rerun wide: after a batch that says widen, RERUN_BATCH dashboards a batch, across continue-as-new; a wide batch that leaves some waiting is followed by a narrow one; verifications in parts of MAX_BATCH', async () => {
    const all = ids(160);
    const calls: ActivityCall[] = [];
    // Positions 0-79 unchanged (each batch says widen); the wide batch at 80 imports 80-89, finds 90-139 unchanged and
    // leaves 140-143 waiting (its import limit reached): it does not widen; the batches after it import.
    const unchanged = all.filter((_, at) => at < 80 || (at >= 90 && at < 140));
    const { outcome } = await runMigration(
      all,
      () => ({
        markTaskRunning: async () => 'running',
        taskItemsPerRun: async () => 80,
        migrateBatch: async (input) => {
          const ended = input.batch.filter((d) => d.position < 140 || input.doneBefore > 80);
          const r = answer({ ...input, batch: ended }, { unchanged });
          return { ...r, learned: [], ...(ended.every((d) => d.position < 80) ? { widen: true } : {}) };
        },
        verifyMigratedBatch: async () => ({ failed: 0 }),
        recordDashboardFailures: async () => undefined,
        finishMigration: async () => summary(false),
        finishTask: async () => undefined,
      }),
      calls,
    );

    expect(outcome).toEqual({ status: 'fulfilled', value: summary(false) });
    const runs = [...new Set(calls.map((c) => c.runId))];
    const runOf = (c: ActivityCall) => runs.indexOf(c.runId) + 1;
    const positions = (ds: ReadonlyArray<{ position: number }>) => [ds[0]!.position, ds.at(-1)!.position, ds.length];
    // [run, first position, last position, how many] of each batch, and its `upcoming` (always a narrow batch's worth).
    expect(callsOf(calls, 'migrateBatch').map((c) => [runOf(c), ...positions(c.input.batch), c.input.upcoming?.length])).toEqual([
      [1, 0, 15, MAX_BATCH, MAX_BATCH],
      [1, 16, 79, RERUN_BATCH, MAX_BATCH], // widened by the first
      [2, 80, 143, RERUN_BATCH, MAX_BATCH], // the run continued as new after 80 dashboards, still wide
      [2, 140, 155, MAX_BATCH, 4], // the 4 left waiting first, then 12 fresh: narrow again
      [2, 156, 159, 4, 0],
    ]);
    // Every dashboard handed to the verification once, in parts of at most MAX_BATCH: the first batch's 16, the wide
    // batch's 64 in four parts (run 1's last batch: verified in run 2), the wide batch at 80's 60 in four.
    // (the parts of one batch start together, so they are sorted here)
    const parts = callsOf(calls, 'verifyMigratedBatch')
      .map((c) => [runOf(c), ...positions(c.input.dashboards)])
      .sort((a, b) => a[1]! - b[1]!);
    expect(parts).toEqual([
      [1, 0, 15, 16],
      [2, 16, 31, 16],
      [2, 32, 47, 16],
      [2, 48, 63, 16],
      [2, 64, 79, 16],
      [2, 80, 95, 16],
      [2, 96, 111, 16],
      [2, 112, 127, 16],
      [2, 128, 139, 12],
      [2, 140, 155, 16],
      [2, 156, 159, 4],
    ]);
    const verifiedIds = callsOf(calls, 'verifyMigratedBatch')
      .flatMap((c) => c.input.dashboards)
      .sort((a, b) => a.position - b.position);
    expect(verifiedIds.map((d) => d.sourceDashboardId)).toEqual(all);
    expect(verifiedIds.filter((d) => d.unchanged).map((d) => d.sourceDashboardId)).toEqual(unchanged);
  });

  it('fails the dashboards of a batch whose retries ran out with its cause, and goes on with the next batch', async () => {
    const all = ids(20);
    const calls: ActivityCall[] = [];
    const { outcome } = await runMigration(
      all,
      () => ({
        markTaskRunning: async () => 'running',
        taskItemsPerRun: async () => 1000,
        // An outage the first batch never gets past (Temporal retries it, the server skipping the backoff); the second gets through.
        migrateBatch: async (input) => {
          if (input.doneBefore === 0) throw new Error('Superset answered 503 Service Unavailable');
          return answer(input);
        },
        verifyMigratedBatch: async () => ({ failed: 0 }),
        recordDashboardFailures: async () => undefined,
        finishMigration: async () => summary(false),
        finishTask: async () => undefined,
      }),
      calls,
    );

    expect(outcome).toEqual({ status: 'fulfilled', value: summary(false) });
    // The batch policy's four attempts of the first batch (workflows/migration.ts), then the second batch once.
    expect(callsOf(calls, 'migrateBatch').map((c) => [c.input.doneBefore, c.attempt])).toEqual([
      [0, 1],
      [0, 2],
      [0, 3],
      [0, 4],
      [16, 1],
    ]);
    expect(callsOf(calls, 'recordDashboardFailures').map((c) => c.input)).toEqual([
      {
        step: 'migrate',
        dashboards: all.slice(0, 16).map((id, position) => ({ sourceDashboardId: id, position })),
        failure: {
          error: 'Superset answered 503 Service Unavailable',
          step: 'migrate',
          next_actions: [{ action: 'read_logs', description: "The task's log has what each attempt did and how it failed" }],
        },
      },
    ]);
    // Only what was imported is verified: the second batch.
    expect(callsOf(calls, 'verifyMigratedBatch').map((c) => c.input.dashboards.map((d) => d.position))).toEqual([[16, 17, 18, 19]]);
    expect(callsOf(calls, 'finishMigration').map((c) => [c.input.requested, c.input.cancelled])).toEqual([[20, false]]);
  });

  it('honours a cancel between batches: the batch in flight ends, its imports are verified, no other batch starts', async () => {
    const all = ids(40);
    const calls: ActivityCall[] = [];
    const { handle, outcome } = await runMigration(
      all,
      (started) => ({
        markTaskRunning: async () => 'running',
        taskItemsPerRun: async () => 1000,
        migrateBatch: async (input) => {
          // The cancel is in the workflow's history before this batch answers: the loop sees it next.
          await (await started).cancel();
          return answer(input);
        },
        verifyMigratedBatch: async () => ({ failed: 0 }),
        recordDashboardFailures: async () => undefined,
        finishMigration: async (input) => summary(input.cancelled),
        finishTask: async () => undefined,
      }),
      calls,
    );

    expect(outcome.status).toBe('rejected');
    const failure = (outcome as PromiseRejectedResult).reason as WorkflowFailedError;
    expect(failure).toBeInstanceOf(WorkflowFailedError);
    expect(failure.cause).toBeInstanceOf(CancelledFailure);
    expect((await handle.describe()).status.name).toBe('CANCELLED');
    // (taskItemsPerRun is asked beside the first batch, so the two start in either order)
    expect(calls.filter((c) => c.activity !== 'taskItemsPerRun').map((c) => c.activity)).toEqual([
      'markTaskRunning',
      'migrateBatch',
      'verifyMigratedBatch',
      'finishMigration',
      'finishTask',
    ]);
    expect(callsOf(calls, 'taskItemsPerRun')).toHaveLength(1);
    expect(callsOf(calls, 'migrateBatch').map((c) => c.input.batch.map((d) => d.position))).toEqual([[...Array(16).keys()]]);
    expect(callsOf(calls, 'verifyMigratedBatch').map((c) => c.input.dashboards.map((d) => d.sourceDashboardId))).toEqual([
      all.slice(0, 16),
    ]);
    expect(callsOf(calls, 'finishMigration').map((c) => [c.input.requested, c.input.cancelled])).toEqual([[40, true]]);
    expect(callsOf(calls, 'finishTask').map((c) => c.input)).toEqual([{ status: 'CANCELLED', error: { message: 'cancelled on request' } }]);
  });
});
