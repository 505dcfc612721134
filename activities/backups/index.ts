import { Context } from '@temporalio/activity';
import type { BackupRow } from '../../db/backups/store.ts';
import { BlobNotFoundError } from '../../lib/backup-store/index.ts';
import { Bundle } from '../../lib/bundles/bundle.ts';
import { chartUuidsOf } from '../../lib/bundles/rewrite.ts';
import { failedBackupItem, type BackupItem, type BackupItemBrief, type RestoreInput, type RestoreItem, type RetentionOutcome } from '../../contracts/backup.ts';
import type { ItemFailure } from '../../contracts/failures.ts';
import { progressLogLine } from '../../contracts/tasks.ts';
import { maxBundleBytes, type ActivityDeps } from '../deps.ts';
import { failItem, itemFailure } from '../item-failure.ts';
import { currentTaskId } from '../task-context.ts';
import { findRestoreBlockers } from './restore-checks.ts';
import { attachRules, takeRules } from './rls.ts';
import { missingRoles, writeRules } from '../migration/rls.ts';
import { upstreamFor } from '../migration/superset-upstream.ts';
import { TargetIndex } from '../migration/target-index.ts';
import { TargetIndexCache } from '../migration/target-index-cache.ts';

/**
 * Backup, retention and restore. The store is built once per worker from the configuration
 * (a directory, or the S3 bucket when BACKUP_S3_BUCKET is set).
 */
