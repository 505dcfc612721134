/**
 * What a joint import writes in one statement each, on real PostgreSQL: its import intents
 * (db/dashboard-migration/items.ts), asked for and confirmed touching only the task and
 * dashboards named, and its outcomes (db/tasks/items.ts recordMany), the earlier one winning.
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

describe("a joint import's outcomes", () => {
  it('are recorded together, and a position recorded before keeps its earlier outcome', async () => {
    const items = h.boot.context.stores.taskItems;
    const taskId = await createStoredTask(h, { type: 'migration', summary: 'outcomes together' });
    const item = (id: number, outcome: 'succeeded' | 'failed') => ({
      kind: 'dashboard' as const,
      id,
      title: `Board ${id}`,
      outcome,
      status: outcome,
      next_actions: [],
    });
    await items.record(taskId, 1, 2, item(2, 'failed'));
    await items.recordMany(taskId, [
      { position: 0, key: 1, item: item(1, 'succeeded') },
      { position: 1, key: 2, item: item(2, 'succeeded') },
      { position: 2, key: 3, item: item(3, 'succeeded') },
    ]);
    await items.recordMany(taskId, []);
    const recorded = await items.list<ReturnType<typeof item>>(taskId);
    expect(recorded.map((i) => [i.id, i.outcome])).toEqual([
      [1, 'succeeded'],
      [2, 'failed'],
      [3, 'succeeded'],
    ]);
  });
});
