import { describe, expect, it } from 'vitest';
import { PrefetchPlans, watchPrefetch, type PrefetchEvent } from '../../domain/migration/prefetch-runs.ts';

/**
 * The lifetimes of a task's reads begun ahead (domain/migration/prefetch-runs.ts), without
 * Superset: each hold is a promise the test settles itself. The same rules on a real migration:
 * prefetch-lifetimes.test.ts.
 */
function logged() {
  const lines: string[] = [];
  const log = { debug() {}, info: (m: string) => lines.push(`info ${m}`), warn: (m: string) => lines.push(`warn ${m}`), error() {} };
  return { lines, log };
}

/** `p`, and whether it has settled yet. */
function watched(p: Promise<void>): { promise: Promise<void>; done: boolean } {
  const w = {
    done: false,
    promise: p.then(() => {
      w.done = true;
    }),
  };
  return w;
}

/** Lets every continuation already queued run. */
const turn = () => new Promise((resolve) => setImmediate(resolve));

describe("a task's prefetch plan", () => {
  it("awaits a batch's own read before the batch's end, and logs its failure with its name and item", async () => {
    const { lines, log } = logged();
    const plans = new PrefetchPlans();
    const batch = await plans.open('t1', 'migrateBatch', log);
    const read = Promise.withResolvers<void>();
    batch.begin('environmentLists', "the source's accounts", () => read.promise);
    const ended = watched(batch.end());
    await turn();
    expect(ended.done).toBe(false);
    read.reject(new Error('the source answered 502'));
    await ended.promise;
    expect(plans.held('t1')).toEqual([]);
    expect(lines).toEqual(["warn task t1, migrateBatch: the source's accounts (environmentLists) failed: the source answered 502"]);
  });

  it('answers the read itself to whoever awaits it, its failure included', async () => {
    const { log } = logged();
    const batch = await new PrefetchPlans().open('t1', 'migrateBatch', log);
    const got = batch.start('sourceExport', 'the export', () => Promise.resolve('zip'));
    expect(await got).toBe('zip');
    await expect(batch.start('sourceExport', 'the export', () => Promise.reject(new Error('gone')))).rejects.toThrow('gone');
    await batch.end();
  });

  it('keeps a read begun for the next batch past this batch, until the next one takes and awaits it', async () => {
    const { log } = logged();
    const plans = new PrefetchPlans();
    const first = await plans.open('t1', 'migrateBatch', log);
    const read = Promise.withResolvers<void>();
    first.begin('nextBatchExport', 'the next export', () => read.promise);
    await first.end();
    expect(plans.held('t1')).toEqual([{ name: 'nextBatchExport', label: 'the next export', startedBy: 'migrateBatch', owner: null }]);
    const next = await plans.open('t1', 'migrateBatch', log);
    const taken = next.adopt('nextBatchExport');
    expect(plans.held('t1')[0]!.owner).toEqual({ activity: 'migrateBatch', ended: false });
    read.resolve();
    await taken;
    await next.end();
    expect(plans.held('t1')).toEqual([]);
  });

  it("hands each dashboard's part to the verification once; the verification awaits the read and drops what it did not take", async () => {
    const { log } = logged();
    const plans = new PrefetchPlans();
    const batch = await plans.open('t1', 'migrateBatch', log);
    const run = Promise.withResolvers<void>();
    const checks = new Map([[7, Promise.resolve(undefined)]]);
    batch.begin('targetChecks', 'the target checks of dashboard 7', () => run.promise, {
      targetChecks: checks,
      targetExport: new Map([[7, Promise.resolve(undefined)]]),
    });
    await batch.end();
    expect(plans.held('t1').map((h) => h.owner)).toEqual([null]);
    const verification = await plans.open('t1', 'verifyMigratedBatch', log);
    expect(verification.take('targetChecks', 7)).toBe(checks.get(7));
    expect(verification.take('targetChecks', 7)).toBeUndefined();
    const ended = watched(verification.end());
    await turn();
    expect(ended.done).toBe(false);
    run.resolve();
    await ended.promise;
    expect(plans.held('t1')).toEqual([]); // its export part, never taken, went with it
  });

  it('aborts, awaits and drops what the task still holds at its end, and tells its watchers', async () => {
    const { lines, log } = logged();
    const plans = new PrefetchPlans();
    const events: PrefetchEvent[] = [];
    const stop = watchPrefetch((e) => events.push(e));
    try {
      const batch = await plans.open('t1', 'migrateBatch', log);
      batch.begin(
        'sourceChecks',
        'the source checks of dashboard 3',
        (signal) => new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason as Error))),
        {
          sourceCharts: new Map([[3, Promise.resolve(undefined)]]),
        },
      );
      await batch.end();
      await plans.endTask('t1');
      expect(plans.held('t1')).toEqual([]);
      expect(lines).toEqual([
        'info task t1, migrateBatch: the source checks of dashboard 3 (sourceChecks) stopped: the task ended before the read was taken',
      ]);
      expect(events.map((e) => e.kind)).toEqual(['started', 'activity ended', 'task ended']);
      expect(events.at(-1)).toMatchObject({ kind: 'task ended', left: [{ name: 'sourceChecks', owner: null }], held: [] });
    } finally {
      stop();
    }
  });

  it('holds a read the batch takes itself but started after it ended as outliving it', async () => {
    const { lines, log } = logged();
    const plans = new PrefetchPlans();
    const batch = await plans.open('t1', 'migrateBatch', log);
    await batch.end();
    batch.begin('sourceViews', 'the views of dashboard 4', () => Promise.resolve());
    expect(plans.held('t1')).toMatchObject([{ name: 'sourceViews', owner: { activity: 'migrateBatch', ended: true } }]);
    expect(lines).toEqual(['warn task t1: the views of dashboard 4 (sourceViews) started after its migrateBatch returned']);
    await plans.endTask('t1');
  });

  it('refuses a part the plan does not declare for the read', async () => {
    const batch = await new PrefetchPlans().open('t1', 'migrateBatch', logged().log);
    expect(() => batch.begin('sourceChecks', 'x', () => Promise.resolve(), { targetChecks: new Map() })).toThrow(
      "the prefetch plan's sourceChecks hands no targetChecks",
    );
    await batch.end();
  });

  it('settles the plan of a task idle on this worker for too long when another task opens a run', async () => {
    const { log } = logged();
    const plans = new PrefetchPlans({ idleMs: -1 });
    const batch = await plans.open('t1', 'migrateBatch', log);
    batch.begin('nextBatchExport', 'the next export', () => Promise.resolve());
    await batch.end();
    expect(plans.held('t1')).toHaveLength(1);
    await (await plans.open('t2', 'migrateBatch', log)).end();
    expect(plans.held('t1')).toEqual([]);
  });
});
