import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateSeeded, startFakePair, type FakePair } from './fake-pair.ts';

/**
 * A target check that did not pass inside the batch is made again by the verification, which
 * reports what it gets then (domain/migration/target-checks-ahead.ts). The ordering
 * and call counts of the checks inside the batch are proven on the real a → b:
 * target-checks-ahead.test.ts.
 *
 * Why the fake (the fault a real Superset cannot be made to produce): the target answering its
 * chart-data queries with Superset's own 500 exactly three times on demand, then answering again.
 */
let pair: FakePair;

const CHART_DATA = '/api/v1/chart/data';

describe("a batch's failed target check is made again by the verification", () => {
  beforeAll(async () => {
    pair = await startFakePair();
  }, 120_000);
  afterAll(async () => pair?.close());

  it('makes again a target check that did not pass inside the batch, and reports what it gets then', async () => {
    const { target } = pair;
    const mark = target.mark();
    // Every target chart query made inside the batch fails (Superset's 500): the joint one, then each chart's alone. Asked again by
    // the verification, it passes: the dashboard is verified on what the verification got, not on the refusal.
    target.fail({ method: 'POST', path: CHART_DATA }, '500', 3);
    try {
      const task = await migrateSeeded(pair, 'Again target', 1);
      expect(task.status, JSON.stringify(task.error)).toBe('SUCCEEDED');
      const [item] = task.result.items;
      expect(item.status).toBe('imported');
      expect(item.verification).toMatchObject({ ok: true, charts_linked: 2, classes: { passes: 2 } });
    } finally {
      target.clearFailures();
    }
    expect(target.count(CHART_DATA, mark)).toBe(4);
  }, 240_000);
});
