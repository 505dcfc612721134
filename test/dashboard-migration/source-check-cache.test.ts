import { describe, expect, it } from 'vitest';
import { judgeDashboard } from '../../domain/migration/chart-check/judge.ts';
import { SourceCheckCache } from '../../domain/migration/chart-check/source-cache.ts';
import type { ChartAnswer, ChartForCheck } from '../../domain/migration/chart-check/types.ts';
import { PrefetchPlans } from '../../domain/migration/prefetch-runs.ts';
import type { MigrationUpstream } from '../../domain/migration/upstream.ts';

/**
 * A source chart's check is not run again while its content is as it was when it last passed;
 * one whose last check failed is always run again. Observed through stub upstreams that count the
 * chart queries each side is asked.
 */
const chart = (over: Partial<ChartForCheck> = {}): ChartForCheck => ({
  id: 7,
  uuid: 'chart-7',
  name: 'rows',
  viz_type: 'table',
  form_data: { viz_type: 'table' },
  datasource: { id: 3, type: 'table' },
  query_context: { datasource: { id: 3, type: 'table' }, queries: [{ columns: ['region'] }] },
  ...over,
});
const passing: ChartAnswer = { ok: true, rows: 1, columns: [{ name: 'region', type: 1 }] };

function side(answer: () => ChartAnswer) {
  const asked = { queries: 0 };
  const up = {
    runQueryContext: async () => {
      asked.queries++;
      return answer();
    },
  } as unknown as MigrationUpstream;
  return { up, asked };
}

const log = { info() {}, warn() {} } as never;

describe('source checks kept by content', () => {
  it('queries a source chart unchanged since its check passed only once; a changed one again', async () => {
    const cache = new SourceCheckCache();
    const source = side(() => passing);
    const target = side(() => passing);
    const judge = (c: ChartForCheck) =>
      judgeDashboard(
        { target: target.up, targetRelease: '6.1.0', source: source.up, sourceRelease: '6.1.0', sourceChecks: { cache, envId: 'dev' } },
        { dashboardId: 1, expectedChartUuids: ['chart-7'] },
        [chart()],
        [c],
        log,
      );
    expect((await judge(chart())).ok).toBe(true);
    expect((await judge(chart())).charts[0]!.classification).toBe('passes');
    expect(source.asked.queries).toBe(1);
    expect(target.asked.queries).toBe(2); // the target is always checked
    // The chart edited in the source: its check is made again.
    await judge(chart({ form_data: { viz_type: 'table', row_limit: 10 } }));
    expect(source.asked.queries).toBe(2);
  });

  it('never skips a source check whose last result was a failure', async () => {
    const cache = new SourceCheckCache();
    let sourceAnswer: ChartAnswer = { ok: false, error: 'no such column: region' };
    const source = side(() => sourceAnswer);
    const target = side(() => ({ ok: false, error: 'no such column: region' }));
    const judge = () =>
      judgeDashboard(
        { target: target.up, targetRelease: '6.1.0', source: source.up, sourceRelease: '6.1.0', sourceChecks: { cache, envId: 'dev' } },
        { dashboardId: 1, expectedChartUuids: ['chart-7'] },
        [chart()],
        [chart()],
        log,
      );
    expect((await judge()).charts[0]!.classification).toBe('failing_in_source');
    expect((await judge()).charts[0]!.classification).toBe('failing_in_source');
    expect(source.asked.queries).toBe(2);
    // Fixed in the source: it passes (and is kept from then on), so the target's failure is the migration's.
    sourceAnswer = passing;
    expect((await judge()).charts[0]!.classification).toBe('broken_by_migration');
    await judge();
    expect(source.asked.queries).toBe(3);
  });

  it('keeps another environment and another release apart, and forgets a kept check once it fails', () => {
    const cache = new SourceCheckCache({ max: 2 });
    const key = cache.keyOf('dev', chart(), '6.1.0');
    expect(cache.keyOf('qa', chart(), '6.1.0')).not.toBe(key);
    expect(cache.keyOf('dev', chart(), '6.0.0')).not.toBe(key);
    cache.record(key, { method: 'saved_query_context', answer: passing });
    expect(cache.get(key)?.answer).toEqual(passing);
    cache.record(key, { method: 'saved_query_context', answer: { ok: false, error: 'boom' } });
    expect(cache.get(key)).toBeUndefined();
    cache.record(key, { method: 'saved_query_context', answer: { unverifiable: 'no answer' } });
    expect(cache.get(key)).toBeUndefined();
  });

  it("hands a source dashboard's charts read beside its import to that task's verification once, and to no other task", async () => {
    const plans = new PrefetchPlans();
    const batch = await plans.open('task-1', 'migrateBatch', log);
    batch.begin('sourceChecks', 'the source checks of dashboard 5', () => Promise.resolve(), {
      sourceCharts: new Map([[5, Promise.resolve([chart()])]]),
    });
    await batch.end();
    const other = await plans.open('task-2', 'verifyMigratedBatch', log);
    expect(other.take('sourceCharts', 5)).toBeUndefined();
    await other.end();
    const verification = await plans.open('task-1', 'verifyMigratedBatch', log);
    expect(await verification.take('sourceCharts', 5)).toEqual([chart()]);
    expect(verification.take('sourceCharts', 5)).toBeUndefined(); // a retried verification reads the source itself
    await verification.end();
    expect(plans.held('task-1')).toEqual([]);
  });
});
