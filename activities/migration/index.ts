import { ApplicationFailure, Context } from '@temporalio/activity';
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
  type MigrationInput,
  type MigrationSummary,
  type RejectionRule,
  type Verification,
  type VerifyBatchInput,
} from '../../contracts/migration.ts';
import { importsTogether } from '../../contracts/migration-batching.ts';
import { itemsResultSchema } from '../../contracts/outcome-schemas.ts';
import type { RlsReport } from '../../contracts/rls.ts';
import { progressLogLine } from '../../contracts/tasks.ts';
import { listMappings } from '../../db/environments/mappings.ts';
import { MigrationItemsStore } from '../../db/migrations-state/items.ts';
import { TaskItemStore } from '../../db/tasks/items.ts';
import { MigrationStateStore, type TargetState } from '../../db/migrations-state/store.ts';
import { Bundle } from '../../lib/bundles/bundle.ts';
import { generalise, stripKnownRejections } from '../../lib/bundles/rewrite.ts';
import { mergeBundles, splitByDashboard } from '../../lib/bundles/split.ts';
import { redact } from '../../lib/redact.ts';
import { classifySupersetFailure, SupersetNotFoundError } from '../../lib/superset/errors.ts';
import type { RlsRule } from '../../lib/superset/types.ts';
import { maxBundleBytes, type ActivityDeps } from '../deps.ts';
import { failItem, itemFailure } from '../item-failure.ts';
import { currentTaskId } from '../task-context.ts';
import { importPrepared, outcomeBase, pushUpdatedObjects, type ImportResult } from './apply.ts';
import { diagnoseImportFailure } from './diagnose.ts';
import { prepareDashboard, type PreparedBundle } from './plan.ts';
import { planOnRecordedCopy, rulesMayTouch } from './recorded-copy.ts';
import { checkDashboardRls, copyRules, type RlsCheck } from './rls-step.ts';
import { createMigrationCaches, type MigrationCaches } from './caches.ts';
import type { TargetIndex } from './target-index.ts';
import type { MigrationUpstream, UpstreamDatabase } from './upstream.ts';

/** Dashboards verified at once: Superset answers chart queries on a few threads (verification runs after the run's imports, not beside them). */
const VERIFY_PARALLELISM = 3;

/** A migration request as its activities get it (without the dashboard list). */
type Request = Omit<MigrationInput, 'dashboardIds'>;

/** Persisted mappings for the pair, overridden by the ones sent with the request. */
async function mappingsFor(deps: ActivityDeps, input: Request): Promise<Map<number, number>> {
  const rows = await listMappings(deps.knex, input.sourceEnvId, input.targetEnvId);
  const m = new Map<number, number>(rows.map((r) => [Number(r.source_database_id), Number(r.target_database_id)]));
  for (const o of input.dbMappings) m.set(o.source_database_id, o.target_database_id);
  return m;
}

