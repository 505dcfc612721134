/**
 * One batch of a migration task (the migrateBatch activity) as a straight sequence over its
 * BatchContext, each step a module of its own:
 *
 *   1. records     outcomes an earlier attempt of this batch recorded are kept (./record.ts); what
 *                  earlier migrations into this target recorded of the rest is read, and the
 *                  batch's exports start at once (./read-ahead.ts, startReads)
 *   2. settle      a rerun's dashboards told unchanged from both exports alone (./settle-unchanged.ts)
 *   3. read ahead  both environments opened, the rest read ahead together (./read-ahead.ts)
 *   4. plan        each dashboard in order, until the batch holds its import limit (./plan-one.ts);
 *                  its companion comparison reads only what decides before the import (the roles,
 *                  from the dashboards' list rows): the copy kinds are compared after the import,
 *                  their reads begun as the import is sent
 *   5. import      together or one by one (./import.ts); the limit and when imports go together
 *                  are the one batching policy's (contracts/migration-batching.ts)
 *   6. verify      not in this activity: the workflow starts the verification of what this
 *                  batch imported as it returns, beside the next batch (./verify.ts,
 *                  docs/migration-batching.md)
 *   7. record      each outcome is recorded as it is decided, and the batch ends with what the
 *                  workflow needs, each import's planned hash for the verification (./record.ts)
 *
 * Safe to run again: outcomes already recorded are kept, intents stop a second import. A
 * refusal is its dashboard's outcome, so its siblings carry on; an outage is thrown for
 * Temporal's retry of the whole batch.
 */
import { importsTogether } from '../../contracts/migration-batching.ts';
import {
  carriedVerification,
  type DashboardOutcome,
  type MigrationBatchInput,
  type MigrationBatchResult,
} from '../../contracts/migration.ts';
import { detached } from '../../lib/detached.ts';
import type { BatchContext } from './batch-context.ts';
import {
  envRulesFor,
  mappingsFor,
  openUpstreams,
  refuseStale,
  type BatchDashboard,
  type Log,
  type MigrationServices,
  type PlanScope,
  type Upstreams,
} from './context.ts';
import { importAlone, migrateOne } from './dashboard.ts';
import { failedOutcome } from './failure.ts';
import { importTogether } from './import.ts';
import { planOne, type Planned } from './plan-one.ts';
import { exportUpcoming, readAhead, startReads, type ReadAhead } from './read-ahead.ts';
import {
  readEnvironmentsEarly,
  readSourceDashboardRowsAhead,
  readSourceEmbeddedEarly,
  readSourceViewsAhead,
} from './companions/early-reads.ts';
import { defersCopyKinds, sourceReadBeforeImport } from './companions/step.ts';
import type { ActivityPort } from './port.ts';
import { checkTargetsAhead } from './target-checks-ahead.ts';
import { BatchOutcomes } from './record.ts';
import { settleUnchanged } from './settle-unchanged.ts';
import { checkSourcesAhead } from './source-checks-ahead.ts';
import { checkUnchangedAhead, targetChartUuids, type UnchangedToCheck } from './unchanged-checks.ts';

