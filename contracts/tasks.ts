/**
 * What a task is, as the API, the workflows, the activities and the task store all see it.
 * Plain data and pure functions only: the workflow sandbox imports this module.
 */
export const TASK_TYPES = [
  'migration',
  'backup',
  'restore',
  'map_columns',
  'llm_docs',
  'git_deploy',
  'dataset_launch',
  'release_check',
  'release_publish',
  'drift_report',
  'selfcheck',
] as const;
export type TaskType = (typeof TASK_TYPES)[number];

export const TASK_STATUSES = ['PENDING', 'RUNNING', 'SUCCEEDED', 'FAILED', 'CANCELLED', 'AWAITING_APPROVAL'] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];
export const TERMINAL_STATUSES: readonly TaskStatus[] = ['SUCCEEDED', 'FAILED', 'CANCELLED'];
/** Statuses a task can still leave; every transition is a conditional update on one of these. */
export const OPEN_STATUSES: readonly TaskStatus[] = ['PENDING', 'RUNNING', 'AWAITING_APPROVAL'];
export type FinalStatus = 'SUCCEEDED' | 'FAILED' | 'CANCELLED';

/**
 * Most dashboards one backup or migration task takes: its items live outside the workflow's
 * history (task_items) and its runs continue as new, so this bounds the request, not the history.
 */
export const MAX_DASHBOARDS_PER_TASK = 10_000;

export interface TaskProgress {
  done: number;
  total: number;
  message?: string;
}

/** Why a task as a whole failed or stopped (per-item failures live in the result's items). */
export interface TaskError {
  message: string;
  type?: string;
  details?: unknown;
}
