import {
  ApplicationFailure,
  CancellationScope,
  CancelledFailure,
  continueAsNew,
  log,
  patched,
  proxyActivities,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../activities/index.ts';
import { NON_RETRYABLE_FAILURE_TYPES } from '../contracts/failures.ts';
import {
  mergeRules,
  type MigrationBatchResult,
  type MigrationInput,
  type MigrationSummary,
  type MigrationTimings,
  type RejectionRule,
  type VerifyBatchInput,
} from '../contracts/migration.ts';
import { IMPORT_LIMIT, MAX_BATCH, RERUN_BATCH } from '../contracts/migration-batching.ts';
import { failureOf } from './item-failure.ts';
import { runAsTask } from './task-run.ts';

/**
 * A batch of dashboards = one activity: exported together, planned one by one, imported together
 * (one by one when Superset refuses the lot), safe to repeat. Its size and import limit come from
 * the one batching policy (contracts/migration-batching.ts, docs/migration-batching.md). Only what
 * passes by itself (a Superset outage) is retried; a refusal comes back as its dashboard's outcome.
 */
const batches = proxyActivities<Activities>({
  startToCloseTimeout: '30 minutes',
  heartbeatTimeout: '15 seconds', // a dead worker's batch moves on within seconds
  retry: {
    initialInterval: '2 seconds',
    maximumInterval: '30 seconds',
    maximumAttempts: 4,
    nonRetryableErrorTypes: NON_RETRYABLE_FAILURE_TYPES,
  },
});

const verify = proxyActivities<Activities>({
  startToCloseTimeout: '15 minutes',
  heartbeatTimeout: '15 seconds',
  retry: {
    initialInterval: '2 seconds',
    maximumInterval: '20 seconds',
    maximumAttempts: 3,
    nonRetryableErrorTypes: NON_RETRYABLE_FAILURE_TYPES,
  },
});

/** The browser check (`verification: "browser"`): pages one or two at a time, each dashboard within its time budget. */
const browser = proxyActivities<Activities>({
  startToCloseTimeout: '60 minutes',
  heartbeatTimeout: '30 seconds',
  retry: {
    initialInterval: '2 seconds',
    maximumInterval: '20 seconds',
    maximumAttempts: 2,
    nonRetryableErrorTypes: NON_RETRYABLE_FAILURE_TYPES,
  },
});

const bookkeeping = proxyActivities<Activities>({
  startToCloseTimeout: '2 minutes',
  retry: { initialInterval: '1 second', maximumInterval: '20 seconds' },
});

/** Where a migration stands when it continues as new (small: the outcomes are in PostgreSQL). */
export interface MigrationResume {
  /** Dashboards per workflow run before it continues as new (TASK_ITEMS_PER_RUN, read once for the task). */
  perRun: number;
  next: number;
  waiting: Array<{ id: number; position: number }>;
  /** Written by runs of the older rule (a lone first import, then larger batches); read by none now: every batch imports up to IMPORT_LIMIT. */
  batchSize?: number;
  learned: RejectionRule[];
  timings: MigrationTimings;
  /** The previous run's last batch's imports, verified by this run beside its first batch (HAND_OVER_VERIFICATION). */
  verify?: VerifyBatchInput['dashboards'];
  /** The previous run's last batch said the next may read wide (WIDE_RERUN_BATCHES): this run's first batch does. */
  widen?: boolean;
}

/**
 * Verifies a part of what was imported (one verification activity, then the browser check when
 * asked): the one way a part is verified, whether it runs beside the next batch or, in runs that
 * began before that (no VERIFY_BESIDE_IMPORTS marker), after the run's imports. A part that fails
 * for good marks its dashboards.
 */
async function verifyPart(request: Omit<MigrationInput, 'dashboardIds'>, part: VerifyBatchInput['dashboards']): Promise<void> {
  try {
    await verify.verifyMigratedBatch({ sourceEnvId: request.sourceEnvId, targetEnvId: request.targetEnvId, dashboards: part });
  } catch (err) {
    await bookkeeping.recordDashboardFailures({ step: 'verify', dashboards: part, failure: failureOf(err, 'verify') });
  }
  if (request.verification === 'browser') {
    try {
      await browser.browserCheckMigratedBatch({ sourceEnvId: request.sourceEnvId, targetEnvId: request.targetEnvId, dashboards: part });
    } catch (err) {
      // Its dashboards keep their query verification; what the browser could not say is logged, never a failure.
      log.warn(`the browser check of ${part.length} dashboard(s) did not finish: ${failureOf(err, 'verify').error}`);
    }
  }
}

/**
 * The rule (contracts/migration-batching.ts): each batch's imports are verified by an activity the
 * workflow starts as soon as the batch returns, beside the next batch; the run awaits every one
 * before it continues as new and before the task ends. The marker keeps runs that began under the
 * old rule (verify after the run's imports) replaying as they ran.
 */
const VERIFY_BESIDE_IMPORTS = 'verify-beside-imports';

/**
 * The rule: the verification of a run's last batch is not awaited before the run continues as
 * new (the run would stand still for it); the next run starts it beside its first batch, from
 * `resume.verify`. A run that ends the task verifies its last batch itself. The marker keeps runs
 * that began before this rule replaying as they ran.
 */
const HAND_OVER_VERIFICATION = 'hand-over-verification';

/**
 * The rule (contracts/migration-batching.ts RERUN_BATCH): after a batch whose result says `widen`
 * (it found every dashboard unchanged), the next reads up to RERUN_BATCH dashboards, and what a
 * batch hands to the verification is verified in parts of MAX_BATCH. The marker keeps runs that
 * began before this rule replaying as they ran (their batches never held more than MAX_BATCH).
 */
const WIDE_RERUN_BATCHES = 'wide-rerun-batches';

/** Starts verifying what a batch handed over, in parts of MAX_BATCH (one activity each), not awaited: they run beside what follows, and verifyRest awaits them. */
function besideNext(request: Omit<MigrationInput, 'dashboardIds'>, dashboards: VerifyBatchInput['dashboards']): Array<Promise<void>> {
  const started: Array<Promise<void>> = [];
  for (let i = 0; i < dashboards.length; i += MAX_BATCH) {
    const part = dashboards.slice(i, i + MAX_BATCH);
    const one = CancellationScope.nonCancellable(() => verifyPart(request, part));
    one.catch(() => {}); // seen when awaited (verifyRest); not an unhandled rejection meanwhile
    started.push(one);
  }
  return started;
}

/**
 * Logs how each dashboard of a batch ended; answers those it imported, and those it found unchanged
 * whose target is checked again (`reverify`: a batch result says so, so histories from before it replay alike), as their verification takes them.
 */
function importedBy(r: MigrationBatchResult): VerifyBatchInput['dashboards'] {
  const imported: VerifyBatchInput['dashboards'] = [];
  for (const i of r.items) {
    log.info(`dashboard ${i.id}: ${i.status}`);
    if (i.target_dashboard_id === null || !i.dashboard_uuid) continue;
    const at = { sourceDashboardId: i.id, position: i.position, targetDashboardId: i.target_dashboard_id, dashboardUuid: i.dashboard_uuid };
    if (i.status === 'imported' && i.planned_hash) imported.push({ ...at, plannedHash: i.planned_hash });
    else if (i.status === 'unchanged' && i.reverify) imported.push({ ...at, unchanged: true });
  }
  return imported;
}

/**
 * Waits for what the run still verifies: the parts started beside the batches, then (old rule) the
 * run's imports in parts of MAX_BATCH, one after another. Returns how long it waited: the
 * verification's time after the imports, which is what it adds to the task.
 */
async function verifyRest(
  request: Omit<MigrationInput, 'dashboardIds'>,
  started: Array<Promise<void>>,
  dashboards: VerifyBatchInput['dashboards'],
): Promise<number> {
  const since = Date.now();
  await CancellationScope.nonCancellable(async () => {
    await Promise.all(started);
    for (let i = 0; i < dashboards.length; i += MAX_BATCH) await verifyPart(request, dashboards.slice(i, i + MAX_BATCH));
  });
  started.length = 0;
  dashboards.length = 0;
  return Date.now() - since;
}

type Waiting = MigrationResume['waiting'];

/** Where this run starts: a resumed run where the last one stopped, a first run at the first dashboard. */
function startingPoint(resume: MigrationResume | undefined): { waiting: Waiting; next: number; learned: RejectionRule[] } {
  return {
    // Dashboards a batch planned but left for later (past its import limit), then the ones never read.
    waiting: resume?.waiting ?? [],
    next: resume?.next ?? 0,
    learned: resume?.learned ?? [],
  };
}

/** The next batch: the dashboards left waiting first, then up to `size` in all of those never read (`fresh` of them). */
function nextBatch(dashboardIds: number[], waiting: Waiting, next: number, size: number): { batch: Waiting; fresh: number } {
  const fresh = Math.max(0, Math.min(size - waiting.length, dashboardIds.length - next));
  const batch = [...waiting, ...dashboardIds.slice(next, next + fresh).map((id, i) => ({ id, position: next + i }))];
  return { batch, fresh };
}

/**
 * One batch, one activity. It runs to the end even when a cancel arrives meanwhile; the loop stops
 * before the next one. Failed for good: each of its dashboards without an outcome fails with this
 * cause; the task goes on.
 */
function runBatch(
  request: Omit<MigrationInput, 'dashboardIds'>,
  batch: Waiting,
  o: { learned: RejectionRule[]; upcoming: number[]; doneBefore: number; total: number },
): Promise<MigrationBatchResult> {
  return CancellationScope.nonCancellable(async (): Promise<MigrationBatchResult> => {
    try {
      return await batches.migrateBatch({
        ...request,
        batch,
        importLimit: IMPORT_LIMIT,
        learnedRejections: o.learned,
        upcoming: o.upcoming,
        doneBefore: o.doneBefore,
        total: o.total,
      });
    } catch (err) {
      await bookkeeping.recordDashboardFailures({
        step: 'migrate',
        dashboards: batch.map((d) => ({ sourceDashboardId: d.id, position: d.position })),
        failure: failureOf(err, 'migrate'),
      });
      return {
        items: batch.map((d) => ({ ...d, status: 'failed' as const, target_dashboard_id: null, dashboard_uuid: null })),
        learned: [],
      };
    }
  });
}

/** How many of the batch's dashboards ended, and those it left waiting; a batch that ended none stalls the task. */
function endedBy(batch: Waiting, r: MigrationBatchResult): { count: number; waiting: Waiting } {
  const ended = new Set(r.items.map((i) => i.position));
  if (!ended.size) throw ApplicationFailure.nonRetryable(`a batch of ${batch.length} dashboard(s) ended none of them`, 'MigrationStalled');
  return { count: ended.size, waiting: batch.filter((d) => !ended.has(d.position)) };
}

/** The task ends in this run: what it still verifies, then the summary, and the workflow closes as the task's row did. */
async function finishTask(
  request: Omit<MigrationInput, 'dashboardIds'>,
  o: {
    verifying: Array<Promise<void>>;
    toVerify: VerifyBatchInput['dashboards'];
    total: number;
    cancelled: boolean;
    timings: MigrationTimings;
  },
): Promise<MigrationSummary> {
  const { timings } = o;
  timings.verification_ms += await CancellationScope.nonCancellable(() => verifyRest(request, o.verifying, o.toVerify));
  const summary = await CancellationScope.nonCancellable(() =>
    bookkeeping.finishMigration({ ...request, requested: o.total, cancelled: o.cancelled, timings }),
  );
  // The task's row already holds the result and its status; the workflow closes the same way.
  if (summary.status === 'CANCELLED') throw new CancelledFailure(summary.message ?? 'cancelled');
  if (summary.status === 'FAILED') throw ApplicationFailure.nonRetryable(summary.message ?? 'failed', 'PartialMigration');
  return summary;
}

/** The rules this run follows, by the markers its history holds (each marker asked once, at the run's start, in this order). */
function runRules(): { beside: boolean; handOver: boolean; wide: boolean } {
  return { beside: patched(VERIFY_BESIDE_IMPORTS), handOver: patched(HAND_OVER_VERIFICATION), wide: patched(WIDE_RERUN_BATCHES) };
}

/** The run ends here (what it verified awaited): a new run goes on from where this one stands. */
async function continueFrom(input: MigrationInput, resume: MigrationResume): Promise<never> {
  log.info(`continuing as a new run at dashboard ${resume.next + 1} of ${input.dashboardIds.length}`);
  return continueAsNew<typeof migrationWorkflow>({ ...input, resume });
}

/**
 * Migrates (or, with dryRun, plans) dashboards in batches. Each dashboard succeeds or fails on
 * its own, and its outcome is recorded in PostgreSQL by the activity that produced it; the
 * task's result is assembled from there at the end. Cancellation is honoured between batches:
 * the batch in flight finishes, so every dashboard ends either fully imported or untouched.
 * Each batch's imported dashboards are verified beside the next batch (VERIFY_BESIDE_IMPORTS);
 * `timings` gives the time until the last import and the verification's time after it.
 */
export async function migrationWorkflow(input: MigrationInput & { resume?: MigrationResume }): Promise<MigrationSummary> {
  return runAsTask(
    async () => {
      const { dashboardIds, resume, ...request } = input;
      const total = dashboardIds.length;
      let { waiting, next, learned } = startingPoint(resume);
      let cancelled = false;
      const timings = { migration_ms: resume?.timings.migration_ms ?? 0, verification_ms: resume?.timings.verification_ms ?? 0 };
      const toVerify: VerifyBatchInput['dashboards'] = [];
      // Verification activities started beside the batches, awaited before the run ends or continues.
      const verifying: Array<Promise<void>> = [];
      const { beside, handOver, wide } = runRules();
      let size = wide && resume?.widen ? RERUN_BATCH : MAX_BATCH;
      // The previous run's last batch, verified beside this run's first; this run's last, held for the next run.
      if (resume?.verify?.length) verifying.push(...besideNext(request, resume.verify));
      let held: VerifyBatchInput['dashboards'] = [];
      let endedInRun = 0;
      // Dashboards per run: the history stays small however many dashboards the task has.
      // (read beside the first batch: it is needed only once dashboards have ended)
      const perRunRead = resume ? Promise.resolve(resume.perRun) : bookkeeping.taskItemsPerRun();
      const runEnds = async () => endedInRun > 0 && (endedInRun >= (await perRunRead) || workflowInfo().continueAsNewSuggested);
      const clock = Date.now(); // workflow time: when each phase's workflow task ran, which is what a person waits for
      while (waiting.length || next < total) {
        if (CancellationScope.current().consideredCancelled) {
          cancelled = true;
          break;
        }
        if (await runEnds()) {
          timings.migration_ms += Date.now() - clock;
          timings.verification_ms += await verifyRest(request, verifying, toVerify);
          const widen = size === RERUN_BATCH ? { widen: true } : {};
          await continueFrom(input, { perRun: await perRunRead, next, waiting, learned, timings, verify: held, ...widen });
        }
        if (held.length) verifying.push(...besideNext(request, held.splice(0))); // the run goes on after all: verified here
        const { batch, fresh } = nextBatch(dashboardIds, waiting, next, size);
        next += fresh;
        // Read ahead only while a batch imports, after which the next batch is never wide: a narrow batch's worth.
        const upcoming = dashboardIds.slice(next, next + MAX_BATCH);
        const r = await runBatch(request, batch, { learned, upcoming, doneBefore: next - fresh - waiting.length, total });
        size = wide && r.widen ? RERUN_BATCH : MAX_BATCH;
        learned = mergeRules(learned, r.learned);
        const ended = endedBy(batch, r);
        endedInRun += ended.count;
        waiting = ended.waiting;
        const imported = importedBy(r);
        // Started now and not awaited: this batch's dashboards are verified while the next batch imports
        // (the run's last batch: while the next run's first imports, HAND_OVER_VERIFICATION).
        if (beside && imported.length) {
          if (handOver && (waiting.length || next < total) && (await runEnds())) held = imported;
          else verifying.push(...besideNext(request, imported));
        } else toVerify.push(...imported);
      }
      toVerify.push(...held); // the task ends in this run (done or cancelled): it verifies what it held itself
      timings.migration_ms += Date.now() - clock;
      return finishTask(request, { verifying, toVerify, total, cancelled, timings });
    },
    { closesRow: true, gate: { approval: input.approval, what: `migrating ${input.dashboardIds.length} dashboard(s)` } },
  );
}
