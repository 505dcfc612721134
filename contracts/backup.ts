/** Backups of dashboards and their restore: the workflows' inputs and results. */
import type { ItemFailure } from './failures.ts';
import type { ItemOutcome, ItemsResult } from './outcomes.ts';
import type { RlsWrite } from './rls.ts';

export interface BackupInput {
  envId: string;
  dashboardIds: number[];
}

/** One dashboard of a backup; `id` is its id in the environment. */
export interface BackupItem extends ItemOutcome {
  kind: 'dashboard';
  id: number;
  status: 'succeeded' | 'failed';
  backup_id: string | null;
  content_hash: string | null;
  /** True when an earlier backup already held this exact content: no new blob was stored. */
  deduplicated: boolean;
  size?: number;
  charts?: number;
  /** Row-level-security rules on its datasets kept with the backup (`row_level_security.yaml` in the stored bundle). */
  rls_rules?: number;
}

export interface RetentionOutcome {
  policy: { keep: number; max_age_days: number | null };
  pruned: number;
  blobs_deleted: number;
  skipped_other_store: number;
  error?: string;
}

export interface BackupResult extends ItemsResult<BackupItem> {
  env_id: string;
  store: string;
  totals: { requested: number; succeeded: number; failed: number; deduplicated: number; not_started: number };
  retention: RetentionOutcome | null;
}

export interface RestoreInput {
  backupId: string;
  envId: string;
  /** The dashboard the backup holds (its id where the backup was taken). */
  dashboardId: number;
}

/** The dashboard a restore brought back; `id` is the dashboard id the backup was taken from. */
export interface RestoreItem extends ItemOutcome {
  kind: 'dashboard';
  id: number | null;
  status: 'restored' | 'failed';
  backup_id: string;
  dashboard_uuid: string | null;
  /** The dashboard's id in the environment after the restore (a new id when it had been deleted). */
  restored_dashboard_id: number | null;
  /** True when the dashboard did not exist any more and was re-created. */
  recreated?: boolean;
  charts?: number;
  /** The row-level-security rules the backup kept, put back by name (roles by name, tables on the restored datasets). */
  rls?: { rules: number; writes: RlsWrite[] };
}

export interface RestoreResult extends ItemsResult<RestoreItem> {
  backup_id: string;
  env_id: string;
  restored_dashboard_id: number | null;
}

/** A dashboard that could not be backed up, with why (the activity and the workflow both end items this way). */
export function failedBackupItem(dashboardId: number, failure: ItemFailure): BackupItem {
  return {
    kind: 'dashboard',
    id: dashboardId,
    title: null,
    status: 'failed',
    outcome: 'failed',
    backup_id: null,
    content_hash: null,
    deduplicated: false,
    ...failure,
  };
}
