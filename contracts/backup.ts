/** Backups of dashboards and their restore: the workflows' inputs and results. */
import type { CompanionKindReport } from './companions.ts';
import type { ItemFailure } from './failures.ts';
import type { ItemOutcome, ItemsResult } from './outcomes.ts';
import type { RlsWrite } from './rls.ts';
import type { TaskApproval } from './tasks.ts';

export interface BackupInput {
  envId: string;
  dashboardIds: number[];
  /**
   * Set only by the workflow when it continues as new: where the task stands. `dashboardIds`
   * then holds the dashboards not yet reached; the items done live in `task_items`, never here.
   */
  continued?: BackupRunState;
}

/** The little a backup carries from one workflow run to the next (counters, never items). */
export interface BackupRunState {
  /** Dashboards of the task handled by earlier runs: the position of this run's first one. */
  offset: number;
  requested: number;
  itemsPerRun: number;
  /** Workflow runs so far, this one included. */
  run: number;
  store: string;
  succeeded: number;
  failed: number;
  deduplicated: number;
  /** The first few failures, for the task's error message (all of them are in the result). */
  firstFailures: string[];
  retention: RetentionTotals | null;
}

/** Retention summed over the runs of a backup (each run prunes the dashboards it backed up). */
export interface RetentionTotals {
  /** From the first run that pruned; null while none did. */
  policy: RetentionOutcome['policy'] | null;
  pruned: number;
  blobs_deleted: number;
  skipped_other_store: number;
  /** Runs whose pruning failed, and the first failure's message. */
  failed_runs: number;
  error: string | null;
}

/** What the per-dashboard activity of a backup task answers: the item itself is in `task_items`. */
export interface BackupItemBrief {
  status: BackupItem['status'];
  deduplicated: boolean;
  store: string;
  /** For the task's error message when it failed. */
  error?: string;
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
  /** Companions kept beside the bundle (owners, roles, tags, reports, annotation layers, CSS templates, saved queries, certification), each item counted. */
  companions?: number;
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

/** What the backup workflow itself returns: its result without the items (those the task row gets from `task_items`). */
export type BackupSummary = Omit<BackupResult, 'items'>;

export interface RestoreInput {
  /** Set by the task service when the task writes into a protected environment. */
  approval?: TaskApproval;
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
  /** The companions the backup kept, put back by name, per kind (as a migration's outcome lists them). */
  companions?: CompanionKindReport[];
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