export function createBackupActivities(deps: ActivityDeps) {
  const { backupStore } = deps;
  // The environment's datasets and row-level-security rules, read once per backup task in this worker.
  const indexes = new TargetIndexCache();
  const { backups, taskItems: items } = deps.stores;

  const activities = {
    /**
     * Exports one dashboard and stores it. A Superset outage is thrown (Temporal retries it); a
     * refusal (no such dashboard, no permission) or an unusable bundle is returned as this
     * dashboard's failure.
     */
    async backupDashboard(input: { envId: string; dashboardId: number }): Promise<{ item: BackupItem; store: string }> {
      const { log } = Context.current();
      const taskId = currentTaskId();
      const s = backupStore();
      const previous = await backups.ofTask(taskId, input.dashboardId);
      if (previous) {
        log.info(`dashboard ${input.dashboardId} was already backed up by an earlier attempt of this task (backup ${previous.id})`);
        return { item: itemOf(previous), store: s.location };
      }

      const item = `dashboard ${input.dashboardId}`;
      let zip: Uint8Array;
      let bundle: Bundle;
      try {
        const upstream = await upstreamFor(deps, input.envId);
        log.info(`exporting dashboard ${input.dashboardId}`);
        zip = await upstream.exportDashboards([input.dashboardId]);
        Context.current().heartbeat();
        bundle = Bundle.fromZip(zip, maxBundleBytes(deps));
      } catch (err) {
        const failure = itemFailure(err, { step: 'export', item, envId: input.envId });
        log.error(`${item}: ${failure.error}`);
        return { item: failedBackupItem(input.dashboardId, failure), store: s.location };
      }
      const dashboardFile = bundle.of('dashboards')[0];
      if (!dashboardFile) {
        const failure: ItemFailure = {
          step: 'export',
          error: `Superset's export of dashboard ${input.dashboardId} holds no dashboard`,
          next_actions: [],
        };
        log.error(failure.error);
        return { item: failedBackupItem(input.dashboardId, failure), store: s.location };
      }
      const c = dashboardFile.content;
      const title = typeof c.dashboard_title === 'string' ? c.dashboard_title : `dashboard ${input.dashboardId}`;
      // Row-level security is kept beside the export (no export carries it); the stored zip then holds it too.
      let rlsRules = 0;
      try {
        const upstream = await upstreamFor(deps, input.envId);
        rlsRules = await attachRules(upstream, bundle, await indexes.get(`${taskId}:${input.envId}`, upstream, { kinds: ['dataset'] }));
      } catch (err) {
        const failure = itemFailure(err, { step: 'rls', item: `the row-level-security rules of ${item}`, envId: input.envId });
        log.error(`${item}: ${failure.error}`);
        return { item: { ...failedBackupItem(input.dashboardId, failure), title }, store: s.location };
      }
      if (rlsRules) {
        zip = bundle.toZip();
        log.info(`dashboard ${input.dashboardId}: kept ${rlsRules} row-level-security rule(s) on its datasets`);
      }
      const hash = bundle.contentHash();
      const { row } = await backups.record(s, {
        taskId,
        envId: input.envId,
        dashboardId: input.dashboardId,
        dashboardUuid: typeof c.uuid === 'string' ? c.uuid : null,
        title,
        slug: typeof c.slug === 'string' && c.slug ? c.slug : null,
        contentHash: hash,
        chartCount: chartUuidsOf(dashboardFile).length,
        bytes: zip,
      });
      log.info(
        row.deduplicated
          ? `dashboard ${input.dashboardId} ('${title}') is unchanged since an earlier backup: recorded backup ${row.id}, stored nothing new (sha256 ${hash.slice(0, 12)}…)`
          : `dashboard ${input.dashboardId} ('${title}'): stored ${formatBytes(row.size)} with ${row.chart_count} chart(s) as backup ${row.id} (sha256 ${hash.slice(0, 12)}…) in ${s.location}`,
      );
      return { item: { ...itemOf(row), rls_rules: rlsRules }, store: s.location };
    },

    /**
     * One dashboard of a backup task: backs it up, records its item in `task_items` at its
     * position and writes the task's progress, all here, so the workflow gets a brief answer and
     * spends one activity per dashboard. A retry finds the item of an earlier attempt and answers it.
     */
    async backupDashboardOfTask(input: { envId: string; dashboardId: number; position: number; total: number }): Promise<BackupItemBrief> {
      const taskId = currentTaskId();
      const brief = (item: BackupItem, store: string): BackupItemBrief => ({
        status: item.status,
        deduplicated: item.deduplicated,
        store,
        ...(item.error ? { error: item.error } : {}),
      });
      const earlier = await items.get<BackupItem>(taskId, input.position);
      if (earlier) return brief(earlier, backupStore().location);
      const r = await activities.backupDashboard(input);
      const item = await items.record(taskId, input.position, input.dashboardId, r.item);
      const progress = { done: input.position + 1, total: input.total, message: `dashboard ${input.dashboardId}: ${item.status}` };
      await deps.stores.tasks.setProgress(taskId, progress);
      Context.current().log.info(progressLogLine(progress));
      return brief(item, r.store);
    },

    /** Prunes the backed-up dashboards' backups past the retention policy, with blobs nothing references any more. */
    async applyBackupRetention(input: { envId: string; dashboardIds: number[] }): Promise<RetentionOutcome> {
      const { log } = Context.current();
      const policy = { keep: deps.config.BACKUP_RETENTION_COUNT, maxAgeDays: deps.config.BACKUP_RETENTION_DAYS };
      const { pruned, skippedOtherStore } = await backups.prune(backupStore(), input, policy);
      for (const p of pruned) {
        log.info(
          `retention: removed backup ${p.id} of dashboard ${p.dashboard_id} from ${new Date(p.created_at).toISOString()}${p.blob_deleted ? ' and its blob (no other backup used it)' : ' (its content is still used by another backup)'}`,
        );
      }
      if (skippedOtherStore)
        log.warn(`retention: ${skippedOtherStore} expired backup(s) live in a store that is no longer configured; left as they are`);
      const blobs = pruned.filter((p) => p.blob_deleted).length;
      log.info(
        `retention (keep ${policy.keep} per dashboard${policy.maxAgeDays ? `, at most ${policy.maxAgeDays} days old` : ''}): removed ${pruned.length} backup(s) and ${blobs} blob(s)`,
      );
      return {
        policy: { keep: policy.keep, max_age_days: policy.maxAgeDays ?? null },
        pruned: pruned.length,
        blobs_deleted: blobs,
        skipped_other_store: skippedOtherStore,
      };
    },

    /**
     * Imports a stored backup with overwrite into its environment. Idempotent: importing the same
     * bundle again converges to the same state (Superset matches every object by UUID).
     */
    async restoreBackup(input: RestoreInput): Promise<RestoreItem> {
      const { log } = Context.current();
      const backup = await backups.get(input.backupId);
      if (!backup) {
        failItem({
          step: 'read_backup',
          error: `backup ${input.backupId} does not exist (any more)`,
          next_actions: [
            {
              action: 'list_backups',
              description: "List the dashboard's backups and restore one that exists",
              request: { method: 'GET', path: `/api/dashboards/${input.dashboardId}/backups?env_id=${input.envId}`, body: null },
            },
          ],
        });
      }
      const base: RestoreItem = {
        kind: 'dashboard',
        id: backup.dashboard_id,
        title: backup.dashboard_title,
        status: 'failed',
        outcome: 'failed',
        next_actions: [],
        backup_id: backup.id,
        dashboard_uuid: backup.dashboard_uuid,
        restored_dashboard_id: null,
      };
      const fail = (failure: ItemFailure): RestoreItem => {
        log.error(`restore of backup ${backup.id}: ${failure.error}`);
        return { ...base, ...failure };
      };
      const s = backupStore();
      if (backup.store_kind !== s.kind) {
        return fail({
          step: 'read_backup',
          error: `backup ${backup.id} lives in the ${backup.store_kind} store, but the ${s.kind} store is configured now`,
          next_actions: [],
        });
      }
      let zip: Uint8Array;
      let bundle: Bundle;
      try {
        zip = await s.get(backup.content_hash);
        bundle = Bundle.fromZip(zip, maxBundleBytes(deps));
      } catch (err) {
        if (err instanceof BlobNotFoundError) return fail({ step: 'read_backup', error: err.message, next_actions: [] });
        return fail(itemFailure(err, { step: 'read_backup', item: `backup ${backup.id}`, envId: input.envId }));
      }
      if (bundle.contentHash() !== backup.content_hash) {
        return fail({
          step: 'read_backup',
          error: `the stored bundle of backup ${backup.id} does not match its content hash ${backup.content_hash}: it was altered or corrupted`,
          next_actions: [],
        });
      }
      const uuid = String(bundle.of('dashboards')[0]?.content.uuid ?? backup.dashboard_uuid);
      // The rules the backup kept, out of what Superset imports.
      const rules = takeRules(bundle);
      if (rules.length) zip = bundle.toZip();
      const scope = bundle.of('datasets').map((f) => String(f.content.uuid));

      const at = { step: 'check' };
      try {
        const upstream = await upstreamFor(deps, input.envId);
        const before = await upstream.findDashboard(uuid);
        const blockers = await findRestoreBlockers(bundle, upstream);
        if (blockers.length) {
          for (const b of blockers) log.error(`restore blocked: ${b.detail}`);
          return {
            ...base,
            step: 'check',
            restored_dashboard_id: before?.id ?? null,
            error: `restoring would take over objects that now belong to something else: ${blockers.map((b) => b.detail).join('; ')}`,
            next_actions: blockers.map((b) => b.next_action),
          };
        }
        const rlsIndex = rules.length ? await TargetIndex.build(upstream, { kinds: ['dataset'] }) : undefined;
        const missing = rlsIndex ? await missingRoles(rlsIndex, rules) : [];
        if (missing.length) {
          const names = missing.map((n) => `'${n}'`).join(', ');
          log.error(`restore blocked: the environment has no role ${names}, which the backed-up row-level-security rules name`);
          return {
            ...base,
            step: 'check',
            code: 'rls_role_missing',
            restored_dashboard_id: before?.id ?? null,
            error: `the environment has no role ${names}, which the backup's row-level-security rules name; nothing was imported`,
            next_actions: [
              {
                action: 'create_role',
                description: `Create role ${names} in Superset (Settings → List Roles), then restore again`,
                request: { method: 'POST', path: `/api/dashboards/backups/${backup.id}/restore`, body: {} },
              },
            ],
          };
        }
        log.info(
          `importing backup ${backup.id} of '${backup.dashboard_title}' (${formatBytes(backup.size)}) with overwrite${before ? ` over dashboard ${before.id}` : ' (the dashboard no longer exists: re-creating it)'}`,
        );
        Context.current().heartbeat();
        at.step = 'import';
        await upstream.importBundle('dashboard', zip, true);
        at.step = 'verify';
        const after = await upstream.findDashboard(uuid);
        if (!after) {
          return fail({ step: 'verify', error: `Superset accepted the import but dashboard ${uuid} is not in the environment`, next_actions: [] });
        }
        const charts = await upstream.dashboardCharts(after.id);
        log.info(`restored '${backup.dashboard_title}' as dashboard ${after.id} with ${charts.length} chart(s)`);
        const restored = { ...base, restored_dashboard_id: after.id, recreated: !before, charts: charts.length };
        if (rlsIndex) {
          at.step = 'rls';
          try {
            await rlsIndex.refresh(); // datasets the import re-created
            const writes = await writeRules({ upstream, index: rlsIndex, rules, scope });
            log.info(`row-level security put back: ${writes.map((w) => `${w.action} '${w.rule}'`).join(', ')}`);
            return { ...restored, status: 'restored', outcome: 'succeeded', rls: { rules: rules.length, writes } };
          } catch (err) {
            const failure = itemFailure(err, { step: 'rls', item: `the row-level-security rules of '${backup.dashboard_title}'`, envId: input.envId });
            const error = `restored as dashboard ${after.id}, but its row-level-security rules were not put back: ${failure.error}`;
            log.error(`restore of backup ${backup.id}: ${error}`);
            return { ...restored, ...failure, error };
          }
        }
        return { ...restored, status: 'restored', outcome: 'succeeded' };
      } catch (err) {
        return fail(itemFailure(err, { step: at.step, item: `dashboard '${backup.dashboard_title}'`, envId: input.envId }));
      }
    },
  };
  return activities;
}

function itemOf(row: BackupRow): BackupItem {
  return {
    kind: 'dashboard',
    id: row.dashboard_id,
    title: row.dashboard_title,
    status: 'succeeded',
    outcome: 'succeeded',
    next_actions: [],
    backup_id: row.id,
    content_hash: row.content_hash.trim(),
    deduplicated: row.deduplicated,
    size: row.size,
    charts: row.chart_count,
  };
}


function formatBytes(n: number): string {
  return n < 1024 ? `${n} B` : n < 1024 * 1024 ? `${(n / 1024).toFixed(1)} KB` : `${(n / 1024 / 1024).toFixed(1)} MB`;
}
