/** Dashboard migration between two environments: the workflow's input and result. */
import type { CompanionKindReport, CompanionRequest } from './companions.ts';
import type { ItemFailure } from './failures.ts';
import type { ItemOutcome, ItemsResult, NextAction, ObjectAction } from './outcomes.ts';
import type { EnvRuleEffect } from './env-rules.ts';
import type { RlsMode, RlsReport } from './rls.ts';
import type { BrowserCheck, VerificationMode } from './browser-check.ts';
import type { TaskApproval } from './tasks.ts';
import type { PairSettings } from './env-rules.ts';

/** The migration's `verification` option: the check's mode, or `if_changed` (queries, and an unchanged dashboard carries its last verification). */
export type MigrationVerification = VerificationMode | 'if_changed';

export interface MigrationInput {
  /** Set by the task service when the task writes into a protected environment. */
  approval?: TaskApproval;
  sourceEnvId: string;
  targetEnvId: string;
  dashboardIds: number[];
  /** source database id → target database id; overrides the persisted mappings for this run. */
  dbMappings: Array<{ source_database_id: number; target_database_id: number }>;
  overwrite: boolean;
  dryRun: boolean;
  /** Row-level security: strict (a difference fails the dashboard, the default), copy or ignore. Absent in inputs from before it existed: strict. */
  rls?: RlsMode;
  /** With rls copy: a same-named target rule that differs is replaced by the source's even where that may widen access (default false: left as it is and named). */
  rlsOverwrite?: boolean;
  /**
   * `browser`: after the chart queries, each imported dashboard is opened in headless Chromium (contracts/browser-check.ts).
   * `if_changed`: an unchanged dashboard whose last verification passed carries it instead of its target being checked again.
   * Absent: `queries` (an unchanged dashboard's target side is checked again).
   */
  verification?: MigrationVerification;
  /** Companion assets (reports, owners, roles, tags, annotation layers, CSS templates, saved queries, certification): a mode per kind, defaults in contracts/companions.ts. Absent in inputs from before they existed: the defaults. */
  companions?: CompanionRequest;
  /** The pair's rules and saved database mappings, frozen when the task was created: what a run applies (absent in older inputs). */
  frozen?: PairSettings;
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
  action: ObjectAction;
  target_id?: number | null;
  differences?: Array<{ field: string; source: unknown; target: unknown }>;
  note?: string;
}

/**
 * How a chart of a migrated dashboard fared, judged the same way in the source and the target:
 * passes; broken_by_migration (runs in the source, not in the target: the only class that fails
 * a dashboard); failing_in_source (fails in the source too: reported, not the migration's fault);
 * not_verifiable (no faithful check, or Superset did not answer; with the reason).
 */
export type ChartClassification = 'passes' | 'broken_by_migration' | 'failing_in_source' | 'not_verifiable';

/** How a chart's query was run: its saved query context, the legacy explore endpoint, or a query built from its form_data. */
export type ChartCheckMethod = 'saved_query_context' | 'legacy_api' | 'form_data';

/** One chart of a verification; `ok` is false only when the migration broke it (results from before classification: when its query failed). */
export interface ChartVerification {
  id: number;
  name: string;
  ok: boolean;
  rows?: number;
  /** The target's error, when its check failed there. */
  error?: string;
  uuid?: string;
  viz_type?: string;
  check?: ChartCheckMethod;
  classification?: ChartClassification;
  /** Why it is classified so (not_verifiable, or an answer whose columns differ from the source's). */
  reason?: string;
  /** The source's error, when the chart fails there too. */
  source_error?: string;
}

export interface Verification {
  ok: boolean;
  dashboard_present: boolean;
  charts_expected: number;
  charts_linked: number;
  charts: ChartVerification[];
  /** Charts per classification (absent in results from before it). */
  classes?: Record<ChartClassification, number>;
  /** The browser check's result, when the request asked for `verification: "browser"`. */
  browser?: BrowserCheck;
  /** How long the verification took (chart queries included). */
  duration_ms?: number;
}

/**
 * What a dashboard's verification in this task is: `verified` by this task (when, and what was
 * checked: what it imported, or the target side of a dashboard it found unchanged, the source's
 * verdicts reused by content); `carried` from an earlier task's verification that passed (which
 * task, when, and why it was not made again); `not_verified` (why: a dry run, a skip, a failure
 * before the import, a verification that did not finish).
 */
export type VerificationState =
  | { state: 'verified'; at: string | null; task_id: string | null; checked: 'imported' | 'unchanged_target' }
  | { state: 'carried'; from_task_id: string | null; at: string | null; reason: string }
  | { state: 'not_verified'; reason: string };

