/**
 * What a migration records in PostgreSQL: each dashboard's outcome as the task's item (the
 * task's result is assembled from these), the batch's progress, what each import left in the
 * target (for the next run's unchanged check) and, at the end, the task's result.
 */
import { ApplicationFailure } from '@temporalio/activity';
import type { ItemFailure } from '../../contracts/failures.ts';
import {
  failedDashboardOutcome,
  mergeRules,
  MIGRATION_OUTCOME,
  summariseMigration,
  type DashboardOutcome,
  type FinishMigrationInput,
  type MigrationBatchInput,
  type MigrationBatchResult,
  type MigrationSummary,
  type RejectionRule,
} from '../../contracts/migration.ts';
import { itemsResultSchema } from '../../contracts/outcome-schemas.ts';
import { progressLogLine } from '../../contracts/tasks.ts';
import { Bundle } from '../../lib/bundles/bundle.ts';
import { splitByDashboard } from '../../lib/bundles/split.ts';
import { redact } from '../../lib/redact.ts';
import { maxBundleBytes } from './deps.ts';
import type { BatchDashboard, Log, MigrationServices } from './context.ts';
import type { MigrationUpstream } from './upstream.ts';

/** A dashboard's outcome, recorded as the task's item at its place in the request. */
export async function recordOutcome(svc: MigrationServices, taskId: string, position: number, o: DashboardOutcome): Promise<void> {
  await recordOutcomes(svc, taskId, [{ position, outcome: o }]);
}

/** Outcomes recorded in one statement (a joint import's), each unless its position holds one already (the earlier one wins). */
export async function recordOutcomes(
  svc: MigrationServices,
  taskId: string,
  done: Array<{ position: number; outcome: DashboardOutcome }>,
): Promise<void> {
  await svc.outcomes.recordMany(taskId, asItems(done));
}

/** Outcomes as task items: each stamped with the outcome its status means, keyed by its dashboard. */
function asItems(done: Array<{ position: number; outcome: DashboardOutcome }>) {
  for (const d of done) d.outcome.outcome = MIGRATION_OUTCOME[d.outcome.status];
  return done.map((d) => ({ position: d.position, key: d.outcome.id, item: d.outcome }));
}

/** An outcome amended after it was recorded (verified, or its verification failed). */
export async function amendOutcome(svc: MigrationServices, taskId: string, position: number, o: DashboardOutcome): Promise<void> {
  await amendOutcomes(svc, taskId, [{ position, outcome: o }]);
}

/** Outcomes amended together, in one statement (a verification's dashboards). */
export async function amendOutcomes(
  svc: MigrationServices,
  taskId: string,
  amended: Array<{ position: number; outcome: DashboardOutcome }>,
): Promise<void> {
  await svc.outcomes.putMany(taskId, asItems(amended));
}

/**
 * A batch's outcomes: each recorded and logged at once, the task row's progress written once per
 * burst (the dashboards planned, a joint import's), not once per dashboard; the rejections
 * learned so far (the batch's input, and each outcome's); what the workflow gets back.
 */
export class BatchOutcomes {
  private readonly svc: MigrationServices;
  private readonly input: MigrationBatchInput;
  private readonly taskId: string;
  private readonly log: Log;
  private readonly results: MigrationBatchResult['items'] = [];
  private rules: RejectionRule[];
  /** Dashboards of the task with an outcome, for the progress. */
  private count = 0;
  /** The last outcome's line, until the task row's progress is written with it. */
  private unwritten: string | null = null;

  constructor(svc: MigrationServices, input: MigrationBatchInput, taskId: string, log: Log) {
    this.svc = svc;
    this.input = input;
    this.taskId = taskId;
    this.log = log;
    this.rules = input.learnedRejections;
  }

  /** The rejections learned so far, applied up front to the next import. */
  get learned(): RejectionRule[] {
    return this.rules;
  }

  /** Rejections learned outside an outcome (a refused joint import), for the imports after it and the next batches. */
  learn(rules: RejectionRule[]): void {
    this.rules = mergeRules(this.rules, rules);
  }

