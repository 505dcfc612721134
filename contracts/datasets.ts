/** Dataset tasks (column mapping, LLM documentation): the workflows' inputs and results. */
import type { ItemOutcome, ItemsResult } from './outcomes.ts';
import type { TaskApproval } from './tasks.ts';

/** Where a column dictionary comes from. */
export type DictionarySource =
  /** A query run through the environment's SQL Lab; null `sql`: each dataset's column comments from the database catalog. */
  | { type: 'sqllab'; databaseId: number; sql: string | null; schema: string | null; catalog: string | null }
  /** An uploaded workbook, stored at upload and read by id. */
  | { type: 'xlsx'; dictionaryId: string };

export interface MapColumnsInput {
  /** Set by the task service when the task writes into a protected environment. */
  approval?: TaskApproval;
  envId: string;
  datasetIds: number[];
  source: DictionarySource;
  dryRun: boolean;
  /** Replace labels and descriptions that already hold a value (default: fill only empty ones). */
  overwrite: boolean;
  /** A dry-run task whose plan was reviewed: a dataset that changed since that dry run read it is a conflict. */
  reviewedTaskId: string | null;
  /** Dashboards using the datasets when the task was created (task filters, search). */
  dashboardIds: number[];
}

/** One field as it was and as it is to be (or was made). */
export interface DatasetFieldChange {
  target: 'dataset' | 'column';
  column_id: number | null;
  column_name: string | null;
  field: 'verbose_name' | 'description';
  before: string | null;
  after: string | null;
}

/** One dataset of a column mapping; `id` is its id in the environment. */
export interface MapColumnsItem extends ItemOutcome {
  kind: 'dataset';
  id: number;
  status: 'updated' | 'planned' | 'unchanged' | 'conflict' | 'failed';
  /** The fields changed (or, in a dry run, to be changed), with the values they replace. */
  changes: DatasetFieldChange[];
  /** Fields left as they were because they already hold a value (overwrite is off). */
  kept: DatasetFieldChange[];
  unmatched: { dictionary: string[]; dataset: string[] };
  /** The change record to undo (`POST /api/datasets/changes/{change_id}/undo`). */
  change_id: string | null;
  /** Hash of the dataset as read: a later run with `reviewed_task_id` compares against it. */
  fingerprint: string | null;
  /** What else moved in the dataset during the write (empty when only the intended fields did). */
  unexpected?: string[];
}

export interface MapColumnsResult extends ItemsResult<MapColumnsItem> {
  env_id: string;
  dry_run: boolean;
  source: { type: 'sqllab' | 'xlsx'; database_id?: number; dictionary_id?: string; default_query?: boolean };
  totals: {
    requested: number;
    updated: number;
    planned: number;
    unchanged: number;
    conflict: number;
    failed: number;
    fields_changed: number;
  };
}

export type DocsLanguage = 'en' | 'ru';

export interface LlmDocsInput {
  envId: string;
  datasetIds: number[];
  /** A stored provider's id, or `default` (the LLM_* variables). Its key is read inside the activity. */
  providerId: string;
  language: DocsLanguage;
  dashboardIds: number[];
}

export interface Tokens {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

/** One dataset of a documentation task. */
export interface LlmDocsItem extends ItemOutcome {
  kind: 'dataset';
  id: number;
  status: 'suggested' | 'failed';
  /** Suggestions stored for review (`GET /api/datasets/{id}/suggestions`). */
  suggestions: number;
  tokens: Tokens;
  duration_ms: number;
  /** Calls made to the provider (retries included). */
  attempts: number;
  sample_values_sent: boolean;
}

export interface LlmDocsResult extends ItemsResult<LlmDocsItem> {
  env_id: string;
  provider: { id: string; name: string; model: string };
  language: DocsLanguage;
  prompt_version: string;
  totals: { requested: number; suggested: number; failed: number; suggestions: number; tokens: Tokens; duration_ms: number };
}

/**
 * The `dataset_change` task: accepting suggestions or undoing a change in a protected environment,
 * where a write waits for another person's approval (in other environments the API writes at once).
 */
export interface DatasetChangeInput {
  envId: string;
  datasetId: number;
  operation:
    | { type: 'accept'; items: Array<{ suggestion_id: string; value?: string; overwrite: boolean }> | null }
    | { type: 'undo'; changeId: string; force: boolean };
  /** The person the write is recorded for. */
  actor: { id: string | null; username: string | null };
  approval?: TaskApproval;
}

export interface DatasetChangeItem extends ItemOutcome {
  kind: 'dataset';
  id: number;
  status: 'applied' | 'unchanged' | 'conflict' | 'not_undoable' | 'failed';
  /** The write into Superset (undo it with `POST /api/datasets/changes/{change_id}/undo`). */
  change_id: string | null;
  /** accept: what was accepted and what was skipped and why. */
  accepted?: unknown[];
  skipped?: unknown[];
  /** undo: the change it undid. */
  undone_change_id?: string | null;
}

export interface DatasetChangeResult extends ItemsResult<DatasetChangeItem> {
  env_id: string;
  operation: 'accept' | 'undo';
}