/** What a target's record says of a dashboard's last verification there (db/dashboard-migration/store.ts). */
export interface RecordedVerification {
  verification: 'passed' | 'failed' | null;
  verified_at: Date | string | null;
  verified_task_id: string | null;
  task_id: string | null;
}

/**
 * The one decider of what an unchanged dashboard's verification is: carried from the record when
 * the request says `if_changed` and that verification passed; otherwise null, and its target side
 * is checked again (the default: the target may have changed under it, a table dropped, a column
 * renamed, which neither export shows; and a dashboard never verified has nothing to carry).
 */
export function carriedVerification(
  mode: MigrationInput['verification'],
  last: RecordedVerification,
): Extract<VerificationState, { state: 'carried' }> | null {
  if (mode !== 'if_changed' || last.verification !== 'passed') return null;
  const at = last.verified_at === null ? null : new Date(last.verified_at).toISOString();
  const from = last.verified_task_id ?? last.task_id;
  return {
    state: 'carried',
    from_task_id: from,
    at,
    reason: `verification "if_changed": unchanged in the source and the target since task ${from ?? '?'}'s verification passed${at ? ` at ${at}` : ''}; not checked again`,
  };
}

/** An item's verification state as the result shows it: its own, else told from its status (items recorded before states existed included). */
export function verificationStateOf(o: DashboardOutcome): VerificationState {
  if (o.verification_state) return o.verification_state;
  if (o.verification)
    return { state: 'verified', at: null, task_id: null, checked: o.status === 'unchanged' ? 'unchanged_target' : 'imported' };
  const reasons: Partial<Record<MigrationStatus, string>> = {
    planned: 'a dry run imports and verifies nothing',
    skipped: 'skipped: nothing was imported, nothing verified',
    failed: `failed${o.step ? ` at step ${o.step}` : ''} before it could be verified`,
  };
  return { state: 'not_verified', reason: reasons[o.status] ?? 'its verification did not finish' };
}

/** One field dropped from a bundle file. */
export interface FieldInstance {
  file: string;
  /** What the file describes, e.g. `dataset "sales"`. */
  object: string;
  /** Dotted path, list positions as numbers: columns.0.datetime_format. */
  field: string;
}

/**
 * Fields dropped on import, aggregated by the kind of object and the field with its list
 * positions as `*`: "field `columns.*.datetime_format` of datasets dropped from 328 columns" is
 * one entry with count 328 and a few examples. Results from before it hold one entry per field
 * (no `count`, no `examples`).
 */
export interface FieldAggregate {
  /** The kind of object, from the bundle's folder: database, dataset, chart, dashboard. */
  kind: string;
  field: string;
  count: number;
  examples: FieldInstance[];
}

export interface DefaultedAggregate extends FieldAggregate {
  /** The value the target's defaults gave (the first example's). */
  value: unknown;
  examples: Array<FieldInstance & { value: unknown }>;
}

/** Examples kept per aggregated field. */
const FIELD_EXAMPLES = 3;

/** Dropped (or defaulted) fields aggregated by kind and field pattern, in first-seen order. */
export function aggregateFields(list: Array<FieldInstance & { value: unknown }>): DefaultedAggregate[];
export function aggregateFields(list: FieldInstance[]): FieldAggregate[];
export function aggregateFields(list: Array<FieldInstance & { value?: unknown }>): Array<FieldAggregate & { value?: unknown }> {
  const out = new Map<string, FieldAggregate & { value?: unknown }>();
  for (const f of list) {
    const kind = (f.file.split('/')[0] ?? '').replace(/s$/, '');
    const field = f.field.replace(/(^|\.)\d+(?=\.|$)/g, '$1*');
    const key = `${kind}\u0000${field}`;
    const entry = out.get(key) ?? { kind, field, count: 0, examples: [], ...('value' in f ? { value: f.value } : {}) };
    entry.count++;
    if (entry.examples.length < FIELD_EXAMPLES) entry.examples.push({ ...f });
    out.set(key, entry);
  }
  return [...out.values()];
}

/**
 * Something a step could not check though the dashboard goes on (a target database's catalogs it
 * was refused): named with the step and what to do, so a check never passes for what it has not seen.
 */
export interface OutcomeWarning {
  step: string;
  /** A stable word for the cause: catalog_not_checked. */
  code: string;
  message: string;
  next_actions: NextAction[];
}

