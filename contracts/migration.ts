/** Dashboard migration between two environments: the workflow's input and result. */
import type { ItemFailure } from './failures.ts';
import type { ItemOutcome, ItemsResult } from './outcomes.ts';
import type { RlsMode, RlsReport } from './rls.ts';

export interface MigrationInput {
  sourceEnvId: string;
  targetEnvId: string;
  dashboardIds: number[];
  /** source database id → target database id; overrides the persisted mappings for this run. */
  dbMappings: Array<{ source_database_id: number; target_database_id: number }>;
  overwrite: boolean;
  dryRun: boolean;
  /** Row-level security: strict (a difference fails the dashboard, the default), copy or ignore. Absent in inputs from before it existed: strict. */
  rls?: RlsMode;
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
  /** How long the verification took (chart queries included). */
  duration_ms?: number;
}

/** unchanged: the target already holds exactly what the import would write, and nobody changed it there since: not imported. */
export type MigrationStatus = 'imported' | 'unchanged' | 'imported_with_errors' | 'planned' | 'skipped' | 'failed';

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
  dropped_fields: Array<{ file: string; object: string; field: string }>;
  /** Fields the target's importer required and the (older) source did not export, filled with the target release's defaults. */
  defaulted_fields: Array<{ file: string; object: string; field: string; value: unknown }>;
  learned_rejections: RejectionRule[];
  chart_uuids: string[];
  verification?: Verification;
  import_attempts: number;
  reused_previous_import?: boolean;
  /** The row-level-security rules on its datasets in both environments, and what was done about a difference. */
  rls?: RlsReport;
}

export interface MigrationResult extends ItemsResult<DashboardOutcome> {
  dry_run: boolean;
  source_env_id: string;
  target_env_id: string;
  totals: Record<
    'requested' | 'processed' | 'imported' | 'unchanged' | 'imported_with_errors' | 'planned' | 'skipped' | 'failed' | 'not_started',
    number
  >;
}

/** How each migration status reads for a person. */
export const MIGRATION_OUTCOME: Record<MigrationStatus, ItemOutcome['outcome']> = {
  imported: 'succeeded',
  unchanged: 'succeeded',
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
