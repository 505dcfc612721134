/**
 * Annotation layers and their annotations (`/api/v1/annotation_layer/`), the same API on 4.1,
 * 5.0, 6.0 and 6.1. Charts point at a layer by its id inside their params; no export carries layers.
 */
import { SupersetUnavailableError } from '../errors.ts';
import type { Pager } from '../transport/paging.ts';
import { seg } from '../transport/paths.ts';
import type { SupersetTransport } from '../transport/transport.ts';

const LAYERS = '/api/v1/annotation_layer/';

export interface AnnotationLayer {
  id: number;
  name: string;
  descr: string | null;
}

export interface Annotation {
  id: number;
  short_descr: string;
  long_descr: string | null;
  start_dttm: string | null;
  end_dttm: string | null;
  json_metadata: string | null;
}

export type AnnotationWrite = Omit<Annotation, 'id'>;

export class AnnotationLayers {
  private readonly http: SupersetTransport;
  private readonly pager: Pager;

  constructor(http: SupersetTransport, pager: Pager) {
    this.http = http;
    this.pager = pager;
  }

  async list(): Promise<AnnotationLayer[]> {
    const rows = await this.pager.paged<{ id: number; name?: string; descr?: string | null }>(
      LAYERS,
      { columns: ['id', 'name', 'descr'], order_column: 'name', order_direction: 'asc' },
      (r) => r.id,
    );
    return rows.map((r) => ({ id: r.id, name: String(r.name ?? ''), descr: r.descr ?? null }));
  }

  async create(layer: { name: string; descr: string | null }): Promise<number> {
    const body = await this.http.request<{ id?: unknown }>('POST', LAYERS, { json: { name: layer.name, descr: layer.descr ?? '' } });
    if (typeof body.id !== 'number')
      throw new SupersetUnavailableError('bad_response', 'Superset created an annotation layer without saying its id', {
        method: 'POST',
        path: LAYERS,
      });
    return body.id;
  }

  async update(id: number, layer: { name: string; descr: string | null }): Promise<void> {
    await this.http.request('PUT', `${LAYERS}${seg(id)}`, { json: { name: layer.name, descr: layer.descr ?? '' } });
  }

  /** A layer's annotations, each with its JSON metadata (the list leaves that out: one call per annotation). */
  async annotations(layerId: number): Promise<Annotation[]> {
    const path = `${LAYERS}${seg(layerId)}/annotation/`;
    const rows = await this.pager.paged<{ id: number }>(path, { order_column: 'short_descr', order_direction: 'asc' }, (r) => r.id);
    const out: Annotation[] = [];
    for (const r of rows) {
      const body = await this.http.getJson<{ result?: Partial<Annotation> }>(`${path}${seg(r.id)}`);
      const a = body.result ?? {};
      out.push({
        id: r.id,
        short_descr: String(a.short_descr ?? ''),
        long_descr: a.long_descr ?? null,
        start_dttm: a.start_dttm ?? null,
        end_dttm: a.end_dttm ?? null,
        json_metadata: a.json_metadata ?? null,
      });
    }
    return out;
  }

  async createAnnotation(layerId: number, a: AnnotationWrite): Promise<number> {
    const path = `${LAYERS}${seg(layerId)}/annotation/`;
    const body = await this.http.request<{ id?: unknown }>('POST', path, { json: annotationBody(a) });
    if (typeof body.id !== 'number')
      throw new SupersetUnavailableError('bad_response', 'Superset created an annotation without saying its id', { method: 'POST', path });
    return body.id;
  }

  async updateAnnotation(layerId: number, id: number, a: AnnotationWrite): Promise<void> {
    await this.http.request('PUT', `${LAYERS}${seg(layerId)}/annotation/${seg(id)}`, { json: annotationBody(a) });
  }
}

/** Fields Superset's schema refuses as null are left out. */
function annotationBody(a: AnnotationWrite): Record<string, unknown> {
  const out: Record<string, unknown> = { short_descr: a.short_descr };
  for (const k of ['long_descr', 'start_dttm', 'end_dttm', 'json_metadata'] as const)
    if (a[k] !== null && a[k] !== undefined) out[k] = a[k];
  return out;
}