/**
 * unchanged: the target already holds exactly what the import would write, and nobody changed it there since: not imported.
 * unchanged_with_errors: unchanged, but its target side, checked again, fails (a table dropped or a column renamed there since).
 */
export type MigrationStatus =
  'imported' | 'unchanged' | 'unchanged_with_errors' | 'imported_with_errors' | 'planned' | 'skipped' | 'failed';

/** One dashboard of a migration; `id` is its id in the source environment. */
export interface DashboardOutcome extends ItemOutcome {
  kind: 'dashboard';
  id: number;
  status: MigrationStatus;
  target_dashboard_id: number | null;
  dashboard_uuid: string | null;
  /** Everything this migration did or would do, object by object. */
  objects: ObjectPlan[];
  database_mappings: Array<{ source: string; target: string; target_id: number }>;
  collisions: Array<{ kind: string; detail: string; resolution: string }>;
  /** Fields the target rejected and the import dropped, one entry per kind of object and field (list positions as `*`). */
  dropped_fields: FieldAggregate[];
  /** Fields the target's importer required and the (older) source did not export, filled with the target release's defaults; aggregated alike. */
  defaulted_fields: DefaultedAggregate[];
  learned_rejections: RejectionRule[];
  chart_uuids: string[];
  verification?: Verification;
  /** Whether this task verified it, carried an earlier verification, or did not verify it, and why (absent in results from before it). */
  verification_state?: VerificationState;
  import_attempts: number;
  reused_previous_import?: boolean;
  /** Unchanged since the last migration, but that one's verification failed: imported and verified again. */
  reverified_after_failure?: boolean;
  /** The row-level-security rules on its datasets in both environments, and what was done about a difference. */
  rls?: RlsReport;
  /** What the dashboard's companions are on both sides, per kind, and what was done about them. */
  companions?: CompanionKindReport[];
  /** Each per-environment rule of the pair and what it changed in this dashboard's bundle (absent when the pair has none). */
  env_rules?: EnvRuleEffect[];
  /** What a step could not check though the dashboard went on (absent when nothing). */
  warnings?: OutcomeWarning[];
}

export interface MigrationResult extends ItemsResult<DashboardOutcome> {
  /** How long the migration itself and the verification of what it imported took (absent in results from before). */
  timings?: MigrationTimings;
  dry_run: boolean;
  source_env_id: string;
  target_env_id: string;
  totals: Record<
    | 'requested'
    | 'processed'
    | 'imported'
    | 'unchanged'
    | 'unchanged_with_errors'
    | 'imported_with_errors'
    | 'planned'
    | 'skipped'
    | 'failed'
    | 'not_started',
    number
  >;
}

/** How each migration status reads for a person. */
export const MIGRATION_OUTCOME: Record<MigrationStatus, ItemOutcome['outcome']> = {
  imported: 'succeeded',
  unchanged: 'succeeded',
  unchanged_with_errors: 'failed',
  imported_with_errors: 'failed',
  planned: 'planned',
  skipped: 'skipped',
  failed: 'failed',
};

/** A dashboard that failed before its activity could say more than the failure itself. */
export function failedDashboardOutcome(id: number, failure: ItemFailure): DashboardOutcome {
  return {
    kind: 'dashboard',
    id,
    title: null,
    status: 'failed',
    outcome: 'failed',
    target_dashboard_id: null,
    dashboard_uuid: null,
    objects: [],
    database_mappings: [],
    collisions: [],
    dropped_fields: [],
    defaulted_fields: [],
    learned_rejections: [],
    chart_uuids: [],
    import_attempts: 0,
    ...failure,
  };
}

/**
 * A batch of a migration task, as the workflow hands it to its activity: the request without its
 * dashboard list (which can be long, and would be copied into every activity's history entry),
 * the batch with each dashboard's place in the request, and where the task's progress stands.
 */
export interface MigrationBatchInput extends Omit<MigrationInput, 'dashboardIds'> {
  batch: Array<{ id: number; position: number }>;
  /** Most dashboards this batch imports: planning stops once it holds this many to import; the rest wait for the next batch. */
  importLimit: number;
  learnedRejections: RejectionRule[];
  /**
   * The dashboards the next batch will read after those this one leaves waiting (at most a
   * batch's worth): the batch exports them from the source while it imports, for the next batch.
   */
  upcoming?: number[];
  /** Dashboards with an outcome before this batch, and in the whole request (for progress). */
  doneBefore: number;
  total: number;
}

/**
 * What the workflow needs of a batch to go on (the outcomes themselves are recorded in
 * PostgreSQL): the dashboards that got their outcome; the others of the batch wait for the next.
 */
