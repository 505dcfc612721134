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
 * Every read begun ahead of the step that needs it goes through the batch's run of the task's
 * prefetch plan (./prefetch-plan.ts): the batch's own are awaited before it returns, those handed
 * to the next batch or the verification are held until taken.
 *
 * Safe to run again: outcomes already recorded are kept, intents stop a second import. A
 * refusal is its dashboard's outcome, so its siblings carry on; an outage is thrown for
 * Temporal's retry of the whole batch.
 */
import { importsTogether, widensNext } from '../../contracts/migration-batching.ts';
import { declaredSize } from '../../lib/archive/unzip.ts';
import { MAX_BUNDLE_FILES } from '../../lib/bundles/bundle.ts';
import { maxBundleBytes } from './deps.ts';
import {
  carriedVerification,
  type DashboardOutcome,
  type MigrationBatchInput,
  type MigrationBatchResult,
} from '../../contracts/migration.ts';
import type { BatchContext } from './batch-context.ts';
import {
  envRulesFor,
  mappingsFor,
  openUpstreams,
  refuseStale,
  type BatchDashboard,
  type MigrationServices,
  type PlanScope,
  type Upstreams,
} from './context.ts';
import { importAlone, migrateOne } from './dashboard.ts';
import { failedOutcome } from './failure.ts';
import { importTogether } from './import.ts';
import { planOne, type Planned } from './plan-one.ts';
import type { PrefetchRun } from './prefetch-runs.ts';
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
  const prefetch = await svc.caches.prefetch.open(taskId, 'migrateBatch', svc.deps.logger);
  try {
    return await batchSteps(svc, input, taskId, activity, prefetch);
  } finally {
    // Every read the batch began for itself (and those an earlier batch began for it) settled before it returns; those
    // it handed to the next batch or the verification stay in the task's plan until taken (./prefetch-plan.ts).
    await prefetch.end();
  }
}

/** The batch's steps, in order (see the file's comment). */
async function batchSteps(
  svc: MigrationServices,
  input: MigrationBatchInput,
  taskId: string,
  activity: ActivityPort,
  prefetch: PrefetchRun,
): Promise<MigrationBatchResult> {
  // 1. records
  const outcomes = new BatchOutcomes(svc, input, taskId, activity.log);
  const todo = await outcomes.keepRecorded();
  if (!todo.length) return outcomes.result();
  await refuseStale(svc.deps, input);
  const ctx = await openBatch({ svc, input, taskId, log: activity.log, prefetch }, todo, outcomes);
  const t0 = ctx.reads.at;

  // 2. settle unchanged
  let rest = todo;
  if (ctx.rerun) {
    rest = await settleUnchanged(ctx);
    await outcomes.writeProgress();
    if (!rest.length) {
      const widen = await widensAfter(ctx);
      const timing = `a rerun: all ${todo.length} unchanged, told from both exports in ${Date.now() - t0} ms${widen ? '; the next batch reads wider' : ''}`;
      return { ...outcomes.wrapUp(todo.length, [], timing), widen };
    }
  }
  const settled = todo.length - rest.length;

  // 3. read ahead
  const opened = await openScope(ctx, activity, rest);
  if (!opened) return outcomes.result();
  const { scope, at: t1 } = opened;
  const ahead = await readAhead(
    ctx,
    scope.up,
    rest.map((d) => d.id),
  );
  const t2 = Date.now();

  // 4. plan (what its comparisons read of the source dashboards read ahead meanwhile: their views, or their roles alone)
  const ready = await planBatch(ctx, scope, rest, ahead);
  const t3 = Date.now();

  // 5. import (6. verify: by the workflow, beside the next batch; both its sides begun here, not awaited)
  await importBatch(ctx, scope, ready);

  // 7. record
  return outcomes.wrapUp(
    todo.length,
    ready,
    `${settled ? `${settled} unchanged, told from both exports; ` : ''}environments read in ${t1 - t0} ms, exports in ${t2 - t1} ms, planned in ${t3 - t2} ms, ${ready.length} imported in ${Date.now() - t3} ms`,
  );
}

/** Both environments opened for the plans, with the pair's mappings and rules; null when neither can be read (every dashboard then failed). */
async function openScope(
  ctx: BatchContext,
  activity: ActivityPort,
  rest: BatchDashboard[],
): Promise<{ scope: PlanScope; at: number } | null> {
  const { svc, input, taskId, outcomes } = ctx;
  let up: Upstreams;
  try {
    up = await openUpstreams(svc, input, taskId);
  } catch (err) {
    // Neither environment can be read: every dashboard of the batch fails here alike.
    for (const d of rest) await outcomes.failAlike(d.position, await failedOutcome(ctx, d.id, err, { fallback: 'plan' }));
    return null;
  }
  const at = Date.now();
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
  return { scope, at };
}

/** The batch's source export of a dashboard, as the worker keeps it. */
const exportOf = (ctx: BatchContext) => (id: number) => ctx.svc.caches.exportedSources.get(ctx.taskId, id);

/** Step 4: the source reads the plans compare begun before the first of them, then each dashboard planned. */
async function planBatch(ctx: BatchContext, scope: PlanScope, rest: BatchDashboard[], ahead: ReadAhead): Promise<Planned[]> {
  const { input, prefetch } = ctx;
  const planned = (input.dryRun ? rest : rest.slice(0, input.importLimit)).map((d) => d.id);
  const before = sourceReadBeforeImport(input);
  // Begun (never failed) before the first plan compares: else that plan reads its own beside the joint read.
  if (before === 'views') await readSourceViewsAhead(prefetch, scope, planned, exportOf(ctx));
  if (before === 'roles') await readSourceDashboardRowsAhead(prefetch, scope, planned);
  return planUpToLimit(ctx, scope, rest, ahead);
}

