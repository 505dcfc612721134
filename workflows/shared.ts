/**
 * Definitions shared by the workflow sandbox and the Node side (API, worker): search attribute
 * keys, message definitions and workflow inputs. Nothing here may touch I/O.
 */
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

export const SA_TASK_TYPE = defineSearchAttributeKey('SwitchyardTaskType', SearchAttributeType.KEYWORD);
export const SA_TASK_OWNER = defineSearchAttributeKey('SwitchyardOwner', SearchAttributeType.KEYWORD);
export const SA_ENV_IDS = defineSearchAttributeKey('SwitchyardEnvIds', SearchAttributeType.KEYWORD_LIST);
export const SA_DASHBOARD_IDS = defineSearchAttributeKey('SwitchyardDashboardIds', SearchAttributeType.KEYWORD_LIST);

export const SEARCH_ATTRIBUTES = [SA_TASK_TYPE, SA_TASK_OWNER, SA_ENV_IDS, SA_DASHBOARD_IDS] as const;

/** Temporal's CLI spells the types in PascalCase. */
export function cliSearchAttributeFlags(): string[] {
  const names: Record<string, string> = { KEYWORD: 'Keyword', KEYWORD_LIST: 'KeywordList' };
  return SEARCH_ATTRIBUTES.flatMap((k) => ['--search-attribute', `${k.name}=${names[k.type]}`]);
}

export interface SelfcheckInput {
  /** Seconds the sleep step lasts (heartbeating), so tests can kill a worker mid-task. */
  sleepSeconds: number;
  /** 'retryable': the fail step throws on its first `failAttempts` attempts, then passes. */
  fail: 'none' | 'retryable' | 'non_retryable';
  failAttempts: number;
}

export interface SelfcheckStepResult {
  step: string;
  ok: boolean;
  detail: string;
  attempt: number;
}

export interface MigrationInput {
  sourceEnvId: string;
  targetEnvId: string;
  dashboardIds: number[];
  /** source database id → target database id; overrides the persisted mappings for this run. */
  dbMappings: Array<{ source_database_id: number; target_database_id: number }>;
  overwrite: boolean;
  dryRun: boolean;
}

/** A key the target's Superset rejected, generalised over list positions (columns.*.datetime_format). */
export interface RejectionRule {
  kind: string;
  field: string;
}

export interface ObjectPlan {
  kind: 'dashboard' | 'chart' | 'dataset' | 'database';
  file: string;
  name: string;
  uuid: string;
  /** create: new in the target; update: exists and differs; unchanged: exists and equal; reuse: an existing target object is used as is. */
  action: 'create' | 'update' | 'unchanged' | 'reuse';
  target_id?: number | null;
  differences?: Array<{ field: string; source: unknown; target: unknown }>;
  note?: string;
}

export interface Verification {
  ok: boolean;
  dashboard_present: boolean;
  charts_expected: number;
  charts_linked: number;
  charts: Array<{ id: number; name: string; ok: boolean; rows?: number; error?: string }>;
}

export interface NextAction {
  action: string;
  description: string;
  request?: { method: string; path: string; body: unknown };
}

export interface DashboardOutcome {
  source_dashboard_id: number;
  title: string | null;
  status: 'imported' | 'imported_with_errors' | 'planned' | 'skipped' | 'failed';
  target_dashboard_id: number | null;
  dashboard_uuid: string | null;
  /** Everything this migration did or would do, object by object. */
  objects: ObjectPlan[];
  database_mappings: Array<{ source: string; target: string; target_id: number }>;
  collisions: Array<{ kind: string; detail: string; resolution: string }>;
  dropped_fields: Array<{ file: string; object: string; field: string }>;
  learned_rejections: RejectionRule[];
  chart_uuids: string[];
  verification?: Verification;
  error?: string;
  upstream_error?: unknown;
  next_actions: NextAction[];
  import_attempts: number;
  reused_previous_import?: boolean;
}

export interface MigrationResult {
  dry_run: boolean;
  source_env_id: string;
  target_env_id: string;
  totals: Record<
    'requested' | 'processed' | 'imported' | 'imported_with_errors' | 'planned' | 'skipped' | 'failed' | 'not_started',
    number
  >;
  cancelled: boolean;
  dashboards: DashboardOutcome[];
  next_actions: NextAction[];
}
