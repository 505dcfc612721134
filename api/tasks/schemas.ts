import { z } from 'zod';
import { ANSWER_ITEMS_LIMIT, resultForAnswer } from '../../contracts/task-answer.ts';
import { TASK_TYPES } from '../../contracts/task-kinds.ts';
import { TASK_STATUSES, type TaskApproval } from '../../contracts/tasks.ts';
import type { PairSettings } from '../../contracts/env-rules.ts';
import type { TaskRecord } from '../../db/tasks/store.ts';
import { pairSettingsView } from '../env-rules/frozen-view.ts';
import { csv, pageEnvelope, pagination } from '../http/schemas.ts';
import { itemsSummary } from './item-schemas.ts';
import { LOG_LEVELS, LOG_SOURCES, decodeCursor } from './log-entry.ts';

export const taskIdParams = z.object({ task_id: z.string().min(1).max(200) });

export const taskView = z.object({
  id: z.string(),
  task_id: z.string(),
  type: z.enum(TASK_TYPES),
  status: z.enum(TASK_STATUSES),
  user_id: z.string().nullable().describe('owner'),
  owner_username: z.string().nullable(),
  env_ids: z.array(z.string()),
  dashboard_ids: z.array(z.string()),
  params: z.record(z.string(), z.unknown()),
  summary: z.string().nullable().describe('what the task does, in words (also the workflow summary in the Temporal console)'),
  details: z.string().nullable(),
  progress: z.object({ done: z.number(), total: z.number(), message: z.string().optional() }).nullable(),
  result: z
    .unknown()
    .describe(
      `What the task produced; an item-by-item task's \`items\` are here in full up to ${ANSWER_ITEMS_LIMIT}, beyond that left out (\`items_omitted: true\`, \`items_total\`, \`items_url\`). Details: docs/tasks.md#field-result-of-a-task.`,
    ),
  error: z.object({ message: z.string(), type: z.string().optional(), details: z.unknown().optional() }).nullable(),
  created_at: z.string(),
  started_at: z.string().nullable(),
  finished_at: z.string().nullable(),
  updated_at: z.string(),
  temporal: z.object({ workflow_id: z.string(), run_id: z.string().nullable(), ui_url: z.string().optional() }),
  approval: z
    .object({
      env_id: z.string().nullable().describe('the protected environment the task writes into'),
      timeout_seconds: z.number(),
      decision: z
        .enum(['approve', 'reject', 'timeout'])
        .nullable()
        .describe('null while it waits (status AWAITING_APPROVAL) or before it started'),
      by: z.string().nullable(),
      comment: z.string().nullable(),
      decided_at: z.string().nullable(),
      settings: pairSettingsView
        .nullable()
        .describe(
          'what the approver approves besides the request: the rules and saved database mappings the task will apply (null: a kind that applies none, or a task requested before they were frozen)',
        ),
    })
    .nullable()
    .describe(
      'Present when the task writes into a protected environment: it waits for another person (POST /api/tasks/{task_id}/approve or /reject)',
    ),
  items_summary: itemsSummary
    .nullable()
    .optional()
    .describe(
      'In the answer of GET /api/tasks/{task_id} only: counts of its items, durations and bulk actions (null for tasks without items)',
    ),
});
export type TaskView = z.infer<typeof taskView>;

/** The task as an answer carries it; `itemsLimit`: how many items it may carry in full (contracts/task-answer.ts). */
export function toTaskView(t: TaskRecord, uiUrl?: string, itemsLimit = ANSWER_ITEMS_LIMIT): TaskView {
  const iso = (d: Date | null) => (d ? new Date(d).toISOString() : null);
  return {
    id: t.id,
    task_id: t.id,
    type: t.type,
    status: t.status,
    user_id: t.owner_id,
    owner_username: t.owner_username,
    env_ids: t.env_ids,
    dashboard_ids: t.dashboard_ids,
    params: t.params,
    summary: t.summary,
    details: t.details,
    progress: t.progress,
    result: resultForAnswer(t.id, t.result ?? null, itemsLimit),
    error: t.error,
    created_at: iso(t.created_at)!,
    started_at: iso(t.started_at),
    finished_at: iso(t.finished_at),
    updated_at: iso(t.updated_at)!,
    temporal: { workflow_id: t.id, run_id: t.workflow_run_id, ...(uiUrl ? { ui_url: uiUrl } : {}) },
    approval: approvalView(t),
  };
}

/** The gate as the task service set it (in the workflow's input) with the decision the row keeps. */
function approvalView(t: TaskRecord): TaskView['approval'] {
  const input = t.workflow_input as { approval?: TaskApproval; frozen?: PairSettings } | null;
  const gate = input?.approval;
  if (!gate?.required) return null;
  return {
    env_id: gate.envId ?? null,
    timeout_seconds: gate.timeoutSeconds,
    decision: t.approval?.decision ?? null,
    by: t.approval?.by ?? null,
    comment: t.approval?.comment ?? null,
    decided_at: t.approval?.decided_at ?? null,
    settings: input?.frozen ?? null,
  };
}

export const taskListQuery = z.object({
  ...pagination,
  task_type: z.enum(TASK_TYPES).optional(),
  type: z.enum(TASK_TYPES).optional().describe('alias of task_type'),
  status: z.enum(TASK_STATUSES).optional(),
  owner: z.string().max(200).optional().describe('owner username or user id'),
  env_id: z.string().max(200).optional(),
  dashboard_id: z.string().max(200).optional(),
});

export const taskList = pageEnvelope(taskView);

export const logQuery = z.object({
  limit: z.coerce
    .number()
    .int('limit must be an integer')
    .min(1, 'limit must be at least 1')
    .max(1000, 'limit must be at most 1000')
    .default(200),
  level: csv(z.enum(LOG_LEVELS)).describe('comma-separated levels'),
  source: csv(z.enum(LOG_SOURCES)).describe('comma-separated sources'),
  text: z.string().max(500).optional().describe('case-insensitive substring'),
  after: z
    .string()
    .optional()
    .refine((v) => v === undefined || decodeCursor(v) !== undefined, 'after must be a cursor returned by this endpoint')
    .describe('cursor: return entries after this one'),
});

export const logEntryView = z.object({
  id: z.string().describe('cursor of this entry'),
  ts: z.string(),
  level: z.enum(LOG_LEVELS),
  source: z.enum(LOG_SOURCES),
  message: z.string(),
  activity_type: z.string().optional(),
  attempt: z.number().optional(),
  attrs: z.record(z.string(), z.unknown()).optional(),
});

export const logPage = z.object({
  items: z.array(logEntryView),
  next_cursor: z.string().nullable(),
  has_more: z.boolean(),
  history: z.enum(['ok', 'not_started', 'unavailable']).describe('whether Temporal history could be merged in'),
});

export const logStats = z.object({
  total: z.number(),
  by_level: z.record(z.string(), z.number()),
  by_source: z.record(z.string(), z.number()),
  first_at: z.string().nullable(),
  last_at: z.string().nullable(),
  duration_ms: z.number().nullable(),
  log_span_ms: z.number(),
  history: z.enum(['ok', 'not_started', 'unavailable']),
});

export const selfcheckBody = z
  .object({
    sleep_seconds: z.number().int().min(0).max(600).default(0),
    fail: z.enum(['none', 'retryable', 'non_retryable']).default('none'),
    fail_attempts: z.number().int().min(1).max(5).default(2),
  })
  .strict();

export const taskAccepted = z.object({ task_id: z.string(), status: z.enum(TASK_STATUSES) });
