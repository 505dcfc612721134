import { Context } from '@temporalio/activity';
import type { DashboardOutcome, MigrationInput, Verification } from '../../contracts/migration.ts';
import { MigrationStateStore } from '../../db/migrations-state/store.ts';
import { Bundle } from '../../lib/bundles/bundle.ts';
import { classifySupersetFailure } from '../../lib/superset/errors.ts';
import { maxBundleBytes, type ActivityDeps } from '../deps.ts';
import { failItem, itemFailure } from '../item-failure.ts';
import { currentTaskId } from '../task-context.ts';
import { importPrepared, outcomeBase } from './apply.ts';
import { diagnoseImportFailure } from './diagnose.ts';
import { prepareDashboard, type PreparedBundle } from './plan.ts';
import { checkDashboardRls, copyRules, type RlsCheck } from './rls-step.ts';
import { TargetIndexCache, type TargetIndex } from './target-index.ts';
import type { MigrationUpstream } from './upstream.ts';

/** Persisted mappings for the pair, overridden by the ones sent with the request. */
async function mappingsFor(deps: ActivityDeps, input: MigrationInput): Promise<Map<number, number>> {
  const rows = await deps.knex('database_mappings').where({ source_env_id: input.sourceEnvId, target_env_id: input.targetEnvId });
  const m = new Map<number, number>(rows.map((r) => [Number(r.source_database_id), Number(r.target_database_id)]));
  for (const o of input.dbMappings) m.set(o.source_database_id, o.target_database_id);
  return m;
}

