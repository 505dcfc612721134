/** Datasets: the list, one dataset with its columns and metrics, what uses it, and its update. */
import { normaliseErrorBody, SupersetApiError, SupersetUnavailableError } from '../errors.ts';
import type { Pager } from '../transport/paging.ts';
import { seg } from '../transport/paths.ts';
import type { SupersetTransport } from '../transport/transport.ts';
import type { DatasetDetail, DatasetListItem, DatasetRelatedObjects, DatasetUpdate, ListQuery, ListResponse } from '../types.ts';

export const DATASET_LIST_COLUMNS = [
  'id',
  'uuid',
  'table_name',
  'schema',
  'catalog',
  'sql',
  'kind',
  'description',
  'explore_url',
  'datasource_type',
  'database.id',
  'database.database_name',
  'database.uuid',
  'owners.id',
  'owners.first_name',
  'owners.last_name',
  'changed_by_name',
  'changed_on_utc',
];

export class Datasets {
  private readonly http: SupersetTransport;
  private readonly pager: Pager;

  constructor(http: SupersetTransport, pager: Pager) {
    this.http = http;
    this.pager = pager;
  }

  list(query: ListQuery = {}): Promise<ListResponse<DatasetListItem>> {
    return this.pager.page<DatasetListItem>('dataset', {
      columns: DATASET_LIST_COLUMNS,
      orderColumn: 'table_name',
      orderDirection: 'asc',
      ...query,
    });
  }

  /** `GET /api/v1/dataset/{id}`: the dataset with every column and metric, as Superset keeps them. */
  async get(id: number): Promise<DatasetDetail> {
    const path = `/api/v1/dataset/${seg(id)}`;
    const body = await this.http.getJson<{ result?: DatasetDetail }>(path);
    const d = body.result;
    if (!d || typeof d !== 'object' || !Array.isArray(d.columns) || !Array.isArray(d.metrics)) {
      throw new SupersetUnavailableError('bad_response', `Superset answered ${path} without the dataset's columns and metrics`, {
        method: 'GET',
        path,
        upstreamStatus: 200,
      });
    }
    return d;
  }

  /** The charts and dashboards that use a dataset. */
  async relatedObjects(id: number): Promise<DatasetRelatedObjects> {
    const body = await this.http.getJson<{
      charts?: { result?: DatasetRelatedObjects['charts'] };
      dashboards?: { result?: DatasetRelatedObjects['dashboards'] };
    }>(`/api/v1/dataset/${seg(id)}/related_objects`);
    return { charts: body.charts?.result ?? [], dashboards: body.dashboards?.result ?? [] };
  }

  /**
   * `PUT /api/v1/dataset/{id}`. Superset replaces the dataset's column and metric lists with the
   * ones it is sent (a column left out is deleted), so callers send the full lists with their ids
   * (see ../dataset-edit.ts). Superset's answers carry read-only keys its update refuses as
   * "Unknown field." (timestamps, `type_generic`, and whatever a release adds): those keys are
   * dropped and the update sent once more; the answer names them. Any other refusal is thrown.
   */
  async update(id: number, body: DatasetUpdate): Promise<{ dropped: string[] }> {
    const path = `/api/v1/dataset/${seg(id)}`;
    try {
      await this.http.request('PUT', path, { json: body });
      return { dropped: [] };
    } catch (err) {
      const unknown = err instanceof SupersetApiError && err.upstreamStatus === 422 ? unknownFieldsOf(err.body) : undefined;
      if (!unknown) throw err;
      const retry = withoutKeys(body, unknown);
      await this.http.request('PUT', path, { json: retry });
      return {
        dropped: [...unknown.top, ...unknown.columns.map((k) => `columns[].${k}`), ...unknown.metrics.map((k) => `metrics[].${k}`)],
      };
    }
  }
}

/** The keys a 422 MARSHMALLOW_ERROR refused as "Unknown field.", per list; undefined when it refused anything else. */
function unknownFieldsOf(body: unknown): { top: string[]; columns: string[]; metrics: string[] } | undefined {
  const { extra } = normaliseErrorBody(body, '');
  const messages = extra?.messages;
  if (!messages || typeof messages !== 'object') return undefined;
  const out = { top: new Set<string>(), columns: new Set<string>(), metrics: new Set<string>() };
  let other = false;
  const isUnknown = (v: unknown) => Array.isArray(v) && v.length > 0 && v.every((m) => m === 'Unknown field.');
  for (const [key, value] of Object.entries(messages as Record<string, unknown>)) {
    if (isUnknown(value)) {
      out.top.add(key);
    } else if ((key === 'columns' || key === 'metrics') && value && typeof value === 'object') {
      for (const item of Object.values(value as Record<string, unknown>)) {
        for (const [k, v] of Object.entries((item ?? {}) as Record<string, unknown>)) {
          if (isUnknown(v)) out[key].add(k);
          else other = true;
        }
      }
    } else {
      other = true;
    }
  }
  if (other || out.top.size + out.columns.size + out.metrics.size === 0) return undefined;
  return { top: [...out.top], columns: [...out.columns], metrics: [...out.metrics] };
}

function withoutKeys(body: DatasetUpdate, keys: { top: string[]; columns: string[]; metrics: string[] }): DatasetUpdate {
  const drop = (o: Record<string, unknown>, ks: string[]) => Object.fromEntries(Object.entries(o).filter(([k]) => !ks.includes(k)));
  const out = drop(body, keys.top) as DatasetUpdate;
  if (body.columns) out.columns = body.columns.map((c) => drop(c, keys.columns) as DatasetUpdate['columns'][number]);
  if (body.metrics) out.metrics = body.metrics.map((m) => drop(m, keys.metrics) as DatasetUpdate['metrics'][number]);
  return out;
}
