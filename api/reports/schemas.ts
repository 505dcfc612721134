import { z } from 'zod';
import { ANSWER_ITEMS_LIMIT } from '../../contracts/task-answer.ts';
import { TASK_TYPES } from '../../contracts/task-kinds.ts';
import { TASK_STATUSES } from '../../contracts/tasks.ts';
import { pagination } from '../http/schemas.ts';

export const reportListQuery = z.object({
  ...pagination,
  task_type: z
    .enum(TASK_TYPES, { error: `task_type must be one of ${TASK_TYPES.join(', ')}` })
    .optional()
    .describe('only reports of this task type (400 for an unsupported one)'),
  status: z.enum(TASK_STATUSES, { error: `status must be one of ${TASK_STATUSES.join(', ')}` }).optional(),
});

const summary = z.object({
  headline: z.string(),
  total: z.number().int(),
  succeeded: z.number().int(),
  failed: z.number().int(),
  skipped: z.number().int(),
  planned: z.number().int(),
  not_started: z.number().int(),
});

export const reportListItemView = z.object({
  report_id: z.string().describe('= the task id'),
  task_id: z.string(),
  task_type: z.enum(TASK_TYPES),
  status: z.enum(TASK_STATUSES),
  owner_username: z.string().nullable(),
  env_ids: z.array(z.string()),
  dashboard_ids: z.array(z.string()),
  created_at: z.string(),
  started_at: z.string().nullable(),
  finished_at: z.string().nullable(),
  duration_ms: z.number().nullable(),
  summary,
  has_failures: z.boolean(),
});

export const reportList = z
  .object({
    items: z.array(reportListItemView),
    total: z.number().int(),
    page: z.number().int(),
    page_size: z.number().int(),
    has_next: z.boolean(),
    applied_filters: z.object({ task_type: z.enum(TASK_TYPES).nullable(), status: z.enum(TASK_STATUSES).nullable() }),
  })
  .strict();

const request = z.object({ method: z.string(), path: z.string(), body: z.unknown() });

export const reportView = z.object({
  report: reportListItemView.extend({
    params: z.record(z.string(), z.unknown()),
    progress: z.object({ done: z.number(), total: z.number(), message: z.string().optional() }).nullable(),
    items: z
      .array(
        z
          .object({
            kind: z.string().describe('dashboard, dataset, repository, ...'),
            id: z.union([z.number(), z.string()]).nullable(),
            title: z.string().nullable(),
            status: z.string().describe("the task's own status word for this item"),
            outcome: z.enum(['succeeded', 'failed', 'skipped', 'planned']),
            error: z.string().nullable(),
          })
          .catchall(z.unknown()),
      )
      .optional()
      .describe(
        `one entry per item (dashboard, dataset, ...), with everything the task recorded for it; left out beyond ${ANSWER_ITEMS_LIMIT} items (items_omitted)`,
      ),
    items_omitted: z
      .literal(true)
      .optional()
      .describe(`present when the task has more than ${ANSWER_ITEMS_LIMIT} items: \`items\` is left out; page them from \`items_url\``),
    items_total: z.number().int().optional().describe('how many items the task has (with items_omitted)'),
    items_url: z
      .string()
      .optional()
      .describe("the task's items endpoint: GET it a page at a time, filtered by outcome or title (with items_omitted)"),
    item_diagnostics_omitted: z
      .number()
      .int()
      .optional()
      .describe(
        `with items_omitted: diagnostics about single items left out beyond the first ${ANSWER_ITEMS_LIMIT} (each item's own error is in its row of items_url)`,
      ),
    item_next_actions_omitted: z
      .number()
      .int()
      .optional()
      .describe(
        `with items_omitted: next actions of single items left out beyond the first ${ANSWER_ITEMS_LIMIT} (the task-level ones, such as retrying every failed item, stay)`,
      ),
    result: z.record(z.string(), z.unknown()).nullable().describe("the rest of the task's result (totals, retention ...)"),
    error: z.object({ message: z.string(), type: z.string().optional(), details: z.unknown().optional() }).nullable(),
    diagnostics: z
      .array(
        z.object({
          severity: z.enum(['error', 'warning', 'info']),
          where: z.record(z.string(), z.unknown()).describe('item, step or object'),
          message: z.string(),
          upstream_error: z.unknown().optional().describe("Superset's own answer"),
        }),
      )
      .describe('what failed, where, and the upstream error'),
    next_actions: z
      .array(
        z.object({
          action: z.string(),
          description: z.string(),
          item_id: z.union([z.number(), z.string()]).nullable().optional(),
          request: request.nullable().optional().describe('the exact call to make'),
        }),
      )
      .describe('what to do next, with the request to send where there is one'),
    log_excerpt: z.array(z.record(z.string(), z.unknown())).describe('the last warnings and errors the task logged'),
    links: z.record(z.string(), z.string()),
  }),
});

export const reportIdParams = z.object({ report_id: z.string().min(1).max(200) });
