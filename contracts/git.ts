/** The git_deploy task: a dashboard's repository at a pinned commit, imported into an environment. */
import type { VerificationMode } from './browser-check.ts';
import type { ItemOutcome, ItemsResult } from './outcomes.ts';
import type { ApprovalOutcome, TaskApproval } from './tasks.ts';

export interface GitDeployInput {
  dashboardUuid: string;
  /** The dashboard id in envId the request named (for filters and the retry request). */
  dashboardId: number;
  envId: string;
  targetEnvId: string;
  /** The full commit id, pinned when the request was accepted. */
  commit: string;
  overwrite: boolean;
  dbMappings: Array<{ database_name?: string; database_uuid?: string; target_database_id: number }>;
  /** The requesting person's user id (older runs carry it in `approval` only). */
  requestedBy?: string | null;
  /** Set by the task service when the target is protected (older runs carry `required: false`). */
  approval?: TaskApproval;
  /** `browser`: after the chart queries, the deployed dashboard is opened in headless Chromium beside envId's. Absent: `queries`. */
  verification?: VerificationMode;
}

export interface GitDeployItem extends ItemOutcome {
  kind: 'repository';
  id: string;
  dashboard_uuid: string;
  commit: string;
  target_env_id: string;
  target_dashboard_id: number | null;
  /** What the migration path did, object by object (create, update, reuse, unchanged). */
  objects?: unknown[];
  database_mappings?: unknown[];
  collisions?: unknown[];
  /** The per-environment rules applied, as in a migration's outcome. */
  env_rules?: unknown[];
  dropped_fields?: unknown[];
  verification?: unknown;
}

export interface GitDeployResult extends ItemsResult<GitDeployItem> {
  dashboard_uuid: string;
  commit: string;
  target_env_id: string;
  approval: ApprovalOutcome;
}
