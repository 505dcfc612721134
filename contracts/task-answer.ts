/**
 * How many of a task's items its answer carries (GET /api/tasks/{id}, a cancel's answer, the
 * assistant's task status, the report; a row of a task list). A task of 1,000 dashboards has about 13,000
 * objects, several megabytes of JSON: an answer that carried them all would be read and parsed in
 * full by every poll of the console and the CLI. Up to the limit the result is unchanged (today's
 * clients read `result.items`); beyond it the answer keeps the totals and says where the items are:
 * `items_omitted: true`, `items_total`, and `items_url`, the items endpoint that pages them
 * (filtered by outcome or title). This module is the one decider: everything that shapes an
 * answer from a task's result asks it. Plain data and functions (the CLI and the console read it).
 */
import { isItemsResult } from './outcomes.ts';

/** Items a task answer carries in full; beyond it, none (a page of the items endpoint is this size too). */
export const ANSWER_ITEMS_LIMIT = 100;

/**
 * Items a row of a task list carries (GET /api/tasks, a backup's task list): none. A page is up to
 * 100 tasks, each up to the answer's limit in full, so a list of migrations of 100 dashboards each
 * would weigh megabytes; a row keeps the totals and `items_url` like a large task's answer.
 */
export const LIST_ITEMS_LIMIT = 0;

/** What an answer carries instead of the items of a large task. */
export interface OmittedItems {
  items_omitted: true;
  /** How many items the task has (the items endpoint's `total` without a filter). */
  items_total: number;
  /** Where to read them a page at a time: GET, with `outcome`, `q`, `page`, `page_size` (up to 100). */
  items_url: string;
}

/** The items endpoint of a task. */
export function itemsUrl(taskId: string): string {
  return `/api/tasks/${encodeURIComponent(taskId)}/items`;
}

/** Does an answer with this many items carry them in full? */
export function carriesItems(count: number, limit = ANSWER_ITEMS_LIMIT): boolean {
  return count <= limit;
}

/**
 * A task's result as its answer carries it: the same value when it has no items or no more than
 * the limit; otherwise everything but `items`, with where to page them.
 */
export function resultForAnswer(taskId: string, result: unknown, limit = ANSWER_ITEMS_LIMIT): unknown {
  if (!isItemsResult(result) || carriesItems(result.items.length, limit)) return result;
  const { items, ...rest } = result;
  const omitted: OmittedItems = { items_omitted: true, items_total: items.length, items_url: itemsUrl(taskId) };
  return { ...rest, ...omitted };
}

/** Did this answer leave its items out (read them from `items_url`)? */
export function omitsItems(value: unknown): value is OmittedItems {
  return typeof value === 'object' && value !== null && (value as { items_omitted?: unknown }).items_omitted === true;
}
