/**
 * The import intents of a joint import (db/dashboard-migration/items.ts): asked for and confirmed
 * in one statement each, on real PostgreSQL, touching only the task and dashboards named.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../support/harness.ts';
import { createStoredTask } from '../support/task-items.ts';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
}, 120_000);
afterAll(async () => h?.close());

const intent = (taskId: string, id: number) => ({
  task_id: taskId,
  source_dashboard_id: id,
  dashboard_uuid: `uuid-${id}`,
  bundle_hash: `hash-${id}`,
});

describe('import intents of a joint import', () => {
  it('tells whether any of the dashboards has an intent, and confirms several at once with their target ids', async () => {
    const items = h.boot.context.stores.migrationItems;
    const taskId = await createStoredTask(h, { type: 'migration', summary: 'a joint import' });
    const other = await createStoredTask(h, { type: 'migration', summary: 'another task' });
    expect(await items.anyIntent(taskId, [1, 2, 3])).toBe(false);
    expect(await items.anyIntent(taskId, [])).toBe(false);
    await items.markImporting([intent(taskId, 1), intent(taskId, 2), intent(taskId, 3), intent(other, 1)]);
    expect(await items.anyIntent(taskId, [7, 3])).toBe(true);
    expect(await items.anyIntent(taskId, [7, 8])).toBe(false);

    await items.markAllImported(taskId, [
      { sourceDashboardId: 1, targetDashboardId: 101 },
      { sourceDashboardId: 3, targetDashboardId: 103 },
    ]);
    expect(await items.intent(taskId, 1)).toMatchObject({ status: 'imported', target_dashboard_id: 101 });
    expect(await items.intent(taskId, 3)).toMatchObject({ status: 'imported', target_dashboard_id: 103 });
    // Not named: left as they were, in this task and in the other one.
    expect(await items.intent(taskId, 2)).toMatchObject({ status: 'importing', target_dashboard_id: null });
    expect(await items.intent(other, 1)).toMatchObject({ status: 'importing', target_dashboard_id: null });
  });
});
