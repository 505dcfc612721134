import { Context } from '@temporalio/activity';
import type { RetentionOutcome } from '../../contracts/backup.ts';
import type { ActivityDeps } from '../deps.ts';

/** Prunes the backed-up dashboards' backups past the retention policy, with blobs nothing references any more. */
export async function applyBackupRetention(
  deps: ActivityDeps,
  input: { envId: string; dashboardIds: number[] },
): Promise<RetentionOutcome> {
  const { log } = Context.current();
  const policy = { keep: deps.config.BACKUP_RETENTION_COUNT, maxAgeDays: deps.config.BACKUP_RETENTION_DAYS };
  const { pruned, skippedOtherStore } = await deps.stores.backups.prune(deps.backupStore(), input, policy);
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
}
