import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_BATCH } from '../../contracts/migration-batching.ts';
import { PREFETCH_PLAN, type PrefetchName } from '../../domain/migration/prefetch-plan.ts';
import { watchPrefetch, type HeldRead, type PrefetchEvent } from '../../domain/migration/prefetch-runs.ts';
import { migrateOnPair } from './pair-tasks.ts';
import { realPairAvailable, seedForMigration, startRealPair, type RealPair } from './real-pair.ts';

/**
 * No read begun ahead outlives what it was for (issue 49, docs/migration-batching.md "The prefetch
 * plan"): on the real Superset 6.1.0 a → b, a migration of two batches and its rerun, watched
 * through the worker's prefetch plans (domain/migration/prefetch-runs.ts watchPrefetch). After each
 * engine activity returns, the task's plan holds only reads handed to a later activity and not yet
 * taken, or reads of another activity still running (a verification runs beside the next batch);
 * when the task ends, nothing was left over (every read handed on was taken by its consumer) and
 * nothing is held.
 */
let pair: RealPair;

/** A held read that outlived what it was for: its owner has returned, or it waits for a consumer the plan does not give it. */
function outlived(held: HeldRead[]): string[] {
  return held
    .filter((h) => (h.owner ? h.owner.ended : PREFETCH_PLAN[h.name].consumer === 'itself'))
    .map((h) => `${h.name} (${h.label}), started by ${h.startedBy}, owned by ${h.owner?.activity ?? 'nobody'}`);
}

/** What the task's activities and reads did, as its plan told its watchers. */
function ofTask(events: PrefetchEvent[], taskId: string) {
  const mine = events.filter((e) => e.taskId === taskId);
  return {
    started: new Set(mine.flatMap((e) => (e.kind === 'started' ? [e.name] : []))),
    ended: mine.flatMap((e) => (e.kind === 'activity ended' ? [e] : [])),
    taskEnded: mine.flatMap((e) => (e.kind === 'task ended' ? [e] : [])),
  };
}

describe.runIf(realPairAvailable())('no read begun ahead outlives what it was for: a (6.1.0) → b (6.1.0)', () => {
  beforeAll(async () => {
    pair = await startRealPair();
  }, 180_000);
  afterAll(async () => pair?.close());

  it('after each engine activity the plan holds only reads handed on; after the task, nothing', { timeout: 900_000 }, async () => {
    const events: PrefetchEvent[] = [];
    const stop = watchPrefetch((e) => events.push(structuredClone(e)));
    let tasks: Array<{ id: string; status: string }>;
    try {
      // Two batches: the first reads the second's export, views and embedded configurations ahead.
      const { ids, mapping } = await seedForMigration(pair, 'Lifetimes', MAX_BATCH + 2);
      const first = await migrateOnPair(pair, ids, mapping);
      // The rerun tells them unchanged and checks their targets again, begun by its batches for the verification.
      const rerun = await migrateOnPair(pair, ids, mapping);
      tasks = [first, rerun];
    } finally {
      stop();
    }
    for (const task of tasks) expect(task.status).toBe('SUCCEEDED');

    const expected: Array<[number, PrefetchName[]]> = [
      [0, ['sourceExport', 'sourceViews', 'embeddedConfigurations', 'environmentLists', 'sourceChecks', 'targetChecks']],
      [0, ['nextBatchExport', 'nextBatchViews', 'nextBatchEmbedded']],
      [1, ['targetCopiesExport', 'readsOnExport', 'unchangedSourceChecks', 'unchangedTargetChecks']],
    ];
    for (const [at, names] of expected) expect([...ofTask(events, tasks[at]!.id).started]).toEqual(expect.arrayContaining(names));

    for (const task of tasks) {
      const { ended, taskEnded } = ofTask(events, task.id);
      // Each batch and each verification told its end (two batches a task, a verification for each).
      expect(ended.filter((e) => e.activity === 'migrateBatch').length).toBeGreaterThanOrEqual(2);
      expect(ended.filter((e) => e.activity === 'verifyMigratedBatch').length).toBeGreaterThanOrEqual(2);
      for (const e of ended) expect(outlived(e.held), `after a ${e.activity} of task ${task.id}`).toEqual([]);
      expect(taskEnded).toHaveLength(1);
      expect(taskEnded[0]!.left, 'handed on, but never taken by its consumer').toEqual([]);
      expect(taskEnded[0]!.held).toEqual([]);
    }
  });
});
