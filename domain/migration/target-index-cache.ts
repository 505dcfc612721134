import { TargetIndex, type IndexOptions } from './target-index.ts';
import type { MigrationUpstream } from './upstream.ts';

/**
 * One index per task and environment in this worker, so the dashboards of a task share it;
 * bounded in number and age. Another worker (or a retry elsewhere) builds its own: a miss only
 * reads the environment again (see MigrationCaches, ./caches.ts).
 */
export class TargetIndexCache {
  private readonly entries = new Map<string, { index: Promise<TargetIndex>; at: number }>();
  private readonly maxEntries: number;
  private readonly maxAgeMs: number;

  private readonly refreshAfterMs: number;

  constructor(opts: { maxEntries?: number; maxAgeMs?: number; refreshAfterMs?: number } = {}) {
    this.maxEntries = opts.maxEntries ?? 16;
    this.maxAgeMs = opts.maxAgeMs ?? 30 * 60_000;
    this.refreshAfterMs = opts.refreshAfterMs ?? 5_000;
  }

  /**
   * The index for this key, built on first use and refreshed on a later one when due: after
   * this task imported something, or every few seconds (so it is current when a dashboard is
   * planned, without a read per dashboard when nothing was imported).
   */
  async get(key: string, upstream: MigrationUpstream, opts: IndexOptions = {}): Promise<TargetIndex> {
    const now = Date.now();
    for (const [k, e] of this.entries) if (now - e.at > this.maxAgeMs) this.entries.delete(k);
    const hit = this.entries.get(key);
    if (hit) {
      hit.at = now;
      const index = await hit.index;
      if (index.due(this.refreshAfterMs)) await index.refresh();
      return index;
    }
    const index = TargetIndex.build(upstream, opts);
    this.entries.set(key, { index, at: now });
    // expected: an index that failed to build is forgotten here; its caller awaits it and meets the error.
    index.catch(() => this.entries.delete(key));
    while (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    return index;
  }

  delete(key: string): void {
    this.entries.delete(key);
  }
}
