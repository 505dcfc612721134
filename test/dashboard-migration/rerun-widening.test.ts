import { describe, expect, it } from 'vitest';
import { RERUN_BATCH, widensNext, type BatchReadMeasure } from '../../contracts/migration-batching.ts';

// The one decider of a rerun's wide batches (contracts/migration-batching.ts widensNext), on its own:
// what the batch activity measures and what the workflow does with the answer are proven in
// test/workflows/migration-batching.test.ts and test/dashboard-migration/wide-reruns.test.ts.
const MB = 1024 * 1024;
const measure = (m: Partial<BatchReadMeasure>): BatchReadMeasure => ({
  dashboards: 16,
  unchanged: 16,
  sourceExport: { entries: 60, bytes: 400_000 },
  maxBytes: 64 * MB,
  maxEntries: 10_000,
  ...m,
});

describe('widensNext: when the batch after a rerun batch reads RERUN_BATCH dashboards', () => {
  it('widens after a batch that found every dashboard unchanged, with a small export', () => {
    expect(widensNext(measure({}))).toBe(true);
  });

  it('does not widen when one dashboard changed, none was held, or the batch read no export of its own', () => {
    expect(widensNext(measure({ unchanged: 15 }))).toBe(false);
    expect(widensNext(measure({ dashboards: 0, unchanged: 0 }))).toBe(false);
    expect(widensNext(measure({ sourceExport: null }))).toBe(false);
  });

  it('does not widen when the export, scaled to RERUN_BATCH dashboards, passes a quarter of either bundle limit', () => {
    const scale = RERUN_BATCH / 16;
    const quarterBytes = (64 * MB) / 4 / scale;
    expect(widensNext(measure({ sourceExport: { entries: 60, bytes: Math.floor(quarterBytes) } }))).toBe(true);
    expect(widensNext(measure({ sourceExport: { entries: 60, bytes: Math.ceil(quarterBytes) + 1 } }))).toBe(false);
    const quarterEntries = 10_000 / 4 / scale;
    expect(widensNext(measure({ sourceExport: { entries: Math.floor(quarterEntries), bytes: 1 } }))).toBe(true);
    expect(widensNext(measure({ sourceExport: { entries: Math.floor(quarterEntries) + 1, bytes: 1 } }))).toBe(false);
  });
});