/** Step 5: the import, with what the source answers meanwhile begun as it is sent; then the target's checks begun. */
async function importBatch(ctx: BatchContext, scope: PlanScope, ready: Planned[]): Promise<void> {
  // Begun once the import is ready to send, not before: the worker's own work of sending it comes first.
  await importReady(ctx, scope, ready, () => beginBesideImport(ctx, scope, ready));
  // The target's side of the verification begins here, beside the source's; the batch does not wait for it (./target-checks-ahead.ts).
  checkTargetsAhead(ctx, 'targetChecks', importedTargets(ctx, ready));
}

/**
 * What the source answers while the target imports (it has nothing else of this batch to answer then): the views the
 * copy kinds compare after the import and the source's chart checks read (begun already when the plan compared them),
 * the source's checks, what the copy kinds compare, and the next batch's export and views.
 */
function beginBesideImport(ctx: BatchContext, scope: PlanScope, ready: Planned[]): void {
  const ids = ready.map((p) => p.dashboardId);
  const viewsBegun = readSourceViewsAhead(ctx.prefetch, scope, ids, exportOf(ctx));
  checkSourcesAhead(ctx, 'sourceChecks', ids, viewsBegun, scope.taskSnapshot);
  readForCopyKinds(ctx.prefetch, scope, ids);
  exportUpcoming(ctx, scope);
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
  run: Pick<BatchContext, 'svc' | 'input' | 'taskId' | 'log' | 'prefetch'>,
  todo: BatchDashboard[],
  outcomes: BatchOutcomes,
): Promise<BatchContext> {
  const { svc, input, taskId } = run;
  const started = Date.now();
  const records = await svc.states.recordsOf(
    input.targetEnvId,
    input.sourceEnvId,
    todo.map((d) => d.id),
  );
  const rerun = input.overwrite && !input.dryRun && records.size === todo.length;
  const reads = startReads(run, todo, records, { started, rerun });
  const ctx: BatchContext = { ...run, todo, records, rerun, reads, outcomes, taskSnapshot: svc.caches.sourceSnapshots.of(taskId) };
  beginOnExport(ctx);
  return ctx;
}

/**
 * Whether the next batch may read wider (contracts/migration-batching.ts widensNext, the one
 * decider): called when this batch found every dashboard unchanged, with its own source export's
 * size (settled already: the comparison read it).
 */
async function widensAfter(ctx: BatchContext): Promise<boolean> {
  const zip = await ctx.reads.sourceExport;
  return widensNext({
    dashboards: ctx.todo.length,
    unchanged: ctx.todo.length,
    sourceExport: zip ? declaredSize(zip) : null,
    maxBytes: maxBundleBytes(ctx.svc.deps),
    maxEntries: MAX_BUNDLE_FILES,
  });
}

/**
 * The companions' source reads that need the batch's export, begun once it is answered. Nothing
 * else of the batch is asked of the source until then: a Superset answers one request at a time
 * for the most part (one Python process), the views need the export, and any other read asked
 * beside it would only delay it.
 */
function beginOnExport(ctx: BatchContext): void {
  const { svc, input, todo, rerun, prefetch } = ctx;
  const early = { svc, input, taskSnapshot: ctx.taskSnapshot };
  prefetch.begin('readsOnExport', `the companions' reads of dashboards ${todo.map((d) => d.id).join(', ')}`, async () => {
    const landed = await ctx.reads.sourceExport.then(
      () => true,
      // expected: a failed export is logged by the plan and met by readAhead; here it only means "not landed".
      () => false,
    );
    // The companions' source views of the dashboards the batch will compare, from the export
    // (they need nothing of the target's index, which is read meanwhile): a plan finds its view read.
    const compared = (rerun || input.dryRun ? todo : todo.slice(0, input.importLimit)).map((d) => d.id);
    const before = rerun ? 'views' : sourceReadBeforeImport(input);
    let views: Promise<void> | undefined;
    if (landed && before === 'views') views = readSourceViewsAhead(prefetch, early, compared, exportOf(ctx));
    else if (before === 'roles') views = readSourceDashboardRowsAhead(prefetch, early, compared);
    // The copy kinds' own reads: before any comparison in a rerun or a dry run; else while the import runs (readForCopyKinds).
    if (rerun || !defersCopyKinds(input))
      readForCopyKinds(
        prefetch,
        early,
        todo.map((d) => d.id),
      );
    await views;
  });
}

/**
 * What only the copy kinds compare, begun: each dashboard's embedded configuration (no list gives
 * it), both sides' people and the source's lists of reports and saved queries. A migration that
 * imports compares those kinds after its import (./companions/step.ts checkCompanions), so it
 * begins them as the import is sent: the source has nothing else to answer then.
 */
function readForCopyKinds(prefetch: PrefetchRun, scope: Pick<PlanScope, 'svc' | 'input' | 'taskSnapshot'>, dashboardIds: number[]): void {
  readSourceEmbeddedEarly(prefetch, scope, dashboardIds);
  readEnvironmentsEarly(prefetch, scope);
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
  checkUnchangedAhead(ctx, unchanged);
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
