import { strToU8, zipSync } from 'fflate';
import { describe, expect, it } from 'vitest';
import { declaredSize } from '../../lib/archive/unzip.ts';

// What a batch measures of its export to decide whether the next batch reads wide
// (contracts/migration-batching.ts widensNext): the directory's entries and unpacked bytes, nothing inflated.
describe('declaredSize', () => {
  it("answers the directory's entries and the unpacked bytes of its files", () => {
    const zip = zipSync({
      'export/metadata.yaml': strToU8('version: 1.0.0\n'),
      'export/charts/': new Uint8Array(0),
      'export/charts/a.yaml': strToU8('x'.repeat(10_000)),
    });
    expect(zip.length).toBeLessThan(10_000); // deflated: the bytes counted are the unpacked ones
    expect(declaredSize(zip)).toEqual({ entries: 3, bytes: 15 + 10_000 });
  });
});
