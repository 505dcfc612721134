/**
 * Custom tags (`/api/v1/tag/`): the API answers on 4.1, 5.0, 6.0 and 6.1 whether or not the
 * TAGGING_SYSTEM flag is on (the flag shows them in the UI and has exports carry them).
 * Superset's own `type:`, `owner:` and `favorited_by:` tags are never listed here.
 */
import { SupersetUnavailableError } from '../errors.ts';
import type { Pager } from '../transport/paging.ts';
import { seg } from '../transport/paths.ts';
import type { SupersetTransport } from '../transport/transport.ts';

const TAGS = '/api/v1/tag/';

/** Superset's ObjectType numbers, as its tagging routes take them. */
export const TAGGED_OBJECT_TYPES = { query: 1, chart: 2, dashboard: 3, dataset: 4 } as const;
export type TaggedObjectType = keyof typeof TAGGED_OBJECT_TYPES;

export interface Tag {
  id: number;
  name: string;
  description: string | null;
}

/** A tag as an object's own answer lists it: custom tags have type 1 (or "custom"). */
export function isCustomTag(t: { type?: unknown; name?: unknown }): boolean {
  if (t.type === 1 || t.type === 'custom' || t.type === 'TagType.custom') return true;
  // An answer without the type: Superset's implicit tags are named "kind:value".
  return t.type === undefined && typeof t.name === 'string' && !/^(type|owner|favorited_by):/.test(t.name);
}

export class Tags {
  private readonly http: SupersetTransport;
  private readonly pager: Pager;

  constructor(http: SupersetTransport, pager: Pager) {
    this.http = http;
    this.pager = pager;
  }

  /** Every custom tag with its description. */
  async list(): Promise<Tag[]> {
    const rows = await this.pager.paged<{ id: number; name?: string; type?: unknown; description?: string | null }>(
      TAGS,
      { columns: ['id', 'name', 'type', 'description'], order_column: 'name', order_direction: 'asc' },
      (r) => r.id,
    );
    return rows.filter(isCustomTag).map((r) => ({ id: r.id, name: String(r.name ?? ''), description: r.description ?? null }));
  }

  /** Creates a custom tag on these objects; its id. */
  async create(tag: { name: string; description: string | null }, objects: Array<[TaggedObjectType, number]>): Promise<number> {
    const body = await this.http.request<{ id?: unknown; result?: { id?: unknown } }>('POST', TAGS, {
      json: { name: tag.name, description: tag.description ?? '', objects_to_tag: objects },
    });
    const id = body.id ?? body.result?.id;
    if (typeof id !== 'number') {
      // 4.1 answers 201 without the id: look it up by name.
      const found = (await this.list()).find((t) => t.name === tag.name);
      if (found) return found.id;
      throw new SupersetUnavailableError('bad_response', 'Superset created a tag without saying its id', { method: 'POST', path: TAGS });
    }
    return id;
  }

  /** Sets a tag's description (its name and objects as they are). */
  async describe(id: number, tag: { name: string; description: string | null }): Promise<void> {
    await this.http.request('PUT', `${TAGS}${seg(id)}`, { json: { name: tag.name, description: tag.description ?? '' } });
  }

  /** Tags an object with these custom tags, creating those Superset lacks; its other tags stay. */
  async tagObject(type: TaggedObjectType, id: number, names: string[]): Promise<void> {
    if (!names.length) return;
    await this.http.request('POST', `${TAGS}${TAGGED_OBJECT_TYPES[type]}/${seg(id)}/`, { json: { properties: { tags: names } } });
  }
}
