/** The dataset_launch task: a reviewed dataset's labels and descriptions written into Superset, and its previewed query saved. */
import type { ItemOutcome, ItemsResult } from './outcomes.ts';
import type { TaskApproval } from './tasks.ts';

export interface DatasetLaunchInput {
  /** Set by the task service when the task writes into a protected environment. */
  approval?: TaskApproval;
  sessionId: string;
  envId: string;
  datasetId: number;
  datasetName: string;
  /** Column labels and descriptions as reviewed (metrics are documented, not written). */
  columns: Array<{ column_name: string; verbose_name: string | null; description: string | null }>;
  savedQuery: { databaseId: number; label: string; sql: string; schema: string | null; catalog: string | null; description: string | null };
  launchedBy: { id: string | null; username: string };
  /** The session version the launch was accepted at. */
  sessionVersion: number;
  dashboardIds: number[];
}

export interface DatasetLaunchItem extends ItemOutcome {
  kind: 'dataset';
  id: number;
  status: 'updated' | 'unchanged' | 'conflict' | 'failed';
  change_id: string | null;
  fields_written: number;
  saved_query_id: number | null;
}

/** The audited handoff: what was written where, links into Superset, who launched it. */
export interface DatasetLaunchHandoff {
  session_id: string;
  session_version: number;
  launched_by: { id: string | null; username: string };
  launched_at: string;
  dataset: { id: number; name: string; url: string };
  change: { id: string; fields: number; undo: { method: 'POST'; path: string } } | null;
  saved_query: { id: number; label: string; url: string } | null;
  sqllab_url: string | null;
}

export interface DatasetLaunchResult extends ItemsResult<DatasetLaunchItem> {
  env_id: string;
  handoff: DatasetLaunchHandoff;
}
