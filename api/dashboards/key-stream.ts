/**
 * A page cut from lists walked as streams (Pager.stream), so a page at any depth is served while
 * holding only a page of keys of each list, never every key up to the page's end.
 */

type Keyed = { id: number; changed_on_utc?: string | null };

/**
 * Rows `from` (0-based, inclusive) to `to` (exclusive) of two streams, each sorted by
 * `changed_on_utc` descending, merged into one and each id kept once. Ties: the first stream's
 * row first, as mergeByChangedOn. Stops reading as soon as the window is full.
 */
export async function mergedWindow<T extends Keyed>(a: AsyncIterator<T>, b: AsyncIterator<T>, from: number, to: number): Promise<T[]> {
  const out: T[] = [];
  // A row in both lists comes out of both at the same `changed_on`: only ids of the current run
  // of equal times need remembering.
  let seen = new Set<number>();
  let run: string | undefined;
  const key = (r: T) => r.changed_on_utc ?? '';
  let ra = await a.next();
  let rb = await b.next();
  let index = 0;
  while (index < to && !(ra.done && rb.done)) {
    const takeA = rb.done || (!ra.done && key(ra.value) >= key(rb.value));
    const row = takeA ? (ra.value as T) : (rb.value as T);
    if (takeA) ra = await a.next();
    else rb = await b.next();
    if (key(row) !== run) [seen, run] = [new Set(), key(row)];
    if (seen.has(row.id)) continue;
    seen.add(row.id);
    if (index >= from) out.push(row);
    index++;
  }
  await Promise.all([a.return?.(), b.return?.()]);
  return out;
}

/** The rows of a stream that `keep`, counted in full, and those in the window [from, to). */
export async function filteredWindow<T>(
  rows: AsyncIterable<T>,
  keep: (row: T) => boolean,
  from: number,
  to: number,
): Promise<{ window: T[]; total: number }> {
  const window: T[] = [];
  let total = 0;
  for await (const row of rows) {
    if (!keep(row)) continue;
    if (total >= from && total < to) window.push(row);
    total++;
  }
  return { window, total };
}
