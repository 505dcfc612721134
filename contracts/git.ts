/** The git_deploy task: a dashboard's repository at a pinned commit, imported into an environment. */
import type { ItemOutcome, ItemsResult } from './outcomes.ts';

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
  approval: { required: boolean; requestedBy: string | null; timeoutSeconds: number };
}

/** What an approver sends (a Temporal update to the waiting workflow). */
export interface ApprovalDecision {
  decision: 'approve' | 'reject';
  userId: string | null;
  username: string;
  comment?: string;
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
  dropped_fields?: unknown[];
  verification?: unknown;
}

export interface GitDeployResult extends ItemsResult<GitDeployItem> {
  dashboard_uuid: string;
  commit: string;
  target_env_id: string;
  approval: { required: boolean; decision: 'approve' | 'reject' | 'timeout' | null; by: string | null; comment: string | null };
}

export const APPROVAL_UPDATE = 'decideApproval';
