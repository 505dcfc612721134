/**
 * The content validator (`validate` tasks): every dashboard of one environment (or a selection)
 * checked with the migration's chart checks, each chart's verdict said with its time, and what
 * broke since the last validation (first seen broken, last passed). Plain data only: the workflow
 * sandbox imports this module.
 */
import type { BrowserCheck } from './browser-check.ts';
import type { ChartCheckMethod } from './migration.ts';
import type { ItemOutcome, NextAction, OutcomeClass } from './outcomes.ts';

/** Which dashboards a validation checks; none given = every dashboard of the environment at run time. */
export interface ValidationSelection {
  dashboard_ids?: number[];
  /** A custom tag's exact name. */
  tag?: string;
  /** An owner's username in that Superset. */
  owner?: string;
}

export interface ValidateInput {
  envId: string;
  selection: ValidationSelection;
  /** Also open each dashboard in headless Chromium (the browser check). */
  browser: boolean;
  /**
   * Set only by the workflow when it continues as new: the dashboards not yet reached and where
   * the task stands. The items done live in `task_items`, never here.
   */
  continued?: { dashboardIds: number[]; state: ValidateRunState };
}

/** The little a validation carries from one workflow run to the next (counters, never items). */
export interface ValidateRunState {
  offset: number;
  requested: number;
  itemsPerRun: number;
  run: number;
  counts: Record<ValidationStatus, number>;
  newlyBroken: number;
  /** The first few broken or failed dashboards, for the task's error message (all are in the result). */
  firstFailures: string[];
}

/** A chart's verdict: it ran, Superset refused it (its own message: broken), or no faithful check could be made. */
export const CHART_VERDICTS = ['passed', 'broken', 'not_verifiable'] as const;
export type ChartVerdict = (typeof CHART_VERDICTS)[number];

/**
 * A dashboard's status: `broken` when a chart is proven broken (or the browser check saw one
 * fail); `passed` when every chart passed; `partly_verified` when none is broken and some could
 * not be checked; `not_verifiable` when none could; `failed` when the check itself could not run
 * (Superset unreachable or refusing the reads: its message, never a verdict on the charts).
 */
export const VALIDATION_STATUSES = ['passed', 'partly_verified', 'broken', 'not_verifiable', 'failed'] as const;
export type ValidationStatus = (typeof VALIDATION_STATUSES)[number];

export const VALIDATION_OUTCOME: Record<ValidationStatus, OutcomeClass> = {
  passed: 'succeeded',
  partly_verified: 'succeeded',
  broken: 'failed',
  not_verifiable: 'skipped',
  failed: 'failed',
};

/** What the validator remembers of a dashboard or chart across validations (db/validation/verdicts.ts). */
export interface VerdictHistory {
  /** When the current run of broken verdicts began (null: not broken now). */
  first_seen_broken_at: string | null;
  /** The last validation that found it passing (null: never). */
  last_passed_at: string | null;
  /** Broken now, and not broken at the previous proven verdict (or never validated before). */
  newly_broken: boolean;
}

export interface ChartValidation extends VerdictHistory {
  id: number;
  name: string;
  viz_type: string;
  verdict: ChartVerdict;
  check: ChartCheckMethod | null;
  checked_at: string;
  rows?: number;
  /** Superset's own message, when it refused the chart's query. */
  error?: string;
  /** Why it could not be checked. */
  reason?: string;
}

/** One dashboard of a validation; `id` is its id in the environment. */
export interface ValidationItem extends ItemOutcome, VerdictHistory {
  kind: 'dashboard';
  id: number;
  status: ValidationStatus;
  checked_at: string;
  charts: ChartValidation[];
  totals: Record<ChartVerdict, number>;
  browser?: BrowserCheck;
  /** Recorded between the query check and the browser check; gone once the browser check is in. */
  awaiting_browser?: boolean;
}

/** What the per-dashboard activity answers the workflow: the item itself is in `task_items`. */
export interface ValidationBrief {
  status: ValidationStatus;
  newly_broken: boolean;
  title: string | null;
  error?: string;
  /** The queries are checked and the browser check is to run next (`browser: true`). */
  browser_pending?: boolean;
}

/** A type, not an interface: the workflow hands it on as a plain record. */
export type ValidateSummary = {
  env_id: string;
  selection: ValidationSelection;
  totals: Record<ValidationStatus, number> & { requested: number; newly_broken: number; not_started: number };
  not_started: number;
  cancelled: boolean;
  next_actions: NextAction[];
};

/** The request that validates these dashboards again. */
export function validateAgainAction(envId: string, dashboardIds: number[], description: string): NextAction {
  return {
    action: 'validate_again',
    description,
    request: { method: 'POST', path: `/api/environments/${encodeURIComponent(envId)}/validate`, body: { dashboard_ids: dashboardIds } },
  };
}

export function emptyCounts(): Record<ValidationStatus, number> {
  return { passed: 0, partly_verified: 0, broken: 0, not_verifiable: 0, failed: 0 };
}

/** A dashboard's status from its charts' verdicts (and the browser check's, when it ran). */
export function dashboardStatus(totals: Record<ChartVerdict, number>, browser?: Pick<BrowserCheck, 'verdict'>): ValidationStatus {
  if (totals.broken > 0 || browser?.verdict === 'failed') return 'broken';
  if (totals.not_verifiable === 0 && totals.passed > 0) return 'passed';
  if (totals.passed > 0) return 'partly_verified';
  return browser?.verdict === 'passes' ? 'passed' : 'not_verifiable';
}

/** A validation as a request names it (the route's body, a schedule's params, the assistant's words). */
export interface ValidateRequest extends ValidationSelection {
  browser?: boolean | undefined;
}

/** The one place a request becomes the task's input and its params (the route, schedules and the assistant). */
export function validateTask(envId: string, body: ValidateRequest): { input: ValidateInput; params: Record<string, unknown> } {
  const selection: ValidationSelection = {
    ...(body.dashboard_ids?.length ? { dashboard_ids: body.dashboard_ids } : {}),
    ...(body.tag ? { tag: body.tag } : {}),
    ...(body.owner ? { owner: body.owner } : {}),
  };
  const browser = body.browser === true;
  return { input: { envId, selection, browser }, params: { env_id: envId, ...selection, ...(browser ? { browser } : {}) } };
}
