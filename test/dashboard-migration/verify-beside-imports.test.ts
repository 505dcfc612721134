import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_BATCH } from '../../contracts/migration-batching.ts';
import { ConfigError, loadConfig } from '../../lib/config.ts';
import { migrateHeldUntilLogged } from './pair-tasks.ts';
import { migrateSeeded, realPairAvailable, seedForMigration, startRealPair, type RealPair } from './real-pair.ts';

/**
 * Verification beside the imports (docs/migration-batching.md): the first batch's dashboard is
 * verified while the second batch imports, and however many verifications run, no environment
 * gets more chart queries at once than VERIFY_CONCURRENCY. Observed on the real Superset 6.1.0
 * a → b behind a recording proxy each (test/support/gateway-proxy.ts): the order in which the
 * target sees the calls, and how many chart-data calls each has open at once (a dashboard's charts
 * on one dataset go in one call a side). The proxy holds an import until the task's log shows the
 * verification began (no timer), and passes chart queries on 100 ms late so that a lane past the
 * limit shows as one more in flight.
 */
const LIMIT = 2;

let pair: RealPair;

describe.runIf(realPairAvailable())('verification beside the imports, in fewer calls: a (6.1.0) → b (6.1.0)', () => {
  beforeAll(async () => {
    pair = await startRealPair({ VERIFY_CONCURRENCY: String(LIMIT) });
  }, 180_000);
  afterAll(async () => pair?.close());

  it("verifies the first batch's dashboards while the second batch's import waits", async () => {
    const { target } = pair;
    const importPath = '/api/v1/dashboard/import/';
    const before = target.count(importPath);
    // The second import call (the second batch's) is held until the task's log says a target dashboard was verified: only
    // a verification started beside that batch can say so then. (Neither the target's chart queries nor its export are the
    // sign: the first batch makes them itself, right after its import: target-checks-ahead.test.ts.)
    try {
      const task = await migrateHeldUntilLogged(
        pair,
        // Two batches: MAX_BATCH dashboards imported together, then one more.
        await seedForMigration(pair, 'Beside', MAX_BATCH + 1),
        'verified target dashboard',
        (release) => target.hold({ method: 'POST', path: importPath, when: () => target.count(importPath) - before === 2 }, release),
      );
      expect(task.status, JSON.stringify(task.error)).toBe('SUCCEEDED');
      expect(task.result.items).toHaveLength(MAX_BATCH + 1);
      for (const item of task.result.items) expect(item.verification).toMatchObject({ ok: true, charts_linked: 2 });
    } finally {
      target.clearHolds();
    }
  }, 900_000);

  it('ends a batch without waiting for its source checks: the verification awaits them and does not query the source again', async () => {
    const { source, target } = pair;
    const marks = [source.mark(), target.mark()] as const;
    // Every source chart query (made beside the imports) is held until the task's log says a batch completed: a batch
    // that waited for its source checks would wait here forever, and the test's own timeout would fail it.
    try {
      const task = await migrateHeldUntilLogged(
        pair,
        await seedForMigration(pair, 'Unwaited', 3),
        'activity migrateBatch completed',
        (release) => source.hold({ method: 'POST', path: '/api/v1/chart/data' }, release),
      );
      expect(task.status, JSON.stringify(task.error)).toBe('SUCCEEDED');
      expect(task.result.items).toHaveLength(3);
      for (const item of task.result.items) expect(item.verification).toMatchObject({ ok: true, charts_linked: 2, classes: { passes: 2 } });
    } finally {
      source.clearHolds();
    }
    // One source chart-data call for the batch (its dashboards' charts on one dataset go together), made beside the
    // import and awaited by the verification, not made again; no source chart detail read (the batch's export gave them).
    expect(source.count('/api/v1/chart/data', marks[0])).toBe(1);
    expect(source.count(/^\/api\/v1\/chart\/\d+$/, marks[0])).toBe(0);
    expect(target.count('/api/v1/chart/data', marks[1])).toBe(1);
  }, 900_000);

  it('never sends one environment more chart queries at once than VERIFY_CONCURRENCY', async () => {
    const { source, target } = pair;
    // Slow answers keep queries open, so any lane past the limit shows as one more in flight.
    for (const f of [source, target]) {
      f.slow({ method: 'POST', path: '/api/v1/chart/data' }, 100);
      f.resetInFlight();
    }
    const marks = [source.mark(), target.mark()];
    try {
      const task = await migrateSeeded(pair, 'Bounded', 17);
      expect(task.status, JSON.stringify(task.error)).toBe('SUCCEEDED');
      expect(task.result.items.filter((i: any) => i.verification?.ok)).toHaveLength(17);
      // 17 dashboards of 2 charts on one dataset, in batches of 16 and 1: the first batch's 32 queries in four calls of
      // MAX_QUERIES_PER_CALL (8) a side, which its checks send four at a time (past the limit unless the environment's bound
      // holds them), the second's two in one call.
      for (const [k, f] of [source, target].entries()) {
        expect(f.count('/api/v1/chart/data', marks[k])).toBe(5);
        expect(f.maxInFlight('/api/v1/chart/data')).toBeGreaterThan(0);
        expect(f.maxInFlight('/api/v1/chart/data')).toBeLessThanOrEqual(LIMIT);
      }
    } finally {
      source.clearHolds();
      target.clearHolds();
    }
  }, 900_000);
});

describe('VERIFY_CONCURRENCY', () => {
  it('is 4 chart queries per environment by default, and a value outside 1..64 stops the start with its name', () => {
    expect(loadConfig({}).VERIFY_CONCURRENCY).toBe(4);
    expect(loadConfig({ VERIFY_CONCURRENCY: '12' }).VERIFY_CONCURRENCY).toBe(12);
    for (const bad of ['0', '65', 'many', '1.5']) {
      expect(() => loadConfig({ VERIFY_CONCURRENCY: bad })).toThrow(ConfigError);
      expect(() => loadConfig({ VERIFY_CONCURRENCY: bad })).toThrow(/VERIFY_CONCURRENCY/);
    }
  });
});