  /**
   * Keeps the outcomes an earlier attempt of this batch recorded, as they are; returns the
   * dashboards still to do. A dashboard that attempt imported still goes to the verification: its
   * planned hash comes back from its import intent (the hash of the bundle as imported: after a
   * learned rejection was stripped it differs from the plan's, so the next run imports again
   * rather than trusting it), else the workflow would never verify it.
   */
  async keepRecorded(): Promise<BatchDashboard[]> {
    const todo: BatchDashboard[] = [];
    const recorded = await this.svc.outcomes.getMany<DashboardOutcome>(
      this.taskId,
      this.input.batch.map((d) => d.position),
    );
    for (const d of this.input.batch) {
      const stored = recorded.get(d.position);
      if (!stored) {
        todo.push(d);
        continue;
      }
      this.done(d.position, stored);
      const intent = stored.status === 'imported' ? await this.svc.intents.intent(this.taskId, stored.id) : undefined;
      if (intent?.status === 'imported') this.results[this.results.length - 1]!.planned_hash = intent.bundle_hash;
    }
    this.count = this.input.doneBefore + (this.input.batch.length - todo.length);
    return todo;
  }

  /** A dashboard's outcome: recorded, counted and logged. */
  async finish(position: number, o: DashboardOutcome): Promise<void> {
    await this.finishAll([{ position, outcome: o }]);
  }

  /** Several dashboards' outcomes at once (a joint import's): recorded in one statement, then counted and logged each. */
  async finishAll(done: Array<{ position: number; outcome: DashboardOutcome }>): Promise<void> {
    await recordOutcomes(this.svc, this.taskId, done);
    for (const d of done) {
      this.done(d.position, d.outcome);
      this.count++;
      this.unwritten = `dashboard ${d.outcome.id}: ${d.outcome.status}`;
      this.log.info(progressLogLine({ done: this.count, total: this.input.total, message: this.unwritten }));
    }
  }

  /** A dashboard's outcome when its environments could not be read: recorded, not counted in the progress. */
  async failAlike(position: number, o: DashboardOutcome): Promise<void> {
    await recordOutcome(this.svc, this.taskId, position, o);
    this.done(position, o);
  }

  /** The task row's progress, when an outcome was recorded since it was last written. */
  async writeProgress(): Promise<void> {
    if (this.unwritten === null) return;
    const message = this.unwritten;
    this.unwritten = null;
    await this.svc.deps.stores.tasks.setProgress(this.taskId, { done: this.count, total: this.input.total, message });
  }

  /** What the workflow gets, as recorded so far. */
  result(): MigrationBatchResult {
    return { items: this.results, learned: this.rules };
  }

  /**
   * The batch's end: the dashboards with an outcome leave the worker's cache of source exports,
   * the batch's timing is logged, and each imported dashboard carries its planned hash to the
   * verification, which records the target's state after it.
   */
  wrapUp(todo: number, imported: ReadonlyArray<{ dashboardId: number; plannedHash: string }>, timing: string): MigrationBatchResult {
    for (const r of this.results) this.svc.caches.exportedSources.forget(this.taskId, r.id);
    const left = this.input.batch.length - this.results.length;
    this.log.info(`batch of ${todo}: ${timing}${left > 0 ? `; ${left} left for the next batch` : ''}`);
    this.results.sort((a, b) => a.position - b.position);
    const hashes = new Map(imported.map((p) => [p.dashboardId, p.plannedHash]));
    for (const r of this.results) if (hashes.has(r.id)) r.planned_hash = hashes.get(r.id);
    return this.result();
  }

  private done(position: number, o: DashboardOutcome): void {
    this.results.push({
      id: o.id,
      position,
      status: o.status,
      target_dashboard_id: o.target_dashboard_id,
      dashboard_uuid: o.dashboard_uuid,
      // Unchanged with nothing carried (contracts/migration.ts carriedVerification): its target is verified again.
      ...(o.status === 'unchanged' && !o.verification && o.verification_state?.state !== 'carried' ? { reverify: true } : {}),
    });
    this.rules = mergeRules(this.rules, o.learned_rejections);
  }
}

/**
 * Records, for the next run's unchanged check, what these imports wrote and the target's own
 * export of each dashboard now (one export call for all of them; `exported`: those the batch's
 * target checks exported after its writes, not exported again). Best effort: without a record the
 * next run simply imports again.
 */
