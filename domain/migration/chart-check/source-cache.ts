/**
 * Source checks that passed, kept by a worker across tasks: a source chart whose check content
 * (its release, dataset, viz type, form_data and saved query context) is as it was when its check
 * last passed is not queried again; its kept answer stands in. Only a passing answer is kept: a
 * check that failed, or could not be made, drops the entry and is asked again every time, so a
 * shortcut never skips a check whose last result was a failure. A cache only: another worker (or
 * this one after a restart) queries again.
 */
import { createHash } from 'node:crypto';
import type { ChartCheck, ChartForCheck } from './types.ts';

/** Entries kept per worker (the least recently used dropped first): a passing answer is a few hundred bytes. */
const MAX_ENTRIES = 20_000;

export class SourceCheckCache {
  private readonly entries = new Map<string, ChartCheck>();
  private readonly max: number;

  constructor(opts: { max?: number } = {}) {
    this.max = opts.max ?? MAX_ENTRIES;
  }

  /** The key of a chart's check in an environment: a hash of everything the check is made from. */
  keyOf(envId: string, chart: ChartForCheck, release: string | null): string {
    const content = [envId, release, chart.id, chart.uuid, chart.viz_type, chart.datasource, chart.form_data, chart.query_context];
    return createHash('sha256').update(JSON.stringify(content)).digest('hex');
  }

  /** The passing check kept under `key`, if any. */
  get(key: string): ChartCheck | undefined {
    const hit = this.entries.get(key);
    if (!hit) return undefined;
    this.entries.delete(key); // most recently used last
    this.entries.set(key, hit);
    return structuredClone(hit);
  }

  /** A check just made: kept when it passed, forgotten otherwise. */
  record(key: string, check: ChartCheck): void {
    this.entries.delete(key);
    if (!('ok' in check.answer) || !check.answer.ok) return;
    this.entries.set(key, structuredClone(check));
    while (this.entries.size > this.max) this.entries.delete(this.entries.keys().next().value!);
  }
}

/** What a verification needs to use the cache for one source environment. */
export interface SourceChecks {
  cache: SourceCheckCache;
  envId: string;
}
