/**
 * Flask-AppBuilder's list endpoints: one page (rison `q`, 0-based `page`, at most 100 rows: FAB
 * clamps page_size to FAB_API_MAX_PAGE_SIZE), every page a few at a time, and the related-field
 * lists that page alike. Calls to one endpoint go one at a time (SupersetTransport.serialList).
 */
import { SupersetUnavailableError } from '../errors.ts';
import type { ListQuery, ListResponse, Resource } from '../types.ts';
import type { SupersetTransport } from './transport.ts';

/** Superset clamps page_size to 100 (FAB_API_MAX_PAGE_SIZE). */
export const MAX_PAGE_SIZE = 100;

export class Pager {
  private readonly http: SupersetTransport;
  /** Pages fetched at once by `all`. */
  private readonly concurrency: number;

  constructor(http: SupersetTransport, concurrency = 4) {
    this.http = http;
    this.concurrency = Math.max(1, concurrency);
  }

  /** One page of a list endpoint. `page` is 0-based; `pageSize` is clamped to 1..100. */
  page<T>(resource: Resource, query: ListQuery = {}): Promise<ListResponse<T>> {
    const path = `/api/v1/${resource}/`;
    return this.http
      .serialList(path, () => this.http.getJson<ListResponse<T>>(path, { q: listQ(query) }))
      .then((body) => {
        if (!Array.isArray(body.result) || typeof body.count !== 'number') {
          throw new SupersetUnavailableError('bad_response', `Superset's ${resource} list answered without count/result`, {
            method: 'GET',
            path: `/api/v1/${resource}/`,
          });
        }
        return body;
      });
  }

  /** Every row of a list endpoint: the first page, then the rest a few pages at a time; deduplicated by id. */
  async all<T extends { id: number }>(
    resource: Resource,
    query: Omit<ListQuery, 'page' | 'pageSize'> = {},
    maxItems = 1_000_000,
  ): Promise<T[]> {
    return (await this.allCounted<T>(resource, query, maxItems)).rows;
  }

  /**
   * `all` with the count Superset reported. Fewer distinct rows than the count means rows moved
   * between pages while they were read (a change, or ties in the order column): read again in
   * another order to complete the set.
   */
  async allCounted<T extends { id: number }>(
    resource: Resource,
    query: Omit<ListQuery, 'page' | 'pageSize'> = {},
    maxItems = 1_000_000,
  ): Promise<{ rows: T[]; count: number }> {
    const first = await this.page<T>(resource, { ...query, page: 0, pageSize: MAX_PAGE_SIZE });
    const total = Math.min(first.count, maxItems);
    const pages = Math.ceil(total / MAX_PAGE_SIZE);
    const results: T[][] = [first.result];
    let next = 1;
    const worker = async () => {
      while (next < pages) {
        const p = next++;
        results[p] = (await this.page<T>(resource, { ...query, page: p, pageSize: MAX_PAGE_SIZE })).result;
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.concurrency, Math.max(0, pages - 1)) }, worker));
    const seen = new Set<number>();
    const out: T[] = [];
    for (const page of results) {
      for (const row of page ?? []) {
        if (seen.has(row.id)) continue;
        seen.add(row.id);
        out.push(row);
        if (out.length >= maxItems) return { rows: out, count: first.count };
      }
    }
    return { rows: out, count: first.count };
  }

  /**
   * Every row of a list endpoint in the order asked for, read `batch` rows a page (at most 100)
   * and handed on as they come, so a caller can walk any depth of a list holding only a page of
   * rows (and the previous page's ids, to drop a row that moved onto the next page meanwhile).
   */
  async *stream<T extends { id: number }>(
    resource: Resource,
    query: Omit<ListQuery, 'page' | 'pageSize'> = {},
    batch = MAX_PAGE_SIZE,
  ): AsyncGenerator<T, void, undefined> {
    const size = Math.min(MAX_PAGE_SIZE, Math.max(1, batch));
    let previous = new Set<number>();
    for (let page = 0; ; page++) {
      const res = await this.page<T>(resource, { ...query, page, pageSize: size });
      const ids = new Set<number>();
      for (const row of res.result) {
        ids.add(row.id);
        if (!previous.has(row.id)) yield row;
      }
      previous = ids;
      if (!res.result.length || (page + 1) * size >= res.count) return;
    }
  }

  /**
   * Every page of a list-shaped answer (`{ count, result }`) at any path, 100 rows a page,
   * deduplicated by `key`. Stops at an empty page, so a count that shrinks meanwhile cannot loop.
   */
  async paged<T>(path: string, q: Record<string, unknown>, key: (row: T) => number): Promise<T[]> {
    const out = new Map<number, T>();
    for (let page = 0; ; page++) {
      const body = await this.http.serialList(path, () =>
        this.http.getJson<ListResponse<T>>(path, { q: { ...q, page, page_size: MAX_PAGE_SIZE } }),
      );
      if (!Array.isArray(body.result) || typeof body.count !== 'number') {
        throw new SupersetUnavailableError('bad_response', `Superset answered ${path} without count/result`, { method: 'GET', path });
      }
      for (const row of body.result) out.set(key(row), row);
      if (!body.result.length || (page + 1) * MAX_PAGE_SIZE >= body.count) return [...out.values()];
    }
  }
}

function listQ(query: ListQuery): Record<string, unknown> {
  return {
    filters: query.filters?.length ? query.filters : undefined,
    columns: query.columns,
    order_column: query.orderColumn,
    order_direction: query.orderDirection,
    page: query.page ?? 0,
    page_size: Math.min(MAX_PAGE_SIZE, Math.max(1, query.pageSize ?? 25)),
    keys: ['none'],
  };
}
