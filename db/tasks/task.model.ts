import { Model } from 'objection';

export const TASK_TYPES = [
  'migration',
  'backup',
  'restore',
  'map_columns',
  'llm_docs',
  'git_deploy',
  'dataset_launch',
  'release_check',
  'selfcheck',
] as const;
export type TaskType = (typeof TASK_TYPES)[number];

export const TASK_STATUSES = ['PENDING', 'RUNNING', 'SUCCEEDED', 'FAILED', 'CANCELLED', 'AWAITING_APPROVAL'] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];
export const TERMINAL_STATUSES: readonly TaskStatus[] = ['SUCCEEDED', 'FAILED', 'CANCELLED'];
/** Statuses a task can still leave; every transition is a conditional update on one of these. */
export const OPEN_STATUSES: readonly TaskStatus[] = ['PENDING', 'RUNNING', 'AWAITING_APPROVAL'];

export interface TaskProgress {
  done: number;
  total: number;
  message?: string;
}

export class TaskModel extends Model {
  static override tableName = 'tasks';
  static override get jsonAttributes() {
    return ['params', 'progress', 'result', 'error', 'workflow_input'];
  }

  declare id: string;
  declare type: TaskType;
  declare status: TaskStatus;
  declare owner_id: string | null;
  declare owner_username: string | null;
  declare env_ids: string[];
  declare dashboard_ids: string[];
  declare params: Record<string, unknown>;
  declare progress: TaskProgress | null;
  declare result: unknown;
  declare error: { message: string; type?: string; details?: unknown } | null;
  declare idempotency_key: string | null;
  declare workflow_type: string;
  declare workflow_input: unknown;
  declare workflow_run_id: string | null;
  declare start_attempts: number;
  declare created_at: Date;
  declare started_at: Date | null;
  declare finished_at: Date | null;
  declare updated_at: Date;
}
