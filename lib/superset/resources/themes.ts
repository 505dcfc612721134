/**
 * Themes (`/api/v1/theme/`, Superset 6.0 and later; 4.1 and 5.0 answer 404). A dashboard names
 * its theme by id (`theme` in `GET /api/v1/dashboard/{id}`, `theme_id` to set it); the bundle
 * names it by uuid (`theme_uuid`, `themes/*.yaml`), and Superset's dashboard import never
 * overwrites a theme the target already has. The theme API's own POST assigns a new uuid, so a
 * theme is created through the theme import (a bundle of one theme, its uuid kept) and updated
 * through PUT.
 */
import { strToU8, zipSync } from 'fflate';
import { FormData } from 'undici';
import { normaliseErrorBody, SupersetImportError } from '../errors.ts';
import type { Pager } from '../transport/paging.ts';
import { seg } from '../transport/paths.ts';
import type { SupersetTransport } from '../transport/transport.ts';
import { tryJson, type CallSpec } from '../transport/wire.ts';

const THEMES = '/api/v1/theme/';

export interface Theme {
  id: number;
  uuid: string;
  theme_name: string;
  /** The theme's configuration as Superset stores it: a JSON text. */
  json_data: string;
}

export class Themes {
  private readonly http: SupersetTransport;
  private readonly pager: Pager;

  constructor(http: SupersetTransport, pager: Pager) {
    this.http = http;
    this.pager = pager;
  }

  /** Every theme (a release without themes: SupersetNotFoundError). */
  async list(): Promise<Theme[]> {
    const rows = await this.pager.paged<{ id: number; uuid?: string; theme_name?: string; json_data?: string | null }>(
      THEMES,
      { columns: ['id', 'uuid', 'theme_name', 'json_data'], order_column: 'theme_name', order_direction: 'asc' },
      (r) => r.id,
    );
    return rows.map((r) => ({
      id: r.id,
      uuid: String(r.uuid ?? ''),
      theme_name: String(r.theme_name ?? ''),
      json_data: r.json_data ?? '',
    }));
  }

  /** The id of the theme a dashboard uses; null when it has none (or the release has no themes). */
  async ofDashboard(dashboardId: number): Promise<number | null> {
    const body = await this.http.getJson<{ result?: { theme?: { id?: unknown } | null } }>(`/api/v1/dashboard/${seg(dashboardId)}`);
    const id = body.result?.theme?.id;
    return typeof id === 'number' ? id : null;
  }

  /** Points a dashboard at a theme (`theme_id`). */
  async link(dashboardId: number, themeId: number): Promise<void> {
    await this.http.request('PUT', `/api/v1/dashboard/${seg(dashboardId)}`, { json: { theme_id: themeId } });
  }

  async update(id: number, t: Pick<Theme, 'theme_name' | 'json_data'>): Promise<void> {
    await this.http.request('PUT', `${THEMES}${seg(id)}`, { json: { theme_name: t.theme_name, json_data: t.json_data } });
  }

  /**
   * Creates the theme with its own uuid: `POST /api/v1/theme/import/` with a bundle of this one
   * theme (JSON is YAML to Superset's loader), `overwrite` true so a theme of that uuid is updated.
   */
  async importOne(t: Omit<Theme, 'id'>, now: Date = new Date()): Promise<void> {
    let config: unknown = t.json_data;
    try {
      config = JSON.parse(t.json_data);
    } catch {
      // expected: Superset stores what its schema accepted; an unreadable one goes as the text it is.
      // Superset stores what its schema accepted; an unreadable one goes as the text it is.
    }
    const zip = zipSync({
      'theme_export/metadata.yaml': strToU8(JSON.stringify({ version: '1.0.0', type: 'Theme', timestamp: now.toISOString() })),
      'theme_export/themes/theme.yaml': strToU8(
        JSON.stringify({ theme_name: t.theme_name, json_data: config, uuid: t.uuid, version: '1.0.0' }),
      ),
    });
    const form = new FormData();
    form.set('formData', new Blob([zip], { type: 'application/zip' }), 'theme.zip');
    form.set('overwrite', 'true');
    const spec: CallSpec = { method: 'POST', path: `${THEMES}import/`, form, pass: [400, 422] };
    await this.http.call(spec, (res) => {
      if (res.status === 400 || res.status === 422) {
        const body = tryJson(res.body);
        const { message } = normaliseErrorBody(body, `HTTP ${res.status}`);
        throw new SupersetImportError({ method: 'POST', path: spec.path, upstreamStatus: res.status }, message, body, {});
      }
      return undefined;
    });
  }
}
