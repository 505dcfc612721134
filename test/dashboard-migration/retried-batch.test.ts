/**
 * A batch Temporal runs again after an earlier attempt recorded its imports (the worker died
 * between recording and answering): the dashboards that attempt imported are kept as recorded,
 * and each still goes to the verification with its planned hash, taken from its import intent.
 * Before, the kept outcomes came back without it and the workflow verified none of them (seen in
 * bench:migration at a load of 30: those dashboards were never verified and the next run imported
 * them again). Real PostgreSQL through the stores; nothing else runs.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MigrationServices } from '../../domain/migration/context.ts';
import { BatchOutcomes, recordOutcome } from '../../domain/migration/record.ts';
import type { DashboardOutcome, MigrationBatchInput } from '../../contracts/migration.ts';
import { createHarness, type Harness } from '../support/harness.ts';
import { createStoredTask } from '../support/task-items.ts';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
}, 120_000);
afterAll(async () => h?.close());

const outcome = (id: number, status: DashboardOutcome['status']): DashboardOutcome => ({
  kind: 'dashboard',
  id,
  title: `Board ${id}`,
  status,
  outcome: 'succeeded',
  target_dashboard_id: 100 + id,
  dashboard_uuid: `00000000-0000-4000-8000-00000000000${id}`,
  objects: [],
  database_mappings: [],
  collisions: [],
  dropped_fields: [],
  defaulted_fields: [],
  learned_rejections: [],
  chart_uuids: [],
  import_attempts: 1,
  next_actions: [],
});

describe('a batch run again after its imports were recorded', () => {
  it('hands every dashboard the earlier attempt imported to the verification, with the hash it imported', async () => {
    const { stores } = h.boot.context;
    const taskId = await createStoredTask(h, { type: 'migration', summary: 'a retried batch' });
    const svc = { outcomes: stores.taskItems, intents: stores.migrationItems } as unknown as MigrationServices;
    const log = { info() {}, warn() {}, error() {} } as never;
    // The earlier attempt: dashboard 1 imported (intent confirmed), dashboard 2 found unchanged, dashboard 3 not reached.
    await stores.migrationItems.markImporting([
      { task_id: taskId, source_dashboard_id: 1, dashboard_uuid: outcome(1, 'imported').dashboard_uuid!, bundle_hash: 'hash-of-1' },
    ]);
    await stores.migrationItems.markImported(taskId, 1, 101);
    await recordOutcome(svc, taskId, 0, outcome(1, 'imported'));
    await recordOutcome(svc, taskId, 1, outcome(2, 'unchanged'));

    const input = {
      batch: [
        { id: 1, position: 0 },
        { id: 2, position: 1 },
        { id: 3, position: 2 },
      ],
      learnedRejections: [],
      doneBefore: 0,
      total: 3,
    } as unknown as MigrationBatchInput;
    const again = new BatchOutcomes(svc, input, taskId, log);
    const todo = await again.keepRecorded();
    expect(todo.map((d) => d.id)).toEqual([3]);
    const items = again.result().items;
    expect(items.find((i) => i.id === 1)).toMatchObject({ status: 'imported', target_dashboard_id: 101, planned_hash: 'hash-of-1' });
    // Not imported by that attempt: nothing to verify, so no hash.
    expect(items.find((i) => i.id === 2)?.planned_hash).toBeUndefined();
  });
});
