/**
 * Native filters of a dashboard (its json_metadata's `native_filter_configuration`) with the
 * values a permalink's `dataMask` (or the filter's default) gives them: the raw value the filter
 * shows (`filterState.value`) and the normalised clauses Superset queries with
 * (`extraFormData.filters`, `{ col, op, val }`).
 */
export interface FilterClause {
  col: string;
  op: string;
  val: unknown;
}

export interface ImportedFilter {
  id: string;
  name: string;
  filter_type: string;
  column: string | null;
  dataset_id: number | null;
  raw_value: unknown;
  normalized: FilterClause[] | null;
  /** Where the values came from: the permalink's state, the filter's default, or nowhere. */
  value_source: 'permalink' | 'default' | 'none';
  /** Whether the reviewed dataset has the column (null until a dataset is chosen). */
  column_in_dataset: boolean | null;
}

type Json = Record<string, unknown>;
const obj = (v: unknown): Json | undefined => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : undefined);

function clauses(mask: Json | undefined): FilterClause[] | null {
  const extra = obj(mask?.extraFormData);
  const list = Array.isArray(extra?.filters) ? (extra.filters as unknown[]) : [];
  const out = list
    .map(obj)
    .filter((f): f is Json => !!f && typeof f.col === 'string' && typeof f.op === 'string')
    .map((f) => ({ col: f.col as string, op: f.op as string, val: f.val ?? null }));
  return out.length ? out : null;
}

function rawValue(mask: Json | undefined): unknown {
  const v = obj(mask?.filterState)?.value;
  if (v === undefined || v === null) return null;
  if (Array.isArray(v) && v.length === 0) return null;
  return v;
}

/** json_metadata as Superset answers it: a JSON string (or, defensively, an object). */
export function parseJsonMetadata(raw: unknown): Json {
  if (obj(raw)) return raw as Json;
  if (typeof raw !== 'string' || !raw.trim()) return {};
  try {
    return obj(JSON.parse(raw)) ?? {};
  } catch {
    // expected: params that do not parse hold no filters.
    return {};
  }
}

export function importFilters(jsonMetadata: Json, dataMask: Json | null): ImportedFilter[] {
  const config = Array.isArray(jsonMetadata.native_filter_configuration) ? (jsonMetadata.native_filter_configuration as unknown[]) : [];
  const out: ImportedFilter[] = [];
  for (const item of config.map(obj)) {
    if (!item || typeof item.id !== 'string') continue;
    if (item.type === 'DIVIDER') continue;
    const target = obj(Array.isArray(item.targets) ? item.targets[0] : undefined);
    const column = obj(target?.column)?.name;
    const fromLink = dataMask ? obj(dataMask[item.id]) : undefined;
    const fallback = obj(item.defaultDataMask);
    const linkHas = fromLink && (rawValue(fromLink) !== null || clauses(fromLink) !== null);
    const defaultHas = fallback && (rawValue(fallback) !== null || clauses(fallback) !== null);
    const mask = linkHas ? fromLink : defaultHas ? fallback : undefined;
    out.push({
      id: item.id,
      name: typeof item.name === 'string' ? item.name : item.id,
      filter_type: typeof item.filterType === 'string' ? item.filterType : 'unknown',
      column: typeof column === 'string' ? column : null,
      dataset_id: typeof target?.datasetId === 'number' ? target.datasetId : null,
      raw_value: rawValue(mask),
      normalized: clauses(mask),
      value_source: linkHas ? 'permalink' : defaultHas ? 'default' : 'none',
      column_in_dataset: null,
    });
  }
  return out;
}

/** Chart ids a dashboard's layout places (`position_json`), so a deleted chart is still named. */
export function chartIdsInLayout(positionJson: unknown): number[] {
  const layout = parseJsonMetadata(positionJson);
  const ids = new Set<number>();
  for (const node of Object.values(layout).map(obj)) {
    const id = obj(node?.meta)?.chartId;
    if (node?.type === 'CHART' && typeof id === 'number') ids.add(id);
  }
  return [...ids].sort((a, b) => a - b);
}

/** Masks a filter's raw and normalised values (what an assistant may show of a session). */
export function maskFilterValues<T extends Pick<ImportedFilter, 'raw_value' | 'normalized'>>(f: T): T {
  return {
    ...f,
    raw_value: f.raw_value === null ? null : '***',
    normalized: f.normalized ? f.normalized.map((c) => ({ ...c, val: '***' })) : null,
  };
}