export async function recordStates(
  svc: MigrationServices,
  taskId: string,
  input: { sourceEnvId: string; targetEnvId: string },
  imported: Array<{ sourceDashboardId: number; targetDashboardId: number; dashboardUuid: string; plannedHash: string }>,
  target: MigrationUpstream,
  log: Log,
  exported: ReadonlyMap<number, Bundle> = new Map(),
): Promise<void> {
  if (!imported.length) return;
  try {
    const byId = new Map(exported);
    const missing = imported.map((i) => i.targetDashboardId).filter((id) => !byId.has(id));
    if (missing.length)
      for (const [id, b] of splitByDashboard(Bundle.fromZip(await target.exportDashboards(missing), maxBundleBytes(svc.deps))))
        byId.set(id, b);
    // One statement for all of them: each commit of its own cost a verification of 10 dashboards tens of milliseconds.
    await svc.states.recordMany(
      imported.flatMap((i) => {
        const after = byId.get(i.targetDashboardId);
        if (!after) return [];
        return [
          {
            target_env_id: input.targetEnvId,
            dashboard_uuid: i.dashboardUuid,
            source_env_id: input.sourceEnvId,
            bundle_hash: i.plannedHash,
            target_hash: after.contentHash(),
            target_dashboard_id: i.targetDashboardId,
            source_dashboard_id: i.sourceDashboardId,
            task_id: taskId,
          },
        ];
      }),
    );
  } catch (err) {
    log.warn(`could not record what was imported (the next run imports those dashboards again): ${(err as Error).message}`);
  }
}

/**
 * Dashboards whose activity failed for good. A batch (step `migrate`): each one without an
 * outcome is recorded as failed with the cause. A verification (step `verify`): each imported
 * one is recorded as imported with errors.
 */
export async function recordFailures(
  svc: MigrationServices,
  taskId: string,
  input: { step: 'migrate' | 'verify'; dashboards: Array<{ sourceDashboardId: number; position: number }>; failure: ItemFailure },
): Promise<void> {
  const recorded = await svc.outcomes.getMany<DashboardOutcome>(
    taskId,
    input.dashboards.map((d) => d.position),
  );
  for (const d of input.dashboards) {
    const stored = recorded.get(d.position);
    if (input.step === 'migrate' && !stored)
      await recordOutcome(svc, taskId, d.position, failedDashboardOutcome(d.sourceDashboardId, input.failure));
    if (input.step === 'verify' && stored?.status === 'imported' && !stored.verification)
      await amendOutcome(svc, taskId, d.position, { ...stored, status: 'imported_with_errors', ...input.failure });
    // An unchanged dashboard whose check of the target could not be made is not reported fine.
    if (input.step === 'verify' && stored?.status === 'unchanged' && !stored.verification && stored.verification_state?.state !== 'carried')
      await amendOutcome(svc, taskId, d.position, {
        ...stored,
        status: 'unchanged_with_errors',
        verification_state: { state: 'not_verified', reason: `its target could not be checked again: ${input.failure.error}` },
        ...input.failure,
      });
  }
}

/**
 * Ends the task: its result assembled from the recorded outcomes and written to its row with
 * the final status (CANCELLED, FAILED when any dashboard did not migrate cleanly, else
 * SUCCEEDED). The workflow gets the totals and the status to close with.
 */
export async function finishTask(svc: MigrationServices, taskId: string, input: FinishMigrationInput): Promise<MigrationSummary> {
  const recorded = await svc.outcomes.list<DashboardOutcome>(taskId);
  const result = summariseMigration(input, recorded);
  const failed = result.totals.failed + result.totals.imported_with_errors + result.totals.unchanged_with_errors;
  const status = input.cancelled ? 'CANCELLED' : failed > 0 ? 'FAILED' : 'SUCCEEDED';
  const message =
    status === 'CANCELLED'
      ? `cancelled after ${recorded.length} of ${input.requested} dashboards; the rest were not touched`
      : status === 'FAILED'
        ? `${failed} of ${input.requested} dashboard(s) did not migrate cleanly; see the report`
        : null;
  const checked = itemsResultSchema.safeParse(result);
  if (!checked.success)
    throw ApplicationFailure.nonRetryable(`task result breaks the outcome contract: ${checked.error.message}`, 'ContractViolation');
  await svc.deps.stores.tasks.finish(
    taskId,
    status,
    redact(result),
    message ? { message, ...(status === 'FAILED' ? { type: 'PartialMigration' } : {}) } : null,
  );
  return { status, message, totals: result.totals, cancelled: result.cancelled };
}
