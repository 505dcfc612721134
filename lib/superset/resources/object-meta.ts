/**
 * What people set on a dashboard, chart or dataset besides its content, read and written through
 * each object's own API: owners, dashboard roles (DASHBOARD_RBAC), custom tags, certification, and
 * a chart's params (where it points at annotation layers by id). The same fields on 4.1 to 6.1.
 */
import { seg } from '../transport/paths.ts';
import { MAX_PAGE_SIZE, type Pager } from '../transport/paging.ts';
import type { SupersetTransport } from '../transport/transport.ts';
import { isCustomTag } from './tags.ts';

export type MetaKind = 'dashboard' | 'chart' | 'dataset';
type ListedKind = MetaKind;

/** An object's meta as its list endpoint gives it, with what a chart's row adds. */
export type ListedMeta = ObjectMeta & {
  /** Charts: the dataset it reads. */
  datasource?: { id: number; type: string };
  /** Charts: Superset's `Slice.form_data`, as `/dashboard/{id}/charts` gives it. */
  form_data?: Record<string, unknown>;
  /** Charts: the dashboards it is on. */
  dashboard_ids?: number[];
};

export interface ObjectMeta {
  id: number;
  uuid: string | null;
  name: string;
  owners: Array<{ id: number; first_name: string | null; last_name: string | null; email: string | null }>;
  /** Dashboards only. */
  roles: Array<{ id: number; name: string }>;
  /** Custom tags (Superset's implicit `type:`/`owner:` tags left out). */
  tags: string[];
  certified_by: string | null;
  certification_details: string | null;
  /** Charts only: the params as stored (a JSON string). */
  params: string | null;
  /** Dashboards only. */
  css: string | null;
  /**
   * Dashboards only: the id of the theme it uses (null: none, or a release without themes), from
   * the same answer as the rest. Absent in what an older backup recorded (read it apart then).
   */
  theme_id?: number | null;
  /**
   * Dashboards only, when theme_id is absent: the uuid of its theme as the dashboard's export names
   * it (null: none; the export of a release without themes names none).
   */
  theme_uuid?: string | null;
  /** Datasets only. */
  database_id: number | null;
  sql: string | null;
  table_name: string | null;
}

/** The fields an update may set: owners and roles by id in the instance written to. */
export interface ObjectMetaWrite {
  owners?: number[];
  roles?: number[];
  certified_by?: string;
  certification_details?: string;
  params?: string;
}

const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);

/** The list columns that give what a detail read gives (unknown names are dropped by Superset, so one set serves 4.1 to 6.1). */
const LIST_COLUMNS: Record<ListedKind, string[]> = {
  // A dashboard's CSS and theme are not list columns from 5.0 (../../../domain/migration/companions/views.ts takes them from the export).
  dashboard: [
    'id',
    'uuid',
    'dashboard_title',
    // No owners.email: a dashboard's detail gives none (4.1 to 6.1), and the list stands in for it.
    'owners.id',
    'owners.first_name',
    'owners.last_name',
    'roles.id',
    'roles.name',
    'tags.id',
    'tags.name',
    'tags.type',
    'certified_by',
    'certification_details',
  ],
  chart: [
    'id',
    'uuid',
    'slice_name',
    'owners.id',
    'owners.first_name',
    'owners.last_name',
    'owners.email',
    'tags.id',
    'tags.name',
    'tags.type',
    'certified_by',
    'certification_details',
    'params',
    'datasource_id',
    'datasource_type',
    // What `/dashboard/{id}/charts` gives of each chart: Superset's own `Slice.form_data` (params with its id, viz type and dataset).
    'form_data',
    'dashboards.id',
  ],
  dataset: ['id', 'uuid', 'table_name', 'owners.id', 'owners.first_name', 'owners.last_name', 'owners.email', 'database.id', 'sql'],
};

/** An object's meta from its detail answer or its list row (the same field names in both). */
function metaFrom(kind: MetaKind, id: number, r: Record<string, unknown>): ObjectMeta {
  const list = (v: unknown) => (Array.isArray(v) ? (v as Array<Record<string, unknown>>) : []);
  return {
    id,
    uuid: str(r.uuid),
    name: String(r.dashboard_title ?? r.slice_name ?? r.table_name ?? ''),
    owners: list(r.owners).map((o) => ({
      id: Number(o.id),
      first_name: str(o.first_name),
      last_name: str(o.last_name),
      email: str(o.email),
    })),
    roles: list(r.roles).map((o) => ({ id: Number(o.id), name: String(o.name ?? '') })),
    // 6.1 with DASHBOARD_LIST_CUSTOM_TAGS_ONLY answers a list's `tags.*` columns as `custom_tags`.
    tags: list(r.tags ?? r.custom_tags)
      .filter(isCustomTag)
      .map((t) => String(t.name ?? '')),
    certified_by: str(r.certified_by),
    certification_details: str(r.certification_details),
    params: str(r.params),
    css: str(r.css),
    ...(kind === 'dashboard'
      ? {
          theme_id:
            typeof (r.theme as { id?: unknown } | null | undefined)?.id === 'number' ? Number((r.theme as { id: number }).id) : null,
        }
      : {}),
    database_id: typeof (r.database as { id?: unknown } | undefined)?.id === 'number' ? Number((r.database as { id: number }).id) : null,
    sql: str(r.sql),
    table_name: str(r.table_name),
  };
}