export function createMigrationActivities(deps: ActivityDeps) {
  // The target's objects, looked up once per task and target in this worker (see ./target-index.ts).
  const indexes = new TargetIndexCache();
  const states = new MigrationStateStore(deps.knex);

  async function migrateOne(
    input: MigrationInput & { dashboardId: number; learnedRejections: DashboardOutcome['learned_rejections'] },
  ): Promise<DashboardOutcome> {
    const { log } = Context.current();
    // `env`: which environment the step talks to, when not the usual one (export: source; later steps: target).
    const at: { step: string; env?: string } = { step: 'export' };
    let target: MigrationUpstream | undefined;
    let index: TargetIndex | undefined;
    let prepared: PreparedBundle | undefined;
    const indexKey = `${currentTaskId()}:${input.targetEnvId}`;
    try {
      const source = await deps.superset(input.sourceEnvId);
      target = await deps.superset(input.targetEnvId);
      at.step = 'plan';
      index = await indexes.get(indexKey, target);
      at.step = 'export';
      prepared = await prepareDashboard({
        source,
        target,
        index,
        sourceEnvId: input.sourceEnvId,
        targetEnvId: input.targetEnvId,
        dashboardId: input.dashboardId,
        overwrite: input.overwrite,
        mappings: await mappingsFor(deps, input),
        progress: at,
        maxBundleBytes: maxBundleBytes(deps),
      });
      const outcome = outcomeBase(input.dashboardId, prepared);
      if (prepared.blocked) {
        log.warn(`dashboard ${input.dashboardId} ('${prepared.title}'): ${prepared.blocked.error}`);
        return {
          ...outcome,
          status: prepared.blocked.status,
          step: 'plan',
          error: prepared.blocked.error,
          next_actions: prepared.blocked.next_actions,
        };
      }
      for (const c of prepared.collisions) log.warn(`collision: ${c.detail}; ${c.resolution}`);

      // Row-level security: no export carries it, so the rules are compared here (read once per task and environment).
      at.step = 'rls';
      at.env = input.sourceEnvId;
      const sourceIndex = await indexes.get(`${currentTaskId()}:source:${input.sourceEnvId}`, source, { kinds: ['dataset'] });
      await sourceIndex.rlsRules();
      at.env = undefined;
      const rls: RlsCheck = await checkDashboardRls({
        mode: input.rls ?? 'strict',
        dryRun: input.dryRun,
        sourceIndex,
        targetIndex: index,
        prepared,
        request: { ...input, dashboardId: input.dashboardId },
      });
      outcome.rls = rls.report;
      if (rls.blocked) {
        log.warn(`dashboard ${input.dashboardId} ('${prepared.title}'): ${rls.blocked.error}`);
        return { ...outcome, status: 'failed', step: 'rls', ...rls.blocked };
      }
      if (rls.report.ignored_by_request)
        log.warn(`'${prepared.title}': row-level security differs and the request says to ignore it (${rls.report.differences.length} difference(s))`);
      if (input.dryRun) {
        log.info(`dry run of '${prepared.title}': ${summary(outcome.objects)}`);
        return { ...outcome, status: 'planned' };
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
          return { ...outcome, status: 'unchanged', target_dashboard_id: prepared.targetDashboardId };
        }
      }
      await states.forget(input.targetEnvId, prepared.dashboardUuid);
      at.step = 'import';
      const r = await importPrepared({
        knex: deps.knex,
        taskId: currentTaskId(),
        sourceDashboardId: input.dashboardId,
        target,
        prepared,
        learned: input.learnedRejections,
        overwrite: input.overwrite,
      });
      // Keep the task's index current: this dashboard now exists; charts and datasets it created are read at the next refresh.
      const imported = prepared.bundle.of('dashboards')[0]?.content;
      index.noteDashboard({
        id: r.targetDashboardId,
        uuid: prepared.dashboardUuid,
        slug: typeof imported?.slug === 'string' && imported.slug ? imported.slug : null,
        title: prepared.title,
      });
      index.forgetContent(prepared.bundle);
      const done = {
        ...outcome,
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
          rls.report.writes = await copyRules({ source, target, targetIndex: index, prepared, rules: rls.toCopy });
          log.info(`row-level security of '${prepared.title}': ${rls.report.writes!.map((w) => `${w.action} '${w.rule}'`).join(', ')}`);
        } catch (err) {
          // Imported, but its rows are not filtered as in the source: never reported as a clean import.
          const failure = itemFailure(err, { step: 'rls', item: `the row-level-security rules of dashboard ${input.dashboardId}`, envId: input.targetEnvId });
          log.error(`dashboard ${input.dashboardId} ('${prepared.title}') was imported, but its row-level-security rules were not written: ${failure.error}`);
          return { ...done, status: 'imported_with_errors', ...failure, error: `imported, but its row-level-security rules were not written: ${failure.error}` };
        }
      }
      await recordState(input, prepared, plannedHash, r.targetDashboardId, target, log);
      log.info(
        `imported '${prepared.title}' as target dashboard ${r.targetDashboardId}${r.dropped.length ? `, dropping ${r.dropped.length} field(s) the target rejects` : ''}${r.defaulted.length ? `, filling ${r.defaulted.length} required field(s) with the target's defaults` : ''}`,
      );
      return { ...done, status: 'imported' };
    } catch (err) {
      const envId = at.env ?? (at.step === 'export' ? input.sourceEnvId : input.targetEnvId);
      const failure = itemFailure(err, { step: at.step, item: `dashboard ${input.dashboardId}`, envId });
      if (at.step === 'import' && index && prepared && classifySupersetFailure(err)?.reason === 'server_error') {
        const known = await diagnoseImportFailure(index, prepared, input).catch(() => undefined);
        if (known) {
          failure.error = `Superset failed to import dashboard '${prepared.title}': ${known.error}`;
          failure.next_actions = [...known.next_actions, ...failure.next_actions];
        }
      }
      log.error(`dashboard ${input.dashboardId}${prepared ? ` ('${prepared.title}')` : ''} failed at ${at.step}: ${failure.error}`);
      return { ...outcomeBase(input.dashboardId, prepared), status: 'failed', ...failure };
    }
  }

  /**
   * Records what this import wrote and the target's own export right after it, for the next
   * run's unchanged check. Best effort: without a record the next run simply imports again.
   */
  async function recordState(
    input: MigrationInput,
    prepared: PreparedBundle,
    plannedHash: string,
    targetDashboardId: number,
    target: MigrationUpstream,
    log: Context['log'],
  ): Promise<void> {
    try {
      const after = Bundle.fromZip(await target.exportDashboards([targetDashboardId]), maxBundleBytes(deps));
      await states.record({
        target_env_id: input.targetEnvId,
        dashboard_uuid: prepared.dashboardUuid,
        source_env_id: input.sourceEnvId,
        bundle_hash: plannedHash,
        target_hash: after.contentHash(),
        target_dashboard_id: targetDashboardId,
        task_id: currentTaskId(),
      });
    } catch (err) {
      log.warn(`could not record what was imported for '${prepared.title}' (the next run imports it again): ${(err as Error).message}`);
    }
  }

  return {
    /**
     * Plans (dry run) or migrates one dashboard. Upstream outages are retried by Temporal; a
     * refusal (unmapped database, rejected or failed import) is this dashboard's outcome, not an
     * error, so its siblings carry on.
     */
    async migrateDashboard(
      input: MigrationInput & { dashboardId: number; learnedRejections: DashboardOutcome['learned_rejections'] },
    ): Promise<DashboardOutcome> {
      // Heartbeat while Superset works, so a killed worker is noticed within the heartbeat timeout.
      const beat = setInterval(() => Context.current().heartbeat(), 3000);
      try {
        return await migrateOne(input);
      } finally {
        clearInterval(beat);
      }
    },

    /** The dashboard is there, its charts are linked, and each chart's query runs in the target. */
    async verifyMigratedDashboard(input: {
      targetEnvId: string;
      dashboardId: number;
      expectedChartUuids: string[];
    }): Promise<Verification> {
      const { log } = Context.current();
      const beat = setInterval(() => Context.current().heartbeat(), 3000);
      const started = Date.now();
      try {
        // Its time is reported apart from the import's, so a report (and bench:migration) can tell them apart.
        return { ...(await verifyOne(input, log)), duration_ms: Date.now() - started };
      } finally {
        clearInterval(beat);
      }
    },
  };

  async function verifyOne(
    input: { targetEnvId: string; dashboardId: number; expectedChartUuids: string[] },
    log: Context['log'],
  ): Promise<Verification> {
    try {
      return await verifyIn(await deps.superset(input.targetEnvId), input, log);
    } catch (err) {
      // A refusal is final for this dashboard (the workflow records it); an outage is retried.
      failItem(itemFailure(err, { step: 'verify', item: `target dashboard ${input.dashboardId}`, envId: input.targetEnvId }));
    }
  }

  async function verifyIn(
    target: MigrationUpstream,
    input: { targetEnvId: string; dashboardId: number; expectedChartUuids: string[] },
    log: Context['log'],
  ): Promise<Verification> {
    const present = await target.findDashboard(String(input.dashboardId));
    if (!present)
      return { ok: false, dashboard_present: false, charts_expected: input.expectedChartUuids.length, charts_linked: 0, charts: [] };
    const charts = await target.dashboardCharts(input.dashboardId);
    const results: Verification['charts'] = [];
    for (const c of charts) {
      const r = await target.runChartQuery(c);
      results.push({ id: c.id, name: c.slice_name ?? String(c.id), ok: r.ok, ...(r.ok ? { rows: r.rows } : { error: r.error }) });
      if (!r.ok) log.warn(`chart '${c.slice_name}' (${c.id}) does not run in the target: ${r.error}`);
    }
    const linked = charts.length;
    const ok = linked >= input.expectedChartUuids.length && results.every((r) => r.ok);
    log.info(
      `verified target dashboard ${input.dashboardId}: ${linked}/${input.expectedChartUuids.length} charts linked, ${results.filter((r) => r.ok).length} run`,
    );
    return { ok, dashboard_present: true, charts_expected: input.expectedChartUuids.length, charts_linked: linked, charts: results };
  }
}

function summary(objects: DashboardOutcome['objects']): string {
  const counts: Record<string, number> = {};
  for (const o of objects) counts[o.action] = (counts[o.action] ?? 0) + 1;
  return Object.entries(counts)
    .map(([a, n]) => `${n} ${a}`)
    .join(', ');
}
