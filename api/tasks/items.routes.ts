/**
 * A task's items a page at a time (`GET /api/tasks/{task_id}/items`), filtered by outcome or
 * change and searched by title in PostgreSQL (db/tasks/item-pages.ts), and the summary the task
 * answer carries: counts by outcome, change, status and object action, durations, bulk actions.
 * Read with the task's own read rule (api/tasks/policy.ts through getVisible: a hidden task is 404).
 */
import { isItemsResult, type NextAction } from '../../contracts/outcomes.ts';
import type { TaskRecord } from '../../db/tasks/store.ts';
import type { AppContext } from '../context.ts';
import { defineRoute, type AnyRoute } from '../http/routes.ts';
import { bulkActions } from './bulk-actions.ts';
import { itemPage, itemsQuery, type itemsSummary } from './item-schemas.ts';
import { hideItem, hidesQueryRows } from './query-rows.ts';
import { taskIdParams } from './schemas.ts';
import type { z } from 'zod';

type Summary = z.infer<typeof itemsSummary>;

const ms = (from: Date | null, to: Date | null) => (from && to ? new Date(to).getTime() - new Date(from).getTime() : null);

/** The summary of a task's items, or null for a task that has none and no item result. */
export async function itemsSummaryOf(app: AppContext, task: TaskRecord): Promise<Summary | null> {
  const pages = app.stores.taskItemPages;
  const [counts, failed] = await Promise.all([pages.counts(task.id), pages.failed(task.id)]);
  if (!counts.total && !isItemsResult(task.result)) return null;
  const result = (task.result ?? {}) as { next_actions?: NextAction[]; timings?: { migration_ms?: number; verification_ms?: number } };
  const { verification_ms: itemVerification, ...rest } = counts;
  return {
    ...rest,
    durations: {
      queued_ms: ms(task.created_at, task.started_at),
      run_ms: ms(task.started_at, task.finished_at),
      migration_ms: result.timings?.migration_ms ?? null,
      verification_ms: result.timings?.verification_ms ?? null,
      item_verification_ms: itemVerification,
    },
    bulk_actions: bulkActions(task, Array.isArray(result.next_actions) ? result.next_actions : [], failed),
  };
}

export function taskItemRoutes(app: AppContext): AnyRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: '/api/tasks/:task_id/items',
      tag: 'Tasks',
      summary: "A page of a task's items",
      description:
        "A page of an item-by-item task's items in request order, filtered by `outcome` or searched with `q`. Details: docs/tasks.md#get-apitaskstask_iditems.",
      access: 'authenticated',
      params: taskIdParams,
      query: itemsQuery,
      responses: { 200: { description: 'A page of items', schema: itemPage }, 404: { description: 'Unknown task' } },
      async handler(_ctx, { params, query, principal }) {
        const task = await app.tasks.getVisible(params.task_id, principal);
        const found = await app.stores.taskItemPages.page(task.id, {
          filters: query.outcome,
          q: query.q,
          page: query.page,
          pageSize: query.page_size,
        });
        const hide = hidesQueryRows(task, principal);
        return {
          items: found.items.map((r) => ({ ...r, item: hide ? hideItem(r.item as unknown as Record<string, unknown>) : r.item })),
          total: found.total,
          page: query.page,
          page_size: query.page_size,
          has_next: query.page * query.page_size < found.total,
        };
      },
    }),
  ];
}
