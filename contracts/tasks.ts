/**
 * What a task is, as the API, the workflows, the activities and the task store all see it.
 * Plain data and pure functions only: the workflow sandbox imports this module.
 */
// The task types (TASK_TYPES, TaskType) are the task-kind registry's names: contracts/task-kinds.ts.

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

/** The task-log line that announces a task's progress: the CLI draws its progress bar from it. */
export function progressLogLine(p: TaskProgress): string {
  return `progress ${p.done}/${p.total}${p.message ? `: ${p.message}` : ''}`;
}

/** A task-log line read back as progress, or null when it is another line. */
export function parseProgressLogLine(line: string): TaskProgress | null {
  const m = /^progress (\d+)\/(\d+)(?:: (.*))?$/.exec(line);
  return m ? { done: Number(m[1]), total: Number(m[2]), ...(m[3] !== undefined ? { message: m[3] } : {}) } : null;
}

/** Why a task as a whole failed or stopped (per-item failures live in the result's items). */
export interface TaskError {
  message: string;
  type?: string;
  details?: unknown;
}

/**
 * A task that writes into a protected environment waits for another person's decision before it
 * does anything. Decided once, when the task is created (see `approvalFor` in task-kinds.ts), and
 * carried in the workflow's input; `requestedBy` is the requesting person's user id.
 */
export interface TaskApproval {
  required: boolean;
  requestedBy: string | null;
  timeoutSeconds: number;
  /** The protected environment the task writes into. */
  envId?: string;
}

/** What an approver sends: a Temporal update to the waiting workflow. */
export interface ApprovalDecision {
  decision: 'approve' | 'reject';
  userId: string | null;
  username: string;
  comment?: string;
}

/** The update itself is `decideApprovalUpdate` (contracts/workflow-messages.ts). */

/** How a gated task's wait ended, as its row, answer and report show it. */
export interface ApprovalOutcome {
  required: boolean;
  decision: 'approve' | 'reject' | 'timeout' | null;
  by: string | null;
  comment: string | null;
}
