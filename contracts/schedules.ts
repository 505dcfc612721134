/**
 * Schedules: recurring backups and drift reports, kept as Temporal Schedules. Each run of a
 * schedule is an ordinary task (a row in the task store, its workflow a child of the run).
 * Plain data only: the workflow sandbox imports this module.
 */
import type { CompanionKindName } from './companions.ts';
import type { OutcomeWarning } from './migration.ts';
import type { ItemOutcome, ItemsResult, NextAction } from './outcomes.ts';

export const SCHEDULE_KINDS = ['backup', 'drift_report', 'validate'] as const;
export type ScheduleKind = (typeof SCHEDULE_KINDS)[number];

export const OVERLAP_POLICIES = ['skip', 'buffer_one', 'allow_all'] as const;
export type OverlapPolicy = (typeof OVERLAP_POLICIES)[number];

/** When a schedule runs: a fixed interval, or cron expressions (UTC). */
export interface ScheduleSpec {
  interval_seconds?: number;
  cron?: string;
  overlap: OverlapPolicy;
  /** Runs missed while Temporal (or the worker) was away are run once if still within this window. */
  catchup_window_seconds: number;
}

/** Backups of chosen dashboards; none chosen = every dashboard of the environment at run time. */
export interface BackupScheduleParams {
  env_id: string;
  dashboard_ids?: number[];
}

export interface DriftScheduleParams {
  source_env_id: string;
  target_env_id: string;
}

/** A validation of one environment: a selection as the validate route takes it (none: every dashboard at run time). */
export interface ValidateScheduleParams {
  env_id: string;
  dashboard_ids?: number[];
  tag?: string;
  owner?: string;
  browser?: boolean;
}

export type ScheduleParams = BackupScheduleParams | DriftScheduleParams | ValidateScheduleParams;

/** The workflow each schedule's Temporal Schedule starts: not a task kind, it starts one (a child). */
export const SCHEDULED_RUN_WORKFLOW = 'scheduledRunWorkflow';

/** The scheduled workflow's only argument: the row is read at run time, so nothing secret or stale travels. */
export interface ScheduledRunInput {
  scheduleId: string;
}

/** One run of a schedule as Temporal knows it: its workflow id and the id of its (first) run. */
export interface ScheduledRunRef {
  workflowId: string;
  runId: string;
}

/**
 * The task id of one run of a schedule. Temporal names a schedule's runs by the action's workflow
 * id and the run's time to the second, so two runs within one second (two triggers, a trigger
 * beside a due run) share a workflow id; only the run id tells them apart. Without it the second
 * run's task would be the first's row, and the second run would report the first one's outcome.
 */
export function scheduledRunTaskId(kind: ScheduleKind, run: ScheduledRunRef | { workflowId: string; runId?: undefined }): string {
  // A run whose registering activity was scheduled before run ids were part of the id (its stored
  // input names only the workflow id) keeps the old id, so its retry finds the row it may have written.
  return run.runId ? `${kind}-${run.workflowId}-${run.runId}` : `${kind}-${run.workflowId}`;
}

/** What the registering activity is given: the run, or (scheduled by an older worker) only its workflow id. */
export type ScheduledRunRegistration = ScheduledRunInput & ({ run: ScheduledRunRef } | { runWorkflowId: string });

/** What one scheduled run registered and how its task ended. */
export interface ScheduledRunResult {
  schedule_id: string;
  task_id: string | null;
  status: string;
  note?: string;
}

export interface DriftReportInput {
  sourceEnvId: string;
  targetEnvId: string;
}

export interface DriftObject {
  kind: 'dashboard' | 'chart' | 'dataset' | 'database';
  name: string;
  uuid: string;
  /** update: differs in the target; create: missing there. */
  action: 'create' | 'update';
  differences: Array<{ field: string; source: unknown; target: unknown }>;
}

/**
 * A companion (contracts/companions.ts) that differs between source and target: what a migration
 * would create or update, or what it cannot carry (an owner's account, a role the target lacks).
 * What only the target has is not drift: copying never deletes it.
 */
export interface CompanionDrift {
  kind: CompanionKindName;
  /** Its name on both sides: a username, role, tag, report, layer, template, query label, theme. */
  name: string;
  /** What it belongs to, when not the dashboard itself: `chart 'Sales'`, `dataset 'orders'`. */
  on?: string;
  /** create: the target lacks it; update: both have it, `fields` differ; missing: the target lacks what it names. */
  action: 'create' | 'update' | 'missing';
  fields?: string[];
  /** What differs, in words. */
  difference: string;
  /** What brings it in line: migrating the dashboard again (its kind copied), or the step a person takes first. */
  next_action: NextAction;
}

/** A companion kind that was not compared: an environment does not offer it (themes before 6.0, ALERT_REPORTS off) or refused to show it. */
export interface CompanionKindNotCompared {
  kind: CompanionKindName;
  reason: string;
  /** What the source has of it that the target cannot hold (a theme into 5.0), each with its next action. */
  dropped: Array<{ name: string; note?: string; next_action?: NextAction }>;
}

/** One dashboard compared: `id` is its id in the source environment. */
export interface DriftItem extends ItemOutcome {
  kind: 'dashboard';
  id: number;
  /** in_sync, drifted (an object or a companion differs), or failed (could not be compared). */
  status: 'in_sync' | 'drifted' | 'failed';
  dashboard_uuid: string | null;
  target_dashboard_id: number | null;
  differences: DriftObject[];
  /** Companions that differ (absent in reports from before they were compared). */
  companions?: CompanionDrift[];
  /** Companion kinds not compared, named as such: never drift, never in sync. */
  companions_not_compared?: CompanionKindNotCompared[];
  /** What the comparison could not check, with what to do (a catalog the target would not show). */
  warnings?: OutcomeWarning[];
}

export interface DriftReportResult extends ItemsResult<DriftItem> {
  source_env_id: string;
  target_env_id: string;
  totals: { compared: number; in_sync: number; drifted: number; failed: number };
}
