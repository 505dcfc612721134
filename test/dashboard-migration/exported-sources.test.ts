import { describe, expect, it } from 'vitest';
import type { Bundle } from '../../lib/bundles/bundle.ts';
import { ExportedSources } from '../../domain/migration/caches.ts';

// What a batch measures of the source exports that brought its dashboards, for widensNext
// (domain/migration/batch.ts widensAfter): its own export's, and the share of one an earlier batch
// read ahead for it (domain/migration/read-ahead.ts keepSourceExport gives each dashboard its share).
const bundle = {} as Bundle;

describe('ExportedSources.measureOf: the size of the exports that brought these dashboards', () => {
  it('sums the shares of two exports, its own and one read ahead', () => {
    const kept = new ExportedSources();
    // An export of 2 dashboards (10 entries, 4,000 bytes), and a wider one of 4 (12 entries, 6,000 bytes).
    for (const id of [1, 2]) kept.put('t', id, bundle, { entries: 5, bytes: 2_000 });
    for (const id of [3, 4, 5, 6]) kept.put('t', id, bundle, { entries: 3, bytes: 1_500 });
    expect(kept.measureOf('t', [1, 2, 3, 4, 5, 6])).toEqual({ entries: 22, bytes: 10_000 });
    expect(kept.measureOf('t', [2, 3])).toEqual({ entries: 8, bytes: 3_500 });
  });

  it('knows nothing when one dashboard is not held, came without a share, or belongs to another task', () => {
    const kept = new ExportedSources();
    kept.put('t', 1, bundle, { entries: 5, bytes: 2_000 });
    kept.put('t', 2, bundle);
    expect(kept.measureOf('t', [1, 2])).toBeNull();
    expect(kept.measureOf('t', [1, 3])).toBeNull();
    expect(kept.measureOf('other', [1])).toBeNull();
    kept.forget('t', 1);
    expect(kept.measureOf('t', [1])).toBeNull();
    expect(kept.get('t', 2)).toBe(bundle);
  });
});
