/**
 * What people set on a dashboard, chart or dataset besides its content, read and written through
 * each object's own API: owners, dashboard roles (DASHBOARD_RBAC), custom tags, certification, and
 * a chart's params (where it points at annotation layers by id). The same fields on 4.1 to 6.1.
 */
import { seg } from '../transport/paths.ts';
import type { SupersetTransport } from '../transport/transport.ts';
import { isCustomTag } from './tags.ts';

export type MetaKind = 'dashboard' | 'chart' | 'dataset';

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

export class ObjectMetas {
  private readonly http: SupersetTransport;

  constructor(http: SupersetTransport) {
    this.http = http;
  }

  async get(kind: MetaKind, id: number): Promise<ObjectMeta> {
    const r = (await this.http.getJson<{ result?: Record<string, unknown> }>(`/api/v1/${kind}/${seg(id)}`)).result ?? {};
    const list = (v: unknown) => (Array.isArray(v) ? (v as Array<Record<string, unknown>>) : []);
    return {
      id,
      uuid: str(r.uuid) ?? (kind === 'dashboard' ? null : await this.uuidFromList(kind, id)),
      name: String(r.dashboard_title ?? r.slice_name ?? r.table_name ?? ''),
      owners: list(r.owners).map((o) => ({
        id: Number(o.id),
        first_name: str(o.first_name),
        last_name: str(o.last_name),
        email: str(o.email),
      })),
      roles: list(r.roles).map((o) => ({ id: Number(o.id), name: String(o.name ?? '') })),
      tags: list(r.tags)
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