export async function runBatch(
  svc: MigrationServices,
  input: MigrationBatchInput,
  taskId: string,
  activity: ActivityPort,
): Promise<MigrationBatchResult> {
  // 1. records
  const outcomes = new BatchOutcomes(svc, input, taskId, activity.log);
  const todo = await outcomes.keepRecorded();
  if (!todo.length) return outcomes.result();
  await refuseStale(svc.deps, input);
  const ctx = await openBatch(svc, input, taskId, activity.log, todo, outcomes);
  const t0 = ctx.reads.at;

  // 2. settle unchanged
  let rest = todo;
  if (ctx.rerun) {
    rest = await settleUnchanged(ctx);
    await outcomes.writeProgress();
    if (!rest.length)
      return outcomes.wrapUp(todo.length, [], `a rerun: all ${todo.length} unchanged, told from both exports in ${Date.now() - t0} ms`);
  }
  const settled = todo.length - rest.length;

  // 3. read ahead
  let up: Upstreams;
  try {
    up = await openUpstreams(svc, input, taskId);
  } catch (err) {
    // Neither environment can be read: every dashboard of the batch fails here alike.
    for (const d of rest) await outcomes.failAlike(d.position, await failedOutcome(ctx, d.id, err, { fallback: 'plan' }));
    return outcomes.result();
  }
  const t1 = Date.now();
  const scope: PlanScope = {
    svc,
    input,
    taskId,
    ...activity,
    up,
    mappings: await mappingsFor(svc.deps, input),
    envRules: await envRulesFor(svc.deps, input),
    // The batches of the task on this worker share what they read of the source (the next batch's views are read during this one's import).
    taskSnapshot: ctx.taskSnapshot,
  };
  const ahead = await readAhead(
    ctx,
    up,
    rest.map((d) => d.id),
  );
  const t2 = Date.now();

  // 4. plan (what its comparisons read of the source dashboards read ahead meanwhile: their views, or their roles alone)
  const planned = (input.dryRun ? rest : rest.slice(0, input.importLimit)).map((d) => d.id);
  const exportOf = (id: number) => svc.caches.exportedSources.get(taskId, id);
  const before = sourceReadBeforeImport(input);
  // Begun (never failed) before the first plan compares: else that plan reads its own beside the joint read.
  if (before === 'views') await readSourceViewsAhead(scope, planned, exportOf);
  if (before === 'roles') await readSourceDashboardRowsAhead(scope, planned);
  const ready = await planUpToLimit(ctx, scope, rest, ahead);
  const t3 = Date.now();

  // 5. import (6. verify: by the workflow, beside the next batch; its source side begun now, not awaited)
  // Begun once the import is ready to send, not before: the worker's own work of sending it comes first.
  const beside = () => {
    // The views the copy kinds compare after the import and the source's chart checks read (begun already when the plan compared them).
    const viewsBegun = readSourceViewsAhead(
      scope,
      ready.map((p) => p.dashboardId),
      exportOf,
    );
    checkSourcesAhead(
      svc,
      input,
      taskId,
      ready.map((p) => p.dashboardId),
      viewsBegun,
      scope.taskSnapshot,
    );
    // The source answers nothing else of this batch while the target imports: what its copy kinds compare after the
    // import is read meanwhile, and the next batch's export and views.
    readForCopyKinds(
      scope,
      ready.map((p) => ({ id: p.dashboardId })),
    );
    exportUpcoming(ctx, scope);
  };
  await importReady(ctx, scope, ready, beside);
  // The target's side of the verification begins here, beside the source's; the batch does not wait for it (./target-checks-ahead.ts).
  checkTargetsAhead(svc, input, taskId, importedTargets(ctx, ready));

  // 7. record
  return outcomes.wrapUp(
    todo.length,
    ready,
    `${settled ? `${settled} unchanged, told from both exports; ` : ''}environments read in ${t1 - t0} ms, exports in ${t2 - t1} ms, planned in ${t3 - t2} ms, ${ready.length} imported in ${Date.now() - t3} ms`,
  );
}

/** The target ids of the dashboards this batch imported, as the workflow will verify them. */
function importedTargets(ctx: BatchContext, ready: Planned[]): number[] {
  const positions = new Set(ready.map((p) => p.position));
  return ctx.outcomes
    .result()
    .items.filter((i) => positions.has(i.position) && i.status === 'imported' && i.target_dashboard_id !== null)
    .map((i) => i.target_dashboard_id!);
}

/**
 * The batch's context: what earlier migrations of its dashboards into this target recorded (a
 * batch of dashboards that all came there this way is a rerun, first told unchanged from two
 * exports), and its reads started.
 */
async function openBatch(
  svc: MigrationServices,
  input: MigrationBatchInput,
  taskId: string,
  log: Log,
  todo: BatchDashboard[],
  outcomes: BatchOutcomes,
): Promise<BatchContext> {
  const started = Date.now();
  const records = await svc.states.recordsOf(
    input.targetEnvId,
    input.sourceEnvId,
    todo.map((d) => d.id),
  );
  const rerun = input.overwrite && !input.dryRun && records.size === todo.length;
  const reads = startReads(svc, input, taskId, todo, records, { started, rerun });
  const taskSnapshot = svc.caches.sourceSnapshots.of(taskId);
  const early = { svc, input, taskSnapshot };
  // Nothing else of the batch is asked of the source until its export is answered: a Superset answers
  // one request at a time for the most part (one Python process), the views need the export, and
  // any other read asked beside it would only delay it.
  const exported = reads.sourceExport.then(
    () => true,
    // expected: a failed export is logged by startReads and met by readAhead; here it only means "not landed".
    () => false,
  );
  const begin = exported.then((landed) => {
    // The companions' source views of the dashboards the batch will compare, from the export
    // (they need nothing of the target's index, which is read meanwhile): a plan finds its view read.
    const compared = (rerun || input.dryRun ? todo : todo.slice(0, input.importLimit)).map((d) => d.id);
    const before = rerun ? 'views' : sourceReadBeforeImport(input);
    let views: Promise<void> | undefined;
    if (landed && before === 'views') views = readSourceViewsAhead(early, compared, (id) => svc.caches.exportedSources.get(taskId, id));
    else if (before === 'roles') views = readSourceDashboardRowsAhead(early, compared);
    // The copy kinds' own reads: before any comparison in a rerun or a dry run; else while the import runs (readForCopyKinds).
    if (rerun || !defersCopyKinds(input)) readForCopyKinds(early, todo);
    return views;
  });
  // Detached: reads begun for the plans, which await what they kept (each logs its own failure, none rejects).
  detached(`task ${taskId}: the batch's companion reads begun ahead`, begin, log);
  return { svc, input, taskId, log, todo, records, rerun, reads, outcomes, taskSnapshot };
}

