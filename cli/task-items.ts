/**
 * A task's items for the CLI: from its answer when the answer carries them, else from the items
 * endpoint a page at a time. The answer of a task with more items than contracts/task-answer.ts
 * allows leaves them out (`items_omitted`), so `tasks show`, `--wait` and `report` page them here.
 */
import { ANSWER_ITEMS_LIMIT, omitsItems } from '../contracts/task-answer.ts';
import type { ItemFilter } from '../contracts/outcomes.ts';
import { unwrap, type Api } from './api.ts';
import type { ItemLike } from './render.ts';

/** Every item of the task (those of one outcome when asked), in request order; undefined for a task without items. */
export async function itemsOf(api: Api, taskId: string, carrier: unknown, outcome?: ItemFilter): Promise<ItemLike[] | undefined> {
  const inline = (carrier as { items?: ItemLike[] } | null)?.items;
  if (Array.isArray(inline)) return outcome ? inline.filter((i) => i.outcome === outcome) : inline;
  if (!omitsItems(carrier)) return undefined;
  const items: ItemLike[] = [];
  for (let page = 1; ; page++) {
    const query = { page, page_size: ANSWER_ITEMS_LIMIT, ...(outcome ? { outcome } : {}) };
    const found = await unwrap(
      api.client.GET('/api/tasks/{task_id}/items', { params: { path: { task_id: taskId }, query: query as never } }),
    );
    items.push(...found.items.map((r) => r.item as ItemLike));
    if (!found.has_next) return items;
  }
}

/**
 * How many items failed of how many, for the exit code: counted from the items when the answer
 * carries them, else from the counts it keeps (the task's `items_summary`, a report's `summary`).
 */
export function failedOf(answer: { result?: unknown; items_summary?: unknown }): { failed: number; total: number } | undefined {
  const result = answer.result as { items?: ItemLike[] } | null | undefined;
  if (Array.isArray(result?.items))
    return { failed: result.items.filter((i) => i.outcome === 'failed').length, total: result.items.length };
  if (!omitsItems(result)) return undefined;
  const counts = (answer.items_summary as { by_outcome?: Record<string, number> } | null | undefined)?.by_outcome;
  const report = (result as { summary?: { failed?: number } }).summary;
  return { failed: counts?.failed ?? report?.failed ?? 0, total: result.items_total };
}