/** A list row's meta without what only a chart's row adds: what a detail read gives. */
export function plainMeta(row: ListedMeta): ObjectMeta {
  const { datasource: _d, form_data: _f, dashboard_ids: _i, ...meta } = row;
  return meta;
}

/** The columns ObjectMetas.listed asks of this kind's list (a caller listing the same rows another way asks for these too). */
export function listedColumns(kind: ListedKind): string[] {
  return [...LIST_COLUMNS[kind]];
}

/**
 * A list row (read with listedColumns) as ObjectMetas.listed answers it; undefined for a row it
 * leaves to the detail read: a dashboard or chart without its tags (a release or setting that does
 * not list them).
 */
export function listedRow(kind: ListedKind, r: Record<string, unknown>): ListedMeta | undefined {
  if (kind !== 'dataset' && !Array.isArray(r.tags ?? r.custom_tags)) return undefined;
  return listedFrom(kind, Number(r.id), r);
}

/** A list row's meta with what a chart's row adds (ListedMeta). */
function listedFrom(kind: ListedKind, id: number, r: Record<string, unknown>): ListedMeta {
  const meta: ListedMeta = metaFrom(kind, id, r);
  if (kind !== 'chart') return meta;
  if (typeof r.datasource_id === 'number') meta.datasource = { id: r.datasource_id, type: String(r.datasource_type ?? 'table') };
  if (r.form_data && typeof r.form_data === 'object' && !Array.isArray(r.form_data))
    meta.form_data = r.form_data as Record<string, unknown>;
  if (Array.isArray(r.dashboards))
    meta.dashboard_ids = (r.dashboards as Array<{ id?: unknown }>).flatMap((d) => (typeof d.id === 'number' ? [d.id] : []));
  return meta;
}

export class ObjectMetas {
  private readonly http: SupersetTransport;
  private readonly lists: Pager;

  constructor(http: SupersetTransport, lists: Pager) {
    this.http = http;
    this.lists = lists;
  }

  async get(kind: MetaKind, id: number): Promise<ObjectMeta> {
    const r = (await this.http.getJson<{ result?: Record<string, unknown> }>(`/api/v1/${kind}/${seg(id)}`)).result ?? {};
    const meta = metaFrom(kind, id, r);
    if (meta.uuid === null && kind !== 'dashboard') meta.uuid = await this.uuidFromList(kind, id);
    return meta;
  }

  /**
   * The dashboards, charts or datasets of these ids, from their list endpoint (up to 100 ids a
   * call): one call instead of one detail read each, with the same fields (the lists carry the
   * uuid on every release) except a dashboard's CSS and theme, which its export gives. An id the
   * list does not answer (gone, or hidden from the service account) is left out; the caller reads
   * it on its own to meet Superset's own answer.
   */
  async listed(kind: ListedKind, ids: readonly number[]): Promise<ListedMeta[]> {
    const out: ListedMeta[] = [];
    const unique = [...new Set(ids)];
    for (let at = 0; at < unique.length; at += MAX_PAGE_SIZE) {
      const chunk = unique.slice(at, at + MAX_PAGE_SIZE);
      const page = await this.lists.page<Record<string, unknown>>(kind, {
        filters: [{ col: 'id', opr: 'in', value: chunk }],
        columns: LIST_COLUMNS[kind],
        pageSize: MAX_PAGE_SIZE,
      });
      for (const r of page.result) {
        const row = chunk.includes(Number(r.id)) ? listedRow(kind, r) : undefined;
        if (row) out.push(row);
      }
    }
    return out;
  }

  /**
   * 4.1 and 5.0 leave the uuid out of a chart's and a dataset's detail (their lists have it on
   * every release): without it a chart could not be paired with its copy in the other
   * environment (an alert's chart, a chart's tags and annotation layers).
   */
  private async uuidFromList(kind: 'chart' | 'dataset', id: number): Promise<string | null> {
    const path = `/api/v1/${kind}/`;
    const q = { columns: ['id', 'uuid'], filters: [{ col: 'id', opr: 'eq', value: id }], page: 0, page_size: 1 };
    const body = await this.http.serialList(path, () =>
      this.http.getJson<{ result?: Array<{ id?: unknown; uuid?: unknown }> }>(path, { q }),
    );
    return str((body.result ?? []).find((row) => Number(row.id) === id)?.uuid);
  }

  /** `PUT /api/v1/{kind}/{id}` with only these fields; the rest of the object stays as it is. */
  async set(kind: MetaKind, id: number, fields: ObjectMetaWrite): Promise<void> {
    await this.http.request('PUT', `/api/v1/${kind}/${seg(id)}`, { json: fields });
  }
}
