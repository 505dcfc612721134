/** Dashboards: the list, one dashboard with its charts and datasets, permalinks, thumbnails, deletion, export. */
import { normaliseErrorBody, SupersetApiError, SupersetUnavailableError } from '../errors.ts';
import { RASTER_TYPES, rasterTypeOf } from '../raster.ts';
import type { Pager } from '../transport/paging.ts';
import { seg } from '../transport/paths.ts';
import type { SupersetTransport } from '../transport/transport.ts';
import { tryJson, type CallSpec, type WireResponse } from '../transport/wire.ts';
import type { DashboardChart, DashboardDataset, DashboardDetail, DashboardListItem, ListQuery, ListResponse, Thumbnail } from '../types.ts';
import type { Assets } from './assets.ts';

/** Dashboard list columns this project reads; unknown names are dropped by Superset, so older releases are fine. */
export const DASHBOARD_LIST_COLUMNS = [
  'id',
  'uuid',
  'dashboard_title',
  'slug',
  'url',
  'published',
  'status',
  'thumbnail_url',
  'certified_by',
  'certification_details',
  'changed_on_utc',
  'changed_on_delta_humanized',
  'changed_by.id',
  'changed_by.first_name',
  'changed_by.last_name',
  'changed_by_name',
  'created_by.id',
  'created_by.first_name',
  'created_by.last_name',
  'owners.id',
  'owners.first_name',
  'owners.last_name',
  'owners.email',
  'tags.id',
  'tags.name',
  'tags.type',
  'is_managed_externally',
];

const REDIRECTS = [301, 302, 303, 307, 308];

export class Dashboards {
  private readonly http: SupersetTransport;
  private readonly pager: Pager;
  private readonly assets: Assets;

  constructor(http: SupersetTransport, pager: Pager, assets: Assets) {
    this.http = http;
    this.pager = pager;
    this.assets = assets;
  }

  list(query: ListQuery = {}): Promise<ListResponse<DashboardListItem>> {
    return this.pager.page<DashboardListItem>('dashboard', { columns: DASHBOARD_LIST_COLUMNS, ...query });
  }

  /** By id, slug or uuid. SupersetNotFoundError when it does not exist (or the account cannot see it). */
  async get(idOrSlug: number | string): Promise<DashboardDetail> {
    return (await this.http.getJson<{ result: DashboardDetail }>(`/api/v1/dashboard/${seg(idOrSlug)}`)).result;
  }

  async charts(idOrSlug: number | string): Promise<DashboardChart[]> {
    return (await this.http.getJson<{ result: DashboardChart[] }>(`/api/v1/dashboard/${seg(idOrSlug)}/charts`)).result ?? [];
  }

  async datasets(idOrSlug: number | string): Promise<DashboardDataset[]> {
    return (await this.http.getJson<{ result: DashboardDataset[] }>(`/api/v1/dashboard/${seg(idOrSlug)}/datasets`)).result ?? [];
  }

  /**
   * `GET /api/v1/dashboard/permalink/{key}`: the dashboard a permalink names and its stored state
   * (`dataMask`, `activeTabs`, `anchor`, `urlParams`). An unknown key is a 404; a key Superset
   * cannot decode is its 500 "Fatal error".
   */
  async permalink(key: string): Promise<{ dashboardId: string; state: Record<string, unknown> }> {
    const body = await this.http.getJson<{ dashboardId?: unknown; state?: unknown }>(`/api/v1/dashboard/permalink/${seg(key)}`);
    const state = body.state && typeof body.state === 'object' && !Array.isArray(body.state) ? (body.state as Record<string, unknown>) : {};
    return { dashboardId: String(body.dashboardId ?? ''), state };
  }

  /** Deletes a dashboard (its charts and datasets stay, as in Superset's own UI). */
  async delete(id: number): Promise<void> {
    await this.http.request('DELETE', `/api/v1/dashboard/${seg(id)}`);
  }

  /** `GET /api/v1/dashboard/export/?q=!(ids)`: the ZIP bundle of those dashboards and everything they use. */
  export(ids: number[]): Promise<Buffer> {
    return this.assets.export('dashboard', ids);
  }

  /**
   * The dashboard's thumbnail. Asks with the given digest (or a placeholder) and follows
   * Superset's redirect to the current digest once, on the same origin only.
   */
  async thumbnail(id: number, digest = 'current'): Promise<Thumbnail> {
    let path = `/api/v1/dashboard/${seg(id)}/thumbnail/${seg(digest)}/`;
    for (let hop = 0; hop < 2; hop++) {
      const spec: CallSpec = {
        method: 'GET',
        path,
        accept: 'image/*, application/json',
        pass: [202, ...REDIRECTS, 404],
        maxBytes: this.http.maxBinaryBytes,
      };
      const res = await this.http.call(spec, (r) => r);
      if (REDIRECTS.includes(res.status)) {
        const next = this.http.sameOriginPath(
          String(res.headers.location ?? ''),
          new RegExp(`^/api/v1/dashboard/${id}/thumbnail/[A-Za-z0-9_-]+/$`),
        );
        if (!next || hop > 0) throw new SupersetApiError({ ...spec, upstreamStatus: res.status }, 'thumbnail redirect refused', undefined);
        path = next;
        continue;
      }
      return thumbnailOf(id, path, res);
    }
    throw new Error('unreachable');
  }
}

/** A thumbnail answer that is no redirect: being computed, missing, or a raster image. */
function thumbnailOf(id: number, path: string, res: WireResponse): Thumbnail {
  if (res.status === 202) {
    const retry = Number(res.headers['retry-after']);
    return { status: 'computing', retryAfterSeconds: Number.isFinite(retry) && retry > 0 ? retry : 5 };
  }
  if (res.status === 404) {
    const { message } = normaliseErrorBody(tryJson(res.body), 'Not found');
    return { status: 'missing', detail: message };
  }
  const contentType = String(res.headers['content-type'] ?? '')
    .split(';')[0]
    .trim()
    .toLowerCase();
  // Only raster images, recognised from their bytes (an SVG or HTML "image" could carry script).
  const raster = rasterTypeOf(res.body);
  if (!raster || !(RASTER_TYPES as readonly string[]).includes(contentType.replace('image/jpg', 'image/jpeg'))) {
    throw new SupersetUnavailableError(
      'bad_response',
      `Superset answered the thumbnail of dashboard ${id} with ${contentType || 'no content type'}${raster ? '' : ' whose bytes are not a PNG, JPEG, GIF or WebP image'}; only raster images are passed on`,
      {
        method: 'GET',
        path,
        upstreamStatus: res.status,
      },
    );
  }
  return { status: 'ready', contentType: raster, bytes: res.body };
}