export function createMigrationActivities(deps: ActivityDeps, caches: MigrationCaches = createMigrationCaches()) {
  // What the worker keeps between batches of a task (see ./caches.ts).
  const indexes = caches.targetIndexes;
  const states = new MigrationStateStore(deps.knex);
  const outcomes = new TaskItemStore(deps.knex);
  const intents = new MigrationItemsStore(deps.knex);
  const exported = caches.exportedSources;

  /** One dashboard between planning and its import: what the import and its report need. */
  interface Planned {
    position: number;
    dashboardId: number;
    prepared: PreparedBundle;
    outcome: DashboardOutcome;
    rls: RlsCheck;
    plannedHash: string;
    at: Step;
  }
  type Step = { step: string; env?: string };
  type Upstreams = { source: MigrationUpstream; target: MigrationUpstream; index: TargetIndex; sourceIndex: TargetIndex };

  /**
   * Plans one dashboard: exported (or read ahead), remapped, collisions resolved, row-level
   * security compared, and the unchanged check. Either its outcome is final here (dry run,
   * blocked, unchanged) or it is ready to import.
   */
  async function planOne(
    input: Request,
    dashboardId: number,
    up: Upstreams,
    mappings: Map<number, number>,
    at: Step,
    ahead: Parameters<typeof prepareDashboard>[0]['ahead'],
    log: Context['log'],
  ): Promise<{ done: DashboardOutcome } | { ready: Omit<Planned, 'position'> }> {
    const { source, target, index, sourceIndex } = up;
    at.step = 'export';
    const prepared = await prepareDashboard({
      source,
      target,
      index,
      sourceEnvId: input.sourceEnvId,
      targetEnvId: input.targetEnvId,
      dashboardId,
      overwrite: input.overwrite,
      mappings,
      progress: at,
      maxBundleBytes: maxBundleBytes(deps),
      ahead,
    });
    const outcome = outcomeBase(dashboardId, prepared);
    if (prepared.blocked) {
      log.warn(`dashboard ${dashboardId} ('${prepared.title}'): ${prepared.blocked.error}`);
      return {
        done: { ...outcome, status: prepared.blocked.status, step: 'plan', error: prepared.blocked.error, next_actions: prepared.blocked.next_actions },
      };
    }
    for (const c of prepared.collisions) log.warn(`collision: ${c.detail}; ${c.resolution}`);

    // Row-level security: no export carries it, so the rules are compared here (read once per task and environment).
    at.step = 'rls';
    at.env = input.sourceEnvId;
    await sourceIndex.rlsRules();
    at.env = undefined;
    const rls: RlsCheck = await checkDashboardRls({
      mode: input.rls ?? 'strict',
      dryRun: input.dryRun,
      sourceIndex,
      targetIndex: index,
      prepared,
      request: { ...input, dashboardId },
    });
    outcome.rls = rls.report;
    if (rls.blocked) {
      log.warn(`dashboard ${dashboardId} ('${prepared.title}'): ${rls.blocked.error}`);
      return { done: { ...outcome, status: 'failed', step: 'rls', ...rls.blocked } };
    }
    if (rls.report.ignored_by_request)
      log.warn(`'${prepared.title}': row-level security differs and the request says to ignore it (${rls.report.differences.length} difference(s))`);
    if (input.dryRun) {
      log.info(`dry run of '${prepared.title}': ${summary(outcome.objects)}`);
      return { done: { ...outcome, status: 'planned' } };
    }

    // Nothing changed since the last migration into this target, on either side: nothing to import.
    const plannedHash = prepared.bundle.contentHash();
    if (input.overwrite && prepared.targetDashboardId !== null && prepared.targetHash !== null) {
      const last = await states.get(input.targetEnvId, prepared.dashboardUuid);
      // Recorded by this very task: an earlier attempt imported it (a retry after a crash), which importPrepared reports as such.
      if (last && last.task_id !== currentTaskId() && last.bundle_hash === plannedHash && last.target_hash === prepared.targetHash) {
        if (rls.toCopy.length) {
          at.step = 'rls';
          rls.report.writes = await copyRules({ source, target, targetIndex: index, prepared, rules: rls.toCopy });
        }
        log.info(`'${prepared.title}' is unchanged since task ${last.task_id ?? '?'} migrated it and the target holds it as then: not imported`);
        return { done: { ...outcome, status: 'unchanged', target_dashboard_id: prepared.targetDashboardId } };
      }
    }
    await states.forget(input.targetEnvId, prepared.dashboardUuid);
    return { ready: { dashboardId, prepared, outcome, rls, plannedHash, at } };
  }

  /** Imports one planned dashboard on its own (Superset's answer is this dashboard's alone), then its row-level security. */
  async function importOne(input: Request, p: Omit<Planned, 'position'>, up: Upstreams, learned: RejectionRule[], log: Context['log']) {
    const { prepared, at } = p;
    at.step = 'import';
    const r = await importPrepared({
      intents,
      taskId: currentTaskId(),
      sourceDashboardId: p.dashboardId,
      target: up.target,
      prepared,
      learned,
      overwrite: input.overwrite,
    });
    noteImported(up.index, prepared, r.targetDashboardId);
    return afterImport(input, p, up, r, log);
  }

  /** The index learns of an import at once: this dashboard exists now; content it may have changed is read again. */
  function noteImported(index: TargetIndex, prepared: PreparedBundle, targetDashboardId: number): void {
    const imported = prepared.bundle.of('dashboards')[0]?.content;
    index.noteDashboard({
      id: targetDashboardId,
      uuid: prepared.dashboardUuid,
      slug: typeof imported?.slug === 'string' && imported.slug ? imported.slug : null,
      title: prepared.title,
    });
    index.noteImportedContent(prepared.bundle);
  }

  /** Row-level security written after the import, and the dashboard's outcome. */
  async function afterImport(
    input: Request,
    p: Omit<Planned, 'position'>,
    up: Upstreams,
    r: Pick<ImportResult, 'targetDashboardId' | 'dropped' | 'defaulted' | 'learned' | 'attempts' | 'reusedPreviousImport'>,
    log: Context['log'],
  ): Promise<DashboardOutcome> {
    const { prepared, rls, at } = p;
    const done: DashboardOutcome = {
      ...p.outcome,
      target_dashboard_id: r.targetDashboardId,
      dropped_fields: r.dropped,
      defaulted_fields: r.defaulted,
      learned_rejections: r.learned,
      import_attempts: r.attempts,
      reused_previous_import: r.reusedPreviousImport,
    };
    if (rls.toCopy.length) {
      at.step = 'rls';
      try {
        rls.report.writes = await copyRules({ source: up.source, target: up.target, targetIndex: up.index, prepared, rules: rls.toCopy });
        log.info(`row-level security of '${prepared.title}': ${rls.report.writes!.map((w) => `${w.action} '${w.rule}'`).join(', ')}`);
      } catch (err) {
        // Imported, but its rows are not filtered as in the source: never reported as a clean import.
        const failure = itemFailure(err, { step: 'rls', item: `the row-level-security rules of dashboard ${p.dashboardId}`, envId: input.targetEnvId });
        log.error(`dashboard ${p.dashboardId} ('${prepared.title}') was imported, but its row-level-security rules were not written: ${failure.error}`);
        return { ...done, status: 'imported_with_errors', ...failure, error: `imported, but its row-level-security rules were not written: ${failure.error}` };
      }
    }
    log.info(
      `imported '${prepared.title}' as target dashboard ${r.targetDashboardId}${r.dropped.length ? `, dropping ${r.dropped.length} field(s) the target rejects` : ''}${r.defaulted.length ? `, filling ${r.defaulted.length} required field(s) with the target's defaults` : ''}`,
    );
    return { ...done, status: 'imported' };
  }

  /**
   * Imports several planned dashboards in one call of Superset's import. Null when Superset
   * refuses the lot (nothing was imported: the caller goes one by one) or when an earlier attempt
   * of this batch may have imported some (each then checks its own intent).
   */
  async function importTogether(input: Request, ready: Planned[], up: Upstreams, learned: RejectionRule[], log: Context['log']) {
    const taskId = currentTaskId();
    for (const p of ready) if (await intents.intent(taskId, p.dashboardId)) return null;
    const dropped = new Map(ready.map((p) => [p.dashboardId, stripKnownRejections(p.prepared.bundle, learned)]));
    await intents.markImporting(
      ready.map((p) => ({
        task_id: taskId,
        source_dashboard_id: p.dashboardId,
        dashboard_uuid: p.prepared.dashboardUuid,
        bundle_hash: p.prepared.bundle.contentHash(),
      })),
    );
    for (const p of ready) p.at.step = 'import';
    try {
      await up.target.importBundle('dashboard', mergeBundles(ready.map((p) => p.prepared.bundle)).toZip(), true);
    } catch (err) {
      if (classifySupersetFailure(err)?.retryable) throw err; // an outage: the batch is tried again
      log.warn(`Superset refused the ${ready.length} dashboards imported together (${(err as Error).message.slice(0, 300)}): each is imported alone`);
      return null;
    }
    if (input.overwrite) await pushUpdatedObjects(up.target, ready.map((p) => p.prepared), log);
    await up.index.refreshDashboards();
    const out: DashboardOutcome[] = [];
    for (const p of ready) {
      const there = (await up.index.dashboard(p.prepared.dashboardUuid)) ?? (await up.target.findDashboard(p.prepared.dashboardUuid));
      if (!there) throw new Error(`Superset accepted the import but dashboard ${p.prepared.dashboardUuid} is not in the target`);
      await intents.markImported(taskId, p.dashboardId, there.id);
      noteImported(up.index, p.prepared, there.id);
      const d = dropped.get(p.dashboardId) ?? [];
      const r = { targetDashboardId: there.id, dropped: d, defaulted: [], learned: generalise(d, p.prepared.bundle), attempts: 1, reusedPreviousImport: false };
      out.push(await afterImport(input, p, up, r, log));
    }
    return out;
  }

  /** A dashboard's failure at the step it reached, with what Superset said; an outage is thrown for a retry. */
  async function failedOutcome(
    input: Request,
    dashboardId: number,
    err: unknown,
    at: Step,
    index: TargetIndex | undefined,
    prepared: PreparedBundle | undefined,
    log: Context['log'],
  ): Promise<DashboardOutcome> {
    const envId = at.env ?? (at.step === 'export' ? input.sourceEnvId : input.targetEnvId);
    const failure = itemFailure(err, { step: at.step, item: `dashboard ${dashboardId}`, envId });
    if (at.step === 'import' && index && prepared && classifySupersetFailure(err)?.reason === 'server_error') {
      const known = await diagnoseImportFailure(index, prepared, { ...input, dashboardId }).catch(() => undefined);
      if (known) {
        failure.error = `Superset failed to import dashboard '${prepared.title}': ${known.error}`;
        failure.next_actions = [...known.next_actions, ...failure.next_actions];
      }
    }
    log.error(`dashboard ${dashboardId}${prepared ? ` ('${prepared.title}')` : ''} failed at ${at.step}: ${failure.error}`);
    return { ...outcomeBase(dashboardId, prepared), status: 'failed', ...failure };
  }

  /** One dashboard from start to end, asking Superset for everything itself: the path of a dashboard on its own. */
  async function migrateOne(
    input: Request,
    dashboardId: number,
    up: Upstreams,
    mappings: Map<number, number>,
    learned: RejectionRule[],
    log: Context['log'],
  ): Promise<DashboardOutcome> {
    const at: Step = { step: 'export' };
    let prepared: PreparedBundle | undefined;
    try {
      const planned = await planOne(input, dashboardId, up, mappings, at, undefined, log);
      if ('done' in planned) return planned.done;
      prepared = planned.ready.prepared;
      return await importOne(input, planned.ready, up, learned, log);
    } catch (err) {
      return failedOutcome(input, dashboardId, err, at, up.index, prepared, log);
    }
  }

  /**
   * Records, for the next run's unchanged check, what these imports wrote and the target's own
   * export of each dashboard now (one export call for all of them). Best effort: without a
   * record the next run simply imports again.
   */
  async function recordStates(
    input: { sourceEnvId: string; targetEnvId: string },
    imported: Array<{ sourceDashboardId: number; targetDashboardId: number; dashboardUuid: string; plannedHash: string }>,
    target: MigrationUpstream,
    log: Context['log'],
  ): Promise<void> {
    if (!imported.length) return;
    try {
      const byId = splitByDashboard(Bundle.fromZip(await target.exportDashboards(imported.map((i) => i.targetDashboardId)), maxBundleBytes(deps)));
      for (const i of imported) {
        const after = byId.get(i.targetDashboardId);
        if (!after) continue;
        await states.record({
          target_env_id: input.targetEnvId,
          dashboard_uuid: i.dashboardUuid,
          source_env_id: input.sourceEnvId,
          bundle_hash: i.plannedHash,
          target_hash: after.contentHash(),
          target_dashboard_id: i.targetDashboardId,
          source_dashboard_id: i.sourceDashboardId,
          task_id: currentTaskId(),
        });
      }
    } catch (err) {
      log.warn(`could not record what was imported (the next run imports those dashboards again): ${(err as Error).message}`);
    }
  }

  /** A dashboard's outcome, recorded as the task's item at its place in the request (the task's result is assembled from these). */
  async function record(position: number, o: DashboardOutcome): Promise<void> {
    o.outcome = MIGRATION_OUTCOME[o.status];
    await outcomes.record(currentTaskId(), position, o.id, o);
  }

  /** An outcome amended after it was recorded (verified, or its verification failed). */
  async function amend(position: number, o: DashboardOutcome): Promise<void> {
    o.outcome = MIGRATION_OUTCOME[o.status];
    await outcomes.put(currentTaskId(), position, o.id, o);
  }

  /**
   * The task's view of both environments: Superset clients and the indexes shared by its
   * dashboards. `targetLists: false` (a rerun's first look) reads the target's databases and rules
   * only; a later call without it lists the rest into the same index.
   */
  async function upstreams(input: Request, opts: { targetLists?: boolean } = {}): Promise<Upstreams> {
    const taskId = currentTaskId();
    const lists = opts.targetLists !== false;
    // Two instances: read side by side.
    const [[source, sourceIndex], [target, index]] = await Promise.all([
      deps.superset(input.sourceEnvId).then(async (u) => [u, await indexes.get(`${taskId}:source:${input.sourceEnvId}`, u, { kinds: [], rls: true })] as const),
      deps.superset(input.targetEnvId).then(async (u) => {
        const index = await indexes.get(`${taskId}:${input.targetEnvId}`, u, { rls: true, ...(lists ? {} : { kinds: [] }) });
        if (lists) await index.includeAll();
        return [u, index] as const;
      }),
    ]);
    return { source, target, index, sourceIndex };
  }

  return {
    /**
     * Plans (dry run) or migrates one dashboard on its own and returns its outcome (the drift
     * report's comparison). Upstream outages are retried by Temporal; a refusal is the outcome.
     */
    async migrateDashboard(input: Request & { dashboardId: number; learnedRejections: RejectionRule[] }): Promise<DashboardOutcome> {
      const { log } = Context.current();
      const beat = setInterval(() => Context.current().heartbeat(), 3000);
      const at: Step = { step: 'plan' };
      try {
        let up: Upstreams;
        try {
          up = await upstreams(input);
        } catch (err) {
          return await failedOutcome(input, input.dashboardId, err, at, undefined, undefined, log);
        }
        const o = await migrateOne(input, input.dashboardId, up, await mappingsFor(deps, input), input.learnedRejections, log);
        return { ...o, outcome: MIGRATION_OUTCOME[o.status] };
      } finally {
        clearInterval(beat);
      }
    },

    /** The dashboard is there, its charts are linked, and each chart's query runs in the target (a git deploy's check). */
    async verifyMigratedDashboard(input: { targetEnvId: string; dashboardId: number; expectedChartUuids: string[] }): Promise<Verification> {
      const { log } = Context.current();
      const beat = setInterval(() => Context.current().heartbeat(), 3000);
      const started = Date.now();
      try {
        return { ...(await verifyIn(await deps.superset(input.targetEnvId), input, log)), duration_ms: Date.now() - started };
      } catch (err) {
        // A refusal is final for this dashboard (the workflow records it); an outage is retried.
        failItem(itemFailure(err, { step: 'verify', item: `target dashboard ${input.dashboardId}`, envId: input.targetEnvId }));
      } finally {
        clearInterval(beat);
      }
    },

    /**
     * Plans (dry run) or migrates a batch of dashboards: their sources exported in one call, the
     * target's existing copies in one more, each planned on its own, the ready ones imported
     * together (one by one when Superset refuses the lot). Upstream outages are retried by
     * Temporal (the batch again: recorded outcomes are kept, intent rows stop a second import);
     * a refusal is its dashboard's outcome, so its siblings carry on. Outcomes are recorded in
     * PostgreSQL; the workflow gets only what it needs to go on.
     */
    async migrateBatch(input: MigrationBatchInput): Promise<MigrationBatchResult> {
      const { log } = Context.current();
      // Heartbeat while Superset works, so a killed worker is noticed within the heartbeat timeout.
      const beat = setInterval(() => Context.current().heartbeat(), 3000);
      try {
        return await migrateBatch(input, log);
      } finally {
        clearInterval(beat);
      }
    },

    /**
     * Verifies imported dashboards a few at a time (each: present, charts linked, every chart's
     * query runs), updates their recorded outcomes, and records the target's state for the next
     * run. The workflow runs it after the run's imports (never beside a batch's import).
     */
    async verifyMigratedBatch(input: VerifyBatchInput): Promise<{ failed: number }> {
      const { log } = Context.current();
      const beat = setInterval(() => Context.current().heartbeat(), 3000);
      try {
        const target = await deps.superset(input.targetEnvId);
        await recordStates(input, input.dashboards, target, log);
        let failed = 0;
        const todo: Array<{ d: VerifyBatchInput['dashboards'][number]; stored: DashboardOutcome }> = [];
        const recorded = await outcomes.getMany<DashboardOutcome>(currentTaskId(), input.dashboards.map((d) => d.position));
        for (const d of input.dashboards) {
          const stored = recorded.get(d.position);
          if (stored && !stored.verification) todo.push({ d, stored }); // else verified by an earlier attempt
        }
        const started = Date.now();
        const verified = await verifyMany(
          target,
          todo.map(({ d, stored }) => ({ dashboardId: d.targetDashboardId, expectedChartUuids: stored.chart_uuids })),
          log,
        );
        const took = Date.now() - started;
        for (const [i, { d, stored }] of todo.entries()) {
          const v = verified[i]!;
          if ('error' in v) {
            // An outage is thrown for a retry; a refusal is this dashboard's verification failure.
            const failure = itemFailure(v.error, { step: 'verify', item: `target dashboard ${d.targetDashboardId}`, envId: input.targetEnvId });
            await amend(d.position, { ...stored, status: 'imported_with_errors', ...failure });
            failed++;
            continue;
          }
          if (!v.ok) failed++;
          // The batch's verification time, shared by its dashboards (their charts' queries went out together).
          const verification = { ...v, duration_ms: Math.round(took / todo.length) };
          await amend(d.position, { ...stored, verification, ...(v.ok ? {} : { status: 'imported_with_errors' }) });
        }
        return { failed };
      } finally {
        clearInterval(beat);
      }
    },

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
      const recorded = await outcomes.getMany<DashboardOutcome>(currentTaskId(), input.dashboards.map((d) => d.position));
      for (const d of input.dashboards) {
        const stored = recorded.get(d.position);
        if (input.step === 'migrate' && !stored) await record(d.position, failedDashboardOutcome(d.sourceDashboardId, input.failure));
        if (input.step === 'verify' && stored?.status === 'imported' && !stored.verification)
          await amend(d.position, { ...stored, status: 'imported_with_errors', ...input.failure });
      }
    },

    /**
     * Ends the task: its result assembled from the recorded outcomes and written to its row with
     * the final status (CANCELLED, FAILED when any dashboard did not migrate cleanly, else
     * SUCCEEDED). The workflow gets the totals and the status to close with.
     */
    async finishMigration(input: FinishMigrationInput): Promise<MigrationSummary> {
      const recorded = await outcomes.list<DashboardOutcome>(currentTaskId());
      const result = summariseMigration(input, recorded);
      const failed = result.totals.failed + result.totals.imported_with_errors;
      const status = input.cancelled ? 'CANCELLED' : failed > 0 ? 'FAILED' : 'SUCCEEDED';
      const message =
        status === 'CANCELLED'
          ? `cancelled after ${recorded.length} of ${input.requested} dashboards; the rest were not touched`
          : status === 'FAILED'
            ? `${failed} of ${input.requested} dashboard(s) did not migrate cleanly; see the report`
            : null;
      const checked = itemsResultSchema.safeParse(result);
      if (!checked.success) throw ApplicationFailure.nonRetryable(`task result breaks the outcome contract: ${checked.error.message}`, 'ContractViolation');
      await deps.tasks.finish(
        currentTaskId(),
        status,
        redact(result),
        message ? { message, ...(status === 'FAILED' ? { type: 'PartialMigration' } : {}) } : null,
      );
      return { status, message, totals: result.totals, cancelled: result.cancelled };
    },
  };

  async function migrateBatch(input: MigrationBatchInput, log: Context['log']): Promise<MigrationBatchResult> {
    const taskId = currentTaskId();
    const results: MigrationBatchResult['items'] = [];
    let learned = input.learnedRejections;
    const done = (position: number, o: DashboardOutcome) => {
      results.push({ id: o.id, position, status: o.status, target_dashboard_id: o.target_dashboard_id, dashboard_uuid: o.dashboard_uuid });
      learned = mergeRules(learned, o.learned_rejections);
    };
    // Recorded by an earlier attempt of this batch: kept as they are.
    const todo: Array<{ id: number; position: number }> = [];
    const recorded = await outcomes.getMany<DashboardOutcome>(taskId, input.batch.map((d) => d.position));
    for (const d of input.batch) {
      const stored = recorded.get(d.position);
      if (stored) done(d.position, stored);
      else todo.push(d);
    }
    if (!todo.length) return { items: results, learned };

    const at: Step = { step: 'plan' };
    const t0 = Date.now();
    // What earlier migrations of these dashboards into this target recorded. A batch of dashboards
    // that all came there this way is a rerun: first told unchanged from two exports (settleUnchanged).
    const records = await states.recordsOf(input.targetEnvId, input.sourceEnvId, todo.map((d) => d.id));
    const rerun = input.overwrite && !input.dryRun && records.size === todo.length;
    // Several dashboards (or a rerun's) are read ahead in one export call per side.
    const readTogether = todo.length >= 2 || rerun;
    // The source's export of the batch starts at once, beside the indexes' reads (it needs none of
    // them); dashboards an earlier batch of this task read and left for later are not exported again.
    const unread = readTogether ? todo.map((d) => d.id).filter((id) => !exported.get(taskId, id)) : [];
    const sourceExport = unread.length ? deps.superset(input.sourceEnvId).then((s) => s.exportDashboards(unread)) : Promise.resolve(null);
    sourceExport.catch(() => undefined); // met where it is awaited (readAhead), or not needed when the environments cannot be read
    // So does the target's export of the copies an earlier migration brought there (their ids are in
    // its records): a re-run reads both sides at once instead of the target's after its index.
    const recordedTargets = new Map([...records].map(([id, r]) => [id, r.target_dashboard_id]));
    const targetExport = readTogether ? earlyTargetExport(input, recordedTargets, rerun ? 1 : 2) : Promise.resolve(null);
    targetExport.catch(() => undefined);

    let count = input.doneBefore + (input.batch.length - todo.length);
    // Each outcome is recorded and logged at once; the row's progress is written once per burst
    // (the dashboards planned, a joint import's), not once per dashboard.
    let unwritten: string | null = null;
    const finish = async (position: number, o: DashboardOutcome) => {
      await record(position, o);
      done(position, o);
      count++;
      unwritten = `dashboard ${o.id}: ${o.status}`;
      log.info(progressLogLine({ done: count, total: input.total, message: unwritten }));
    };
    const writeProgress = async () => {
      if (unwritten === null) return;
      const message = unwritten;
      unwritten = null;
      await deps.tasks.setProgress(taskId, { done: count, total: input.total, message });
    };
    const ready: Planned[] = [];
    const wrapUp = (timing: string): MigrationBatchResult => {
      for (const r of results) exported.forget(taskId, r.id);
      const left = input.batch.length - results.length;
      log.info(`batch of ${todo.length}: ${timing}${left > 0 ? `; ${left} left for the next batch` : ''}`);
      results.sort((a, b) => a.position - b.position);
      // The planned hash goes with each imported dashboard to the verification, which records the target's state after it.
      const hashes = new Map(ready.map((p) => [p.dashboardId, p.plannedHash]));
      for (const r of results) if (hashes.has(r.id)) r.planned_hash = hashes.get(r.id);
      return { items: results, learned };
    };

    let rest = todo;
    if (rerun) {
      rest = await settleUnchanged(input, todo, records, { sourceExport, targetExport }, finish, log);
      await writeProgress();
      if (!rest.length) return wrapUp(`a rerun: all ${todo.length} unchanged, told from both exports in ${Date.now() - t0} ms`);
    }
    const settled = todo.length - rest.length;
    let up: Upstreams;
    try {
      up = await upstreams(input);
    } catch (err) {
      // Neither environment can be read: every dashboard of the batch fails here alike.
      for (const d of rest) {
        const o = await failedOutcome(input, d.id, err, at, undefined, undefined, log);
        await record(d.position, o);
        done(d.position, o);
      }
      return { items: results, learned };
    }
    const t1 = Date.now();
    const mappings = await mappingsFor(deps, input);
    const ahead = await readAhead(taskId, rest.map((d) => d.id), up, { at: t0, sourceExport, recordedTargets, targetExport }, log);
    const t2 = Date.now();

    // Plan each; the ones to import wait for one import call.
    for (const d of rest) {
      // Enough to import: the rest wait, unplanned, for a batch that can import them (each dashboard is
      // planned once in a fresh migration; dashboards needing no import are all decided in one batch).
      if (ready.length >= input.importLimit) break;
      const at: Step = { step: 'export' };
      let prepared: PreparedBundle | undefined;
      try {
        const planned = await planOne(input, d.id, up, mappings, at, ahead.for(d.id), log);
        if ('done' in planned) await finish(d.position, planned.done);
        else {
          prepared = planned.ready.prepared;
          ready.push({ ...planned.ready, position: d.position });
        }
      } catch (err) {
        await finish(d.position, await failedOutcome(input, d.id, err, at, up.index, prepared, log));
      }
    }
    await writeProgress();
    const t3 = Date.now();
    const toImport = ready;
    const jointly = importsTogether(input.importLimit, toImport.length) ? await importTogether(input, toImport, up, learned, log) : null;
    if (jointly) {
      for (const [i, o] of jointly.entries()) await finish(toImport[i].position, o);
      await writeProgress();
    } else {
      for (const p of toImport) {
        let o: DashboardOutcome;
        if (importsTogether(input.importLimit, toImport.length)) {
          // After a refused joint import: planned again, asking the target itself, and imported alone.
          o = await migrateOne(input, p.dashboardId, up, mappings, learned, log);
        } else {
          try {
            o = await importOne(input, p, up, learned, log);
          } catch (err) {
            o = await failedOutcome(input, p.dashboardId, err, p.at, up.index, p.prepared, log);
          }
        }
        learned = mergeRules(learned, o.learned_rejections);
        await finish(p.position, o);
        await writeProgress();
      }
    }
    return wrapUp(
      `${settled ? `${settled} unchanged, told from both exports; ` : ''}environments read in ${t1 - t0} ms, exports in ${t2 - t1} ms, planned in ${t3 - t2} ms, ${ready.length} imported in ${Date.now() - t3} ms`,
    );
  }

  /**
   * The target's copies of a batch's source dashboards, as the last migrations recorded them,
   * exported in one call before the target's index is read: the ids exported, and the zip. Null
   * when fewer than `least` are recorded (a lone one is read by its own plan, except in a rerun).
   * A recorded id that is gone fails the call; readAhead then exports the ones the index knows.
   */
  async function earlyTargetExport(input: Request, recordedTargets: Map<number, number>, least: number): Promise<{ ids: number[]; zip: Uint8Array } | null> {
    const ids = [...new Set(recordedTargets.values())];
    if (!ids.length || ids.length < least) return null;
    return { ids, zip: await (await deps.superset(input.targetEnvId)).exportDashboards(ids) };
  }

  /**
   * A rerun's first look (see ./recorded-copy.ts): each dashboard whose source and target copy
   * are as the last migration left them is recorded `unchanged` from the batch's two exports and
   * both environments' databases and rules, without the target's lists. Returns the rest, for the
   * full plan: all of them when a read fails (the full plan meets the failure per dashboard).
   */
  async function settleUnchanged(
    input: MigrationBatchInput,
    todo: Array<{ id: number; position: number }>,
    records: Map<number, TargetState>,
    reads: { sourceExport: Promise<Uint8Array | null>; targetExport: Promise<{ ids: number[]; zip: Uint8Array } | null> },
    finish: (position: number, o: DashboardOutcome) => Promise<void>,
    log: Context['log'],
  ): Promise<Array<{ id: number; position: number }>> {
    const taskId = currentTaskId();
    let up: Upstreams;
    let copies: Map<number, Bundle>;
    let mappings: Map<number, number>;
    let sourceDbs: readonly UpstreamDatabase[];
    let rules: RlsRule[];
    try {
      up = await upstreams(input, { targetLists: false });
      const [zip, early] = await Promise.all([reads.sourceExport, reads.targetExport]);
      if (zip) for (const [id, b] of splitByDashboard(Bundle.fromZip(zip, maxBundleBytes(deps)))) exported.put(taskId, id, b);
      copies = early ? splitByDashboard(Bundle.fromZip(early.zip, maxBundleBytes(deps))) : new Map();
      mappings = await mappingsFor(deps, input);
      // A database created since either index was read is read once more (no call when all are known).
      const bundled = todo.flatMap((d) => exported.get(taskId, d.id)?.of('databases').map((f) => String(f.content.uuid)) ?? []);
      sourceDbs = await up.sourceIndex.databasesCovering(bundled);
      for (const id of new Set(mappings.values())) await up.index.database(id);
      rules = [...(await up.sourceIndex.rlsRules()), ...(await up.index.rlsRules())];
    } catch (err) {
      log.info(`a rerun, but its exports could not be compared (${(err as Error).message.slice(0, 200)}): each dashboard is planned in full`);
      return todo;
    }
    const rest: typeof todo = [];
    for (const d of todo) {
      const last = records.get(d.id)!;
      const source = exported.get(taskId, d.id);
      const copy = copies.get(last.target_dashboard_id);
      let prepared: PreparedBundle | null = null;
      try {
        if (source && copy && last.task_id !== taskId) {
          prepared = planOnRecordedCopy({
            bundle: source.clone(),
            copy,
            copyId: last.target_dashboard_id,
            sourceDbs,
            targetDbs: up.index.databases,
            mappings,
            request: { ...input, dashboardId: d.id },
          });
        }
      } catch {
        prepared = null; // an export the full plan reads and reports on
      }
      const same =
        prepared &&
        prepared.dashboardUuid === last.dashboard_uuid &&
        prepared.bundle.contentHash() === last.bundle_hash &&
        prepared.targetHash === last.target_hash &&
        !rulesMayTouch(rules, prepared.datasets.map((x) => x.table_name));
      if (!prepared || !same) {
        rest.push(d);
        continue;
      }
      log.info(`'${prepared.title}' is unchanged since task ${last.task_id ?? '?'} migrated it and the target holds it as then: not imported`);
      const rls = { mode: input.rls ?? 'strict', source_rules: [], target_rules: [], differences: [] } satisfies RlsReport;
      await finish(d.position, { ...outcomeBase(d.id, prepared), status: 'unchanged', rls });
    }
    return rest;
  }

  /**
   * Reads a batch ahead: the source's export of all its dashboards in one call, the source's
   * databases, and the target's export of those already there in one more (both started by the
   * batch, `started`), split per dashboard.
   * Whatever cannot be read ahead is read per dashboard, which then fails alone with its cause.
   */
  async function readAhead(
    taskId: string,
    ids: number[],
    up: Upstreams,
    started: {
      /** When the batch started (ms): an index read since needs no refresh. */
      at: number;
      sourceExport: Promise<Uint8Array | null>;
      /** Source dashboard id → its copy in the target, from the last migrations' records. */
      recordedTargets: Map<number, number>;
      targetExport: Promise<{ ids: number[]; zip: Uint8Array } | null>;
    },
    log: Context['log'],
  ) {
    const { sourceExport, targetExport } = started;
    const empty = { for: (_id: number) => undefined };
    if (ids.length < 2) return empty;
    const sources = new Map<number, Bundle>();
    let sourceDatabases: UpstreamDatabase[];
    // Both sides at once (two instances): the source's export; the target's copies of the dashboards
    // an earlier migration brought there (known from its records); the slugs that changed hands in
    // the target since the index was read (one call; where the release cannot say, each slug is
    // asked of the target).
    // A refresh that fails is "cannot tell": each slug is then asked of the target by its own dashboard.
    // (none when this batch built the index: it is as current as a refresh would make it)
    const slugsRead = up.index.refreshDashboardsChanged(100, started.at).catch(() => false);
    const recorded = started.recordedTargets;
    const targetCopies = new Map<number, Bundle>();
    const exportTargets = async (targetIds: number[], early?: { ids: number[]; zip: Uint8Array } | null) => {
      if (targetIds.length < 2) return; // one is read by its own plan
      try {
        // The early export serves when it holds every copy the index knows of (a copy gone since
        // failed it, or the records changed): otherwise those copies are exported now.
        const zip = early && targetIds.every((id) => early.ids.includes(id)) ? early.zip : await up.target.exportDashboards(targetIds);
        for (const [id, b] of splitByDashboard(Bundle.fromZip(zip, maxBundleBytes(deps)))) if (targetIds.includes(id)) targetCopies.set(id, b);
      } catch (err) {
        log.warn(`the target's copies could not be exported together (${(err as Error).message.slice(0, 200)}): each is exported alone`);
      }
    };
    const targetsRead = targetExport
      .catch(() => null)
      .then((early) => exportTargets([...new Set(recorded.values())].filter((id) => up.index.hasDashboard(id)), early));
    try {
      const zip = await sourceExport;
      if (zip) for (const [id, b] of splitByDashboard(Bundle.fromZip(zip, maxBundleBytes(deps)))) exported.put(taskId, id, b);
      for (const id of ids) {
        const b = exported.get(taskId, id);
        if (b) sources.set(id, b.clone());
      }
      // The source index read them at the task's start; read again only for one created since.
      const bundled = [...sources.values()].flatMap((b) => b.of('databases').map((f) => f.content.uuid)).filter((u): u is string => typeof u === 'string');
      sourceDatabases = [...(await up.sourceIndex.databasesCovering(bundled))];
    } catch (err) {
      await Promise.all([slugsRead, targetsRead]);
      log.warn(`the ${ids.length} dashboards could not be exported together (${(err as Error).message.slice(0, 200)}): each is exported alone`);
      return empty;
    }
    const [slugsCurrent] = await Promise.all([slugsRead, targetsRead]);
    // Copies the records did not predict (migrated by hand, or records from before they kept the source id): read now.
    const existing = new Map<number, number>();
    for (const [id, b] of sources) {
      const uuid = b.of('dashboards')[0]?.content.uuid;
      const there = typeof uuid === 'string' ? await up.index.dashboard(uuid) : null;
      if (there) existing.set(id, there.id);
    }
    await exportTargets([...existing.values()].filter((targetId) => !targetCopies.has(targetId)));
    const targets = targetCopies;
    return {
      for: (id: number) => {
        const bundle = sources.get(id);
        if (!bundle) return undefined;
        return {
          bundle,
          sourceDatabases,
          targetExport: (targetId: number) => targets.get(targetId),
          // The target dashboard holding the slug, as the index knows it (current as of this batch).
          slugOwner: slugsCurrent
            ? async (slug: string) => {
                const owner = up.index.dashboardBySlug(slug);
                return owner ? { id: owner.id, uuid: owner.uuid, dashboard_title: owner.title } : null;
              }
            : undefined,
        };
      },
    };
  }

  /** The dashboard is there, its charts are linked, and each chart's query runs in the target. */
  async function verifyIn(
    target: MigrationUpstream,
    input: { targetEnvId: string; dashboardId: number; expectedChartUuids: string[] },
    log: Context['log'],
  ): Promise<Verification> {
    const [v] = await verifyMany(target, [input], log);
    if ('error' in v!) throw v.error;
    return v!;
  }

  /**
   * Verifies several dashboards: each one's charts read (a few dashboards at a time; the charts'
   * path answers 404 for a dashboard that is not there), then every chart's query, those on one
   * dataset in one call. A dashboard whose charts cannot be read carries the error instead.
   */
  async function verifyMany(
    target: MigrationUpstream,
    dashboards: Array<{ dashboardId: number; expectedChartUuids: string[] }>,
    log: Context['log'],
  ): Promise<Array<Verification | { error: unknown }>> {
    type Charts = Awaited<ReturnType<MigrationUpstream['dashboardCharts']>>;
    const charts: Array<Charts | null | { error: unknown }> = new Array(dashboards.length);
    await inParallel([...dashboards.keys()], VERIFY_PARALLELISM, async (i) => {
      try {
        charts[i] = await target.dashboardCharts(dashboards[i]!.dashboardId);
      } catch (err) {
        charts[i] = err instanceof SupersetNotFoundError ? null : { error: err };
      }
    });
    const all = charts.flatMap((c) => (Array.isArray(c) ? c : []));
    const answers = all.length ? await target.runChartQueries(all) : [];
    let next = 0;
    return dashboards.map((d, i) => {
      const mine = charts[i];
      const expected = d.expectedChartUuids.length;
      if (mine && !Array.isArray(mine)) return mine;
      if (!mine) return { ok: false, dashboard_present: false, charts_expected: expected, charts_linked: 0, charts: [] };
      const results: Verification['charts'] = mine.map((c) => {
        const r = answers[next++]!;
        if (!r.ok) log.warn(`chart '${c.slice_name}' (${c.id}) does not run in the target: ${r.error}`);
        return { id: c.id, name: c.slice_name ?? String(c.id), ok: r.ok, ...(r.ok ? { rows: r.rows } : { error: r.error }) };
      });
      const ok = mine.length >= expected && results.every((r) => r.ok);
      log.info(`verified target dashboard ${d.dashboardId}: ${mine.length}/${expected} charts linked, ${results.filter((r) => r.ok).length} run`);
      return { ok, dashboard_present: true, charts_expected: expected, charts_linked: mine.length, charts: results };
    });
  }
}

function summary(objects: DashboardOutcome['objects']): string {
  const counts: Record<string, number> = {};
  for (const o of objects) counts[o.action] = (counts[o.action] ?? 0) + 1;
  return Object.entries(counts)
    .map(([a, n]) => `${n} ${a}`)
    .join(', ');
}

/** Runs `fn` over `list` with at most `limit` at a time. */
async function inParallel<T>(list: T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < list.length) await fn(list[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, list.length) }, lane));
}
