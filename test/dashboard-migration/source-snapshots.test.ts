import { describe, expect, it } from 'vitest';
import { SOURCE_SNAPSHOT_MAX_AGE_MS, SourceSnapshots } from '../../domain/migration/caches.ts';

/** The object a task's source reads are kept under: shared by its batches, renewed with age, bounded (MigrationCaches.sourceSnapshots). */
describe('source snapshots', () => {
  it('hands a task the same snapshot until it is SOURCE_SNAPSHOT_MAX_AGE_MS old, then a new one', () => {
    let now = 1_000;
    const snapshots = new SourceSnapshots({ now: () => now });
    const first = snapshots.of('t1');
    now += SOURCE_SNAPSHOT_MAX_AGE_MS - 1;
    expect(snapshots.of('t1')).toBe(first);
    now += 1;
    const renewed = snapshots.of('t1');
    expect(renewed).not.toBe(first);
    expect(snapshots.of('t1')).toBe(renewed);
    // Another task has its own.
    expect(snapshots.of('t2')).not.toBe(renewed);
  });

  it('keeps the tasks last asked for, up to its bound', () => {
    const snapshots = new SourceSnapshots({ maxTasks: 2, now: () => 0 });
    const a = snapshots.of('a');
    const b = snapshots.of('b');
    expect(snapshots.of('a')).toBe(a); // asked again: now the most recent
    snapshots.of('c'); // past the bound: 'b', asked for least recently, goes
    expect(snapshots.of('a')).toBe(a);
    expect(snapshots.of('b')).not.toBe(b);
  });
});
