/** CSS templates (`/api/v1/css_template/`), the same API on 4.1, 5.0, 6.0 and 6.1; no export carries them. */
import { SupersetUnavailableError } from '../errors.ts';
import type { Pager } from '../transport/paging.ts';
import { seg } from '../transport/paths.ts';
import type { SupersetTransport } from '../transport/transport.ts';

const TEMPLATES = '/api/v1/css_template/';

export interface CssTemplate {
  id: number;
  template_name: string;
  css: string;
}

export class CssTemplates {
  private readonly http: SupersetTransport;
  private readonly pager: Pager;

  constructor(http: SupersetTransport, pager: Pager) {
    this.http = http;
    this.pager = pager;
  }

  async list(): Promise<CssTemplate[]> {
    const rows = await this.pager.paged<{ id: number; template_name?: string; css?: string | null }>(
      TEMPLATES,
      { columns: ['id', 'template_name', 'css'], order_column: 'template_name', order_direction: 'asc' },
      (r) => r.id,
    );
    return rows.map((r) => ({ id: r.id, template_name: String(r.template_name ?? ''), css: r.css ?? '' }));
  }

  async create(t: { template_name: string; css: string }): Promise<number> {
    const body = await this.http.request<{ id?: unknown }>('POST', TEMPLATES, { json: t });
    if (typeof body.id !== 'number')
      throw new SupersetUnavailableError('bad_response', 'Superset created a CSS template without saying its id', {
        method: 'POST',
        path: TEMPLATES,
      });
    return body.id;
  }

  async update(id: number, t: { template_name: string; css: string }): Promise<void> {
    await this.http.request('PUT', `${TEMPLATES}${seg(id)}`, { json: t });
  }
}
