import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IMPORT_LIMIT, MAX_BATCH } from '../../contracts/migration-batching.ts';
import { updateDashboard } from '../support/superset/fixtures.ts';
import { migrateOnPair } from './pair-tasks.ts';
import { realPairAvailable, seedForMigration, startRealPair, type RealPair } from './real-pair.ts';

/**
 * A rerun reads wide (contracts/migration-batching.ts RERUN_BATCH, docs/migration-batching.md), on
 * the real Superset 6.1.0 a → b: after a batch that found all of its dashboards unchanged, the next
 * batch reads the rest at once; a wide batch that finds more changed than it may import imports up
 * to IMPORT_LIMIT and leaves the others for a narrow batch after it, and every dashboard ends with
 * its own outcome, verified.
 */
let pair: RealPair;
// The first batch, then a wide one of WIDE: more than a narrow batch holds, fewer than RERUN_BATCH.
const WIDE = IMPORT_LIMIT + 4;
const N = MAX_BATCH + WIDE;

/** The task's batch lines (`batch of N: …`), in order. */
async function batchLines(taskId: string): Promise<string[]> {
  const r = await pair.admin('GET', `/api/tasks/${taskId}/logs?limit=1000&text=${encodeURIComponent('batch of ')}`);
  expect(r.status).toBe(200);
  return r.body.items.map((i: { message: string }) => i.message).filter((m: string) => m.startsWith('batch of '));
}

const statuses = (task: { result: { items: Array<{ status: string }> } }) => task.result.items.map((i) => i.status);

describe.runIf(realPairAvailable())('a rerun reads wide: a (6.1.0) → b (6.1.0)', () => {
  beforeAll(async () => {
    pair = await startRealPair();
  }, 180_000);
  afterAll(async () => pair?.close());

  it(
    'reads the rest of an unchanged rerun in one wide batch; a wide batch past its import limit leaves the rest to a narrow one',
    { timeout: 900_000 },
    async () => {
      const { ids, titles, mapping } = await seedForMigration(pair, 'Wide', N);
      const first = await migrateOnPair(pair, ids, mapping);
      expect(first.status).toBe('SUCCEEDED');
      expect(statuses(first)).toEqual(Array(N).fill('imported'));

      // Nothing changed: a narrow first batch, then the other WIDE dashboards in one batch, each target checked again.
      const rerun = await migrateOnPair(pair, ids, mapping);
      expect(rerun.status).toBe('SUCCEEDED');
      expect(statuses(rerun)).toEqual(Array(N).fill('unchanged'));
      for (const item of rerun.result.items) expect(item.verification_state?.state, `dashboard ${item.id}`).toBe('verified');
      const rerunBatches = await batchLines(rerun.id);
      expect(rerunBatches.map((l) => l.match(/^batch of (\d+)/)![1])).toEqual([String(MAX_BATCH), String(WIDE)]);
      expect(rerunBatches[0]).toContain('the next batch reads wider');

      // All but the wide batch's first two changed in the source: the wide batch imports IMPORT_LIMIT, two wait.
      const changed = ids.slice(MAX_BATCH + 2);
      for (const id of changed) await updateDashboard(pair.a, id, { dashboard_title: `${titles[ids.indexOf(id)]} renamed` });
      const third = await migrateOnPair(pair, ids, mapping);
      expect(third.status).toBe('SUCCEEDED');
      expect(statuses(third)).toEqual(ids.map((id) => (changed.includes(id) ? 'imported' : 'unchanged')));
      const thirdBatches = await batchLines(third.id);
      expect(thirdBatches.map((l) => l.match(/^batch of (\d+)/)![1])).toEqual([
        String(MAX_BATCH),
        String(WIDE),
        String(WIDE - 2 - IMPORT_LIMIT),
      ]);
      expect(thirdBatches[1]).toContain(`${IMPORT_LIMIT} imported`);
      expect(thirdBatches[1]).toContain(`${WIDE - 2 - IMPORT_LIMIT} left for the next batch`);
      // Each renamed copy is in the target under its new title.
      const there = await Promise.all(
        third.result.items
          .filter((i: { status: string }) => i.status === 'imported')
          .map((i: { target_dashboard_id: number }) => pair.b.dashboards.get(i.target_dashboard_id)),
      );
      expect(there.map((d) => d.dashboard_title).every((t) => t.endsWith(' renamed'))).toBe(true);
    },
  );
});