/**
 * What only the copy kinds compare, begun: each dashboard's embedded configuration (no list gives
 * it), both sides' people and the source's lists of reports and saved queries. A migration that
 * imports compares those kinds after its import (./companions/step.ts checkCompanions), so it
 * begins them as the import is sent: the source has nothing else to answer then.
 */
function readForCopyKinds(scope: Pick<PlanScope, 'svc' | 'input' | 'taskSnapshot'>, dashboards: Array<{ id: number }>): void {
  // Detached: kept under the snapshot for the copy kinds' comparisons; it logs its own failure and never rejects.
  detached(
    'the embedded configurations read ahead',
    readSourceEmbeddedEarly(
      scope,
      dashboards.map((d) => d.id),
    ),
    scope.svc.deps.logger,
  );
  readEnvironmentsEarly(scope);
}

/**
 * Plans each dashboard in order, recording at once each outcome that needs no import, until the
 * batch holds as many to import as its limit: the rest wait, unplanned, for a batch that can
 * import them (each dashboard is planned once in a fresh migration; dashboards needing no import
 * are all decided in one batch). Returns the ones to import.
 */
async function planUpToLimit(ctx: BatchContext, scope: PlanScope, rest: BatchDashboard[], ahead: ReadAhead): Promise<Planned[]> {
  const ready: Planned[] = [];
  const unchanged: Array<{ sourceDashboardId: number; targetDashboardId: number }> = [];
  for (const d of rest) {
    if (ready.length >= ctx.input.importLimit) break;
    try {
      const planned = await planOne(scope, d.id, ahead.for(d.id));
      if ('done' in planned) await ctx.outcomes.finish(d.position, unchangedVerified(ctx, d, planned.done, unchanged));
      else ready.push({ ...planned.ready, position: d.position });
    } catch (err) {
      await ctx.outcomes.finish(d.position, await failedOutcome(scope, d.id, err, { fallback: 'export', index: scope.up.index }));
    }
  }
  await ctx.outcomes.writeProgress();
  // Their targets checked again, begun now (./unchanged-checks.ts).
  checkUnchangedAhead(ctx.svc, ctx.input, ctx.taskId, unchanged, scope.taskSnapshot);
  return ready;
}

/**
 * A dashboard the full plan found unchanged: its verification carried (`if_changed`, from the
 * record the batch read), or its target is to be checked again (added to `toCheck`).
 */
function unchangedVerified(ctx: BatchContext, d: BatchDashboard, o: DashboardOutcome, toCheck: UnchangedToCheck[]): DashboardOutcome {
  if (o.status !== 'unchanged' || o.target_dashboard_id === null) return o;
  const last = ctx.records.get(d.id);
  const carried = last ? carriedVerification(ctx.input.verification, last) : null;
  if (carried) return { ...o, verification_state: carried };
  toCheck.push({ sourceDashboardId: d.id, targetDashboardId: o.target_dashboard_id, chartUuids: targetChartUuids(o.objects) });
  return o;
}

/**
 * Imports what the batch planned: in one import call when the batching policy says so, else (or
 * when Superset refuses the lot) one by one. After a refused joint import each dashboard is
 * planned again, asking the target itself, and imported alone, so the one Superset refuses ends
 * with its own answer and its siblings are imported.
 */
async function importReady(ctx: BatchContext, scope: PlanScope, ready: Planned[], beside: () => void): Promise<void> {
  const { outcomes } = ctx;
  let begun = false;
  const sending = () => {
    if (begun) return;
    begun = true;
    beside();
  };
  const together = importsTogether(ready.length);
  const jointly = together ? await importTogether(scope, ready, outcomes.learned, sending) : null;
  sending(); // dashboards imported alone, or a joint import an earlier attempt may have sent
  if (jointly && 'imported' in jointly) {
    await outcomes.finishAll(jointly.imported.map((outcome, i) => ({ position: ready[i]!.position, outcome })));
    await outcomes.writeProgress();
    return;
  }
  // What the refused lot taught (keys another release rejects) is applied up front to each import alone.
  if (jointly) outcomes.learn(jointly.learned);
  for (const p of ready) {
    const o = together ? await migrateOne(scope, p.dashboardId, outcomes.learned) : await importAlone(scope, p, outcomes.learned);
    await outcomes.finish(p.position, o);
    await outcomes.writeProgress();
  }
}
