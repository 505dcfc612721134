import { CancellationScope } from '@temporalio/workflow';
import { reportTaskProgress } from './task-run.ts';

/**
 * The per-item loop of an item-by-item task: one item at a time, each item with its progress line
 * as one non-cancellable unit, so a cancel lands between items and every item reached ends with an
 * outcome. `work` must not throw for an item's own failure: it returns that item's outcome.
 */
export async function forEachItem<K, O extends { status: string }>(
  keys: readonly K[],
  label: (key: K) => string,
  work: (key: K) => Promise<O>,
): Promise<{ items: O[]; cancelled: boolean }> {
  const items: O[] = [];
  for (const [i, key] of keys.entries()) {
    if (CancellationScope.current().consideredCancelled) return { items, cancelled: true };
    await CancellationScope.nonCancellable(async () => {
      const item = await work(key);
      items.push(item);
      await reportTaskProgress({ done: i + 1, total: keys.length, message: `${label(key)}: ${item.status}` });
    });
  }
  return { items, cancelled: false };
}
