import { ApplicationFailure, Context } from '@temporalio/activity';
import { getBackup, pruneBackups, recordBackup, type BackupRow } from '../../db/backups/repository.ts';
import { createBackupStore, BlobNotFoundError, type BackupStore } from '../../lib/backup-store/index.ts';
import { Bundle } from '../../lib/bundles/bundle.ts';
import { chartUuidsOf } from '../../lib/bundles/rewrite.ts';
import { AppError } from '../../lib/errors.ts';
import { SupersetApiError, SupersetNotFoundError, SupersetUnavailableError } from '../../lib/superset/errors.ts';
import type { BackupItem, RestoreInput, RestoreItem, RetentionOutcome } from '../../contracts/backup.ts';
import type { ActivityDeps } from '../deps.ts';
import { currentTaskId } from '../task-context.ts';
import { findRestoreBlockers } from './restore-checks.ts';

/**
 * Backup, retention and restore. The store is built once per worker from the configuration
 * (a directory, or the S3 bucket when BACKUP_S3_BUCKET is set).
 */
export function createBackupActivities(deps: ActivityDeps & { backupStore?: BackupStore }) {
  let store: BackupStore | undefined = deps.backupStore;
  const backupStore = () => (store ??= createBackupStore(deps.config));

  return {
    /**
     * Exports one dashboard and stores it. A Superset outage is thrown (Temporal retries it); a
     * refusal (no such dashboard, no permission) is returned as this dashboard's failure.
     */
    async backupDashboard(input: { envId: string; dashboardId: number }): Promise<{ item: BackupItem; store: string }> {
      const { log } = Context.current();
      const taskId = currentTaskId();
      const s = backupStore();
      const previous = await deps.knex<BackupRow>('backups').where({ task_id: taskId, dashboard_id: input.dashboardId }).first();
      if (previous) {
        log.info(`dashboard ${input.dashboardId} was already backed up by an earlier attempt of this task (backup ${previous.id})`);
        return { item: itemOf(previous), store: s.location };
      }

      let zip: Uint8Array;
      try {
        const upstream = await deps.superset(input.envId);
        log.info(`exporting dashboard ${input.dashboardId}`);
        zip = await upstream.exportDashboards([input.dashboardId]);
      } catch (err) {
        if (err instanceof SupersetUnavailableError) {
          log.warn(`Superset unavailable while exporting dashboard ${input.dashboardId}: ${err.message} (will retry)`);
          throw err;
        }
        if (err instanceof AppError) {
          const item = failed(input.dashboardId, err);
          if (err instanceof SupersetNotFoundError) {
            item.error = `dashboard ${input.dashboardId} does not exist in environment ${input.envId} (or its service account cannot see it)`;
            item.next_actions = [
              {
                action: 'check_dashboard_id',
                description: 'List the dashboards of the environment to find the right id',
                request: { method: 'GET', path: `/api/dashboards?env_id=${input.envId}`, body: null },
              },
            ];
          }
          log.error(err instanceof SupersetNotFoundError ? item.error! : `dashboard ${input.dashboardId}: ${item.error}`);
          return { item, store: s.location };
        }
        throw err;
      }
      Context.current().heartbeat();

      let bundle: Bundle;
      try {
        bundle = Bundle.fromZip(zip);
      } catch (err) {
        const message = `Superset's export of dashboard ${input.dashboardId} is not a readable bundle: ${(err as Error).message}`;
        log.error(message);
        return { item: { ...failed(input.dashboardId), error: message }, store: s.location };
      }
      const dashboardFile = bundle.of('dashboards')[0];
      if (!dashboardFile) {
        const message = `Superset's export of dashboard ${input.dashboardId} holds no dashboard`;
        log.error(message);
        return { item: { ...failed(input.dashboardId), error: message }, store: s.location };
      }
      const c = dashboardFile.content;
      const title = typeof c.dashboard_title === 'string' ? c.dashboard_title : `dashboard ${input.dashboardId}`;
      const hash = bundle.contentHash();
      const { row } = await recordBackup(deps.knex, s, {
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
      return { item: itemOf(row), store: s.location };
    },

    /** Prunes the backed-up dashboards' backups past the retention policy, with blobs nothing references any more. */
    async applyBackupRetention(input: { envId: string; dashboardIds: number[] }): Promise<RetentionOutcome> {
      const { log } = Context.current();
      const policy = { keep: deps.config.BACKUP_RETENTION_COUNT, maxAgeDays: deps.config.BACKUP_RETENTION_DAYS };
      const { pruned, skippedOtherStore } = await pruneBackups(deps.knex, backupStore(), input, policy);
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
      const backup = await getBackup(deps.knex, input.backupId);
      if (!backup) throw ApplicationFailure.nonRetryable(`backup ${input.backupId} does not exist (any more)`, 'BackupNotFound');
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
      const s = backupStore();
      if (backup.store_kind !== s.kind) {
        return { ...base, error: `backup ${backup.id} lives in the ${backup.store_kind} store, but the ${s.kind} store is configured now` };
      }
      let zip: Uint8Array;
      try {
        zip = await s.get(backup.content_hash);
      } catch (err) {
        if (err instanceof BlobNotFoundError) return { ...base, error: err.message };
        throw err;
      }
      const bundle = Bundle.fromZip(zip);
      if (bundle.contentHash() !== backup.content_hash) {
        return {
          ...base,
          error: `the stored bundle of backup ${backup.id} does not match its content hash ${backup.content_hash}: it was altered or corrupted`,
        };
      }
      const uuid = String(bundle.of('dashboards')[0]?.content.uuid ?? backup.dashboard_uuid);

      try {
        const upstream = await deps.superset(input.envId);
        const before = await upstream.findDashboard(uuid);
        const blockers = await findRestoreBlockers(bundle, upstream);
        if (blockers.length) {
          for (const b of blockers) log.error(`restore blocked: ${b.detail}`);
          return {
            ...base,
            restored_dashboard_id: before?.id ?? null,
            error: `restoring would take over objects that now belong to something else: ${blockers.map((b) => b.detail).join('; ')}`,
            next_actions: blockers.map((b) => b.next_action),
          };
        }
        log.info(
          `importing backup ${backup.id} of '${backup.dashboard_title}' (${formatBytes(backup.size)}) with overwrite${before ? ` over dashboard ${before.id}` : ' (the dashboard no longer exists: re-creating it)'}`,
        );
        Context.current().heartbeat();
        await upstream.importBundle('dashboard', zip, true);
        const after = await upstream.findDashboard(uuid);
        if (!after) return { ...base, error: `Superset accepted the import but dashboard ${uuid} is not in the environment` };
        const charts = await upstream.dashboardCharts(after.id);
        log.info(`restored '${backup.dashboard_title}' as dashboard ${after.id} with ${charts.length} chart(s)`);
        return { ...base, status: 'restored', outcome: 'succeeded', restored_dashboard_id: after.id, recreated: !before, charts: charts.length };
      } catch (err) {
        if (err instanceof SupersetUnavailableError) {
          log.warn(`Superset unavailable while restoring: ${err.message} (will retry)`);
          throw err;
        }
        if (err instanceof AppError) {
          log.error(`restore of backup ${backup.id}: ${err.message}`);
          const f = failed(backup.dashboard_id, err);
          return { ...base, error: f.error, upstream_error: f.upstream_error };
        }
        throw err;
      }
    },
  };
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

function failed(dashboardId: number, err?: AppError): BackupItem {
  const item: BackupItem = {
    kind: 'dashboard',
    id: dashboardId,
    title: null,
    status: 'failed',
    outcome: 'failed',
    next_actions: [],
    backup_id: null,
    content_hash: null,
    deduplicated: false,
  };
  if (!err) return item;
  item.error = err.message;
  if (err instanceof SupersetApiError) {
    item.upstream_error = {
      status: err.upstreamStatus,
      message: err.upstreamMessage,
      ...(err.errorType ? { type: err.errorType } : {}),
      ...(err.errors?.length ? { files: err.errors } : {}),
    };
  }
  return item;
}

function formatBytes(n: number): string {
  return n < 1024 ? `${n} B` : n < 1024 * 1024 ? `${(n / 1024).toFixed(1)} KB` : `${(n / 1024 / 1024).toFixed(1)} MB`;
}