export interface MigrationBatchResult {
  items: Array<{
    id: number;
    position: number;
    status: MigrationStatus;
    target_dashboard_id: number | null;
    dashboard_uuid: string | null;
    /** Imported by this batch: the hash of what was imported, recorded with the target's state after verification. */
    planned_hash?: string;
    /** Unchanged, with no verification carried: its target side is verified again (the workflow sends it to the verification). */
    reverify?: boolean;
  }>;
  learned: RejectionRule[];
  /** The next batch may read RERUN_BATCH dashboards (contracts/migration-batching.ts widensNext); absent in results from before wide rerun batches. */
  widen?: boolean;
}

export interface VerifyBatchInput {
  sourceEnvId: string;
  targetEnvId: string;
  dashboards: Array<{
    sourceDashboardId: number;
    position: number;
    targetDashboardId: number;
    dashboardUuid: string;
    /** The imported bundle's hash (recorded as the target's state); absent for an unchanged dashboard, whose record stands. */
    plannedHash?: string;
    /** Unchanged: only its target side is checked again (nothing imported, nothing recorded but the verification). */
    unchanged?: boolean;
  }>;
}

export interface FinishMigrationInput extends Omit<MigrationInput, 'dashboardIds'> {
  requested: number;
  cancelled: boolean;
  timings?: MigrationTimings;
}

/**
 * Wall time of a migration's phases: exporting, planning and importing until the last batch
 * returned; then the verification's time after that (each batch's verification runs beside the
 * next batch, so only what is left after the last import is counted here; results from before
 * that rule counted the whole verification, which ran after the imports).
 */
export interface MigrationTimings {
  migration_ms: number;
  verification_ms: number;
}

/** The workflow's own result: the totals (the items are in the task's result, assembled from PostgreSQL). */
export interface MigrationSummary {
  status: 'SUCCEEDED' | 'FAILED' | 'CANCELLED';
  message: string | null;
  totals: MigrationResult['totals'];
  cancelled: boolean;
}

/** Rejections learned from the target, merged (one per kind and field). */
export function mergeRules(a: RejectionRule[], b: RejectionRule[]): RejectionRule[] {
  const all = new Map([...a, ...b].map((r) => [`${r.kind}:${r.field}`, r]));
  return [...all.values()];
}

/** The task's result from its recorded outcomes (in request order). */
export function summariseMigration(input: FinishMigrationInput, outcomes: DashboardOutcome[]): MigrationResult {
  const count = (...s: DashboardOutcome['status'][]) => outcomes.filter((o) => s.includes(o.status)).length;
  const failed = outcomes.filter((o) => o.outcome === 'failed' || MIGRATION_OUTCOME[o.status] === 'failed').map((o) => o.id);
  return {
    dry_run: input.dryRun,
    source_env_id: input.sourceEnvId,
    target_env_id: input.targetEnvId,
    totals: {
      requested: input.requested,
      processed: outcomes.length,
      imported: count('imported'),
      unchanged: count('unchanged'),
      unchanged_with_errors: count('unchanged_with_errors'),
      imported_with_errors: count('imported_with_errors'),
      planned: count('planned'),
      skipped: count('skipped'),
      failed: count('failed'),
      not_started: input.requested - outcomes.length,
    },
    cancelled: input.cancelled,
    ...(input.timings ? { timings: input.timings } : {}),
    items: outcomes.map((o) => ({ ...o, verification_state: verificationStateOf(o) })),
    not_started: input.requested - outcomes.length,
    next_actions: failed.length
      ? [
          migrateAgainAction(
            'retry_failed',
            `Retry the ${failed.length} failed dashboard(s) with one call once their causes are fixed`,
            input,
            failed,
            input.overwrite,
          ),
        ]
      : [],
  };
}

/** A next action that migrates these dashboards again, with the request ready to send. */
export function migrateAgainAction(
  action: string,
  description: string,
  pair: Pick<MigrationInput, 'sourceEnvId' | 'targetEnvId' | 'rls' | 'companions'>,
  dashboardIds: number[],
  overwrite: boolean,
): NextAction {
  return {
    action,
    description,
    request: {
      method: 'POST',
      path: '/api/dashboards/migrate',
      body: {
        source_env_id: pair.sourceEnvId,
        target_env_id: pair.targetEnvId,
        dashboard_ids: dashboardIds,
        overwrite,
        ...(pair.rls && pair.rls !== 'strict' ? { rls: pair.rls } : {}),
        ...(pair.companions && Object.keys(pair.companions).length ? { companions: pair.companions } : {}),
      },
    },
  };
}
