/**
 * Clean release: a named set of dashboards at pinned sources (a git commit, or a backup), bound for
 * a target environment, whose every source host is trusted, checked by a workflow, approved by a
 * second person, published by migration and revocable. Plain data only (the workflow sandbox
 * imports this module).
 */
import type { BrowserCheck, VerificationMode } from './browser-check.ts';
import type { ItemOutcome, ItemsResult } from './outcomes.ts';
import type { TaskApproval } from './tasks.ts';

export const CANDIDATE_STATES = [
  'draft',
  'prepared',
  'blocked',
  'checking',
  'checked',
  'check_failed',
  'approved',
  'rejected',
  'publishing',
  'published',
  'publish_failed',
  'revoking',
  'revoked',
] as const;
export type CandidateState = (typeof CANDIDATE_STATES)[number];

export type ReleaseSource = { kind: 'git'; dashboard_uuid: string; commit: string } | { kind: 'backup'; backup_id: string };

/**
 * An artifact built elsewhere (a CI job's export zip) and the git remote and commit it claims to
 * come from: `verified` when the registry trusts the remote's host and the commit there holds the
 * zip's content; otherwise `reason` says why not, and the artifact is a blocking violation.
 */
export interface BuiltSource {
  kind: 'built';
  remote: string;
  commit: string;
  /** The zip's sha256, as claimed and checked on import. */
  sha256: string;
  verified: boolean;
  reason: string | null;
}

/** Where a host appears: the artifact's file and the key path inside it. */
export interface HostOccurrence {
  host: string;
  /** `source` (the git remote or Superset environment it came from), `database` (a connection host) or `url` (a link, image or iframe in the content). */
  role: 'source' | 'database' | 'url';
  where: string;
}

export interface Violation {
  rule: string;
  mode: 'enforce' | 'warn';
  /** True for an enforced rule: it blocks the candidate. */
  blocking: boolean;
  artifact: string | null;
  host?: string;
  where?: string;
  message: string;
}

export const POLICY_RULES = [
  'trusted_sources',
  'trusted_database_hosts',
  'verified_in_staging',
  'accepted_llm_text',
  'dry_run_migration',
] as const;
export type PolicyRuleName = (typeof POLICY_RULES)[number];
export interface PolicyRule {
  rule: PolicyRuleName;
  mode: 'enforce' | 'warn';
  /** `verified_in_staging`: the environment every chart must already be in. */
  env_id?: string;
}

export interface CheckOutcome {
  check: string;
  status: 'passed' | 'failed' | 'warned';
  detail: string;
  violations: Violation[];
}

export interface ReleaseCheckInput {
  candidateId: string;
  reportId: string;
}

export interface ReleaseCheckResult {
  candidate_id: string;
  report_id: string;
  passed: boolean;
  checks: CheckOutcome[];
}

/** A candidate's release workflow (one per candidate, `releaseWorkflowId`): not a task kind, started by name. */
export const RELEASE_WORKFLOW = 'releaseWorkflow';
/** The decisions sent to a candidate's release workflow as one Temporal update (`releaseDecisionUpdate`, contracts/workflow-messages.ts). */
export type ReleaseAction = 'approve' | 'reject' | 'publish' | 'revoke';
export interface ReleaseDecision {
  action: ReleaseAction;
  userId: string | null;
  username: string | null;
  comment?: string;
  /** A publish's verification (contracts/browser-check.ts); absent: `queries`. */
  verification?: VerificationMode;
}
export interface ReleaseDecisionOutcome {
  candidate_id: string;
  decision: ReleaseAction;
  state: CandidateState;
  by: string | null;
  at: string;
  comment: string | null;
  /** The task that publishes or revokes (publish, revoke). */
  task_id?: string;
}

export const releaseWorkflowId = (candidateId: string) => `release-${candidateId}`;

export interface ReleasePublishInput {
  candidateId: string;
  mode: 'publish' | 'revoke';
  targetEnvId: string;
  dashboardUuids: string[];
  /** Set by the task service when the task writes into a protected environment. */
  approval?: TaskApproval;
  /** `browser`: each published dashboard is also opened in the target's Superset in headless Chromium. Absent: `queries`. */
  verification?: VerificationMode;
}

export interface ReleaseItem extends ItemOutcome {
  kind: 'dashboard';
  id: string;
  status: 'published' | 'revoked' | 'removed' | 'failed';
  sha256: string | null;
  target_dashboard_id: number | null;
  /** The backup of what the publish replaced (null: the dashboard was new in the target). */
  backup_id: string | null;
  /** Publish: the target's re-export has the manifest's content digest. */
  verified?: boolean;
  /** When not verified: the files whose content differs in the target, and the keys that differ. */
  differences?: Array<{ path: string; keys: string[] }>;
  /** The browser check of the published dashboard (a publish asked with `verification: "browser"`). */
  browser?: BrowserCheck;
  /** The per-environment rules applied (from the artifact's environment to the target), as in a migration's outcome. */
  env_rules?: unknown[];
  /** The artifact's companion files compared with the target and applied, per kind, as in a migration's outcome. */
  companions?: unknown[];
  /** Why no companions were compared (an artifact from before they were kept, or from an export). */
  companions_note?: string;
}

export interface ReleasePublishResult extends ItemsResult<ReleaseItem> {
  candidate_id: string;
  mode: 'publish' | 'revoke';
}
