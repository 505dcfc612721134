/** The git_deploy task: a dashboard's repository at a pinned commit, imported into an environment. */
import type { VerificationMode } from './browser-check.ts';
import type { CompanionKindReport, CompanionRequest } from './companions.ts';
import type { ItemOutcome, ItemsResult } from './outcomes.ts';
import type { ApprovalOutcome, TaskApproval } from './tasks.ts';
import type { PairSettings } from './env-rules.ts';

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
  /** The commit's companion files applied per kind as in a migration (contracts/companions.ts); absent: the defaults. */
  companions?: CompanionRequest;
  /** The environment the repository was synced from when the deploy was requested (absent in older inputs). */
  syncedEnvId?: string | null;
  /** The rules and saved mappings from that environment to the target, frozen at request: what the deploy applies. */
  frozen?: PairSettings;
  /** A preview (git_preview): plan against the target and compare the companions, import nothing. */
  dryRun?: boolean;
  /** Started by a merged pull request: its row (git_pull_requests), which gets a comment with the result. */
  pullRequestId?: string;
  /** With pullRequestId: where the comment's link to the task points. */
  linkBase?: string;
}

/**
 * The git_preview task: what a pull request's head commit would do to the target (a dry-run
 * deploy), the verdicts of its charts where the branch was synced from, the pull request's body
 * written from both, and the `switchyard/preview` commit status.
 */
export interface GitPreviewInput {
  pullRequestId: string;
  dashboardUuid: string;
  /** The dashboard's id in envId, the environment the branch shows. */
  dashboardId: number;
  envId: string;
  targetEnvId: string;
  /** The head commit, pinned when the preview was requested. */
  commit: string;
  requestedBy: string | null;
  verification?: VerificationMode;
  syncedEnvId?: string | null;
  frozen?: PairSettings;
  /** Where the status's link and the body's links point (the Switchyard the request came to). */
  linkBase: string;
}

/** Marks where Switchyard's part of a pull request's body starts (what comes before it is the person's own text). */
export const PREVIEW_BODY_MARKER = '<!-- switchyard:preview -->';

/** The commit status context Switchyard posts on a pull request's head commit. */
export const PREVIEW_STATUS_CONTEXT = 'switchyard/preview';
/** The content validator's last verdict of the dashboard in the pull request's target, when one exists. */
export const VALIDATION_STATUS_CONTEXT = 'switchyard/validation';

/** The environment whose rules apply to a deploy: the one the repository was synced from, unless that is the target. */
export function deployRulesFrom(syncedEnvId: string | null, targetEnvId: string): string | null {
  return syncedEnvId && syncedEnvId !== targetEnvId ? syncedEnvId : null;
}

export interface GitDeployItem extends ItemOutcome {
  kind: 'repository';
  id: string;
  dashboard_uuid: string;
  commit: string;
  target_env_id: string;
  /** The target's dashboard: the one deployed, or (a preview) the one the deploy would replace; null when there is none. */
  target_dashboard_id: number | null;
  /** What the migration path did, object by object (create, update, reuse, unchanged). */
  objects?: unknown[];
  database_mappings?: unknown[];
  collisions?: unknown[];
  /** The per-environment rules applied, as in a migration's outcome. */
  env_rules?: unknown[];
  dropped_fields?: unknown[];
  verification?: unknown;
  /** The commit's companions compared with the target and applied, per kind, as in a migration's outcome. */
  companions?: CompanionKindReport[];
  /** Why no companions were compared (a commit made before they were kept). */
  companions_note?: string;
}

export interface GitDeployResult extends ItemsResult<GitDeployItem> {
  dashboard_uuid: string;
  commit: string;
  target_env_id: string;
  approval: ApprovalOutcome;
}

/** What the repository's sync asks the worker: the dashboard's companions read as files (domain/migration/companions/capture.ts). */
export interface GitCompanionsInput {
  envId: string;
  dashboardId: number;
  subject: {
    dashboardUuid: string;
    title: string;
    /** dataset uuid → its database's uuid, as the bundle's dataset files say. */
    datasetDatabases: Record<string, string>;
  };
}

/** The companion files (path → YAML) and, per kind, `captured` or why the environment would not show it. */
export interface GitCompanionsCapture {
  files: Record<string, string>;
  kinds: Record<string, string>;
}

/** The workflow type the sync runs (workflows/git-companions.ts). */
export const GIT_COMPANIONS_WORKFLOW = 'gitCompanionsWorkflow';
