/** Saved queries (`/api/v1/saved_query/`), the same API on 4.1, 5.0, 6.0 and 6.1; no export of a dashboard carries them. */
import { SupersetUnavailableError } from '../errors.ts';
import type { Pager } from '../transport/paging.ts';
import { seg } from '../transport/paths.ts';
import type { SupersetTransport } from '../transport/transport.ts';

const QUERIES = '/api/v1/saved_query/';

export interface SavedQuery {
  id: number;
  label: string;
  description: string | null;
  db_id: number | null;
  schema: string | null;
  catalog: string | null;
  sql: string;
}

export type SavedQueryWrite = Omit<SavedQuery, 'id'>;

export class SavedQueries {
  private readonly http: SupersetTransport;
  private readonly pager: Pager;

  constructor(http: SupersetTransport, pager: Pager) {
    this.http = http;
    this.pager = pager;
  }

  /** Every saved query the service account may see (Superset shows each user only their own, admins included). */
  async list(): Promise<SavedQuery[]> {
    type Row = {
      id: number;
      label?: string;
      description?: string | null;
      db_id?: number | null;
      database?: { id?: number };
      schema?: string | null;
      catalog?: string | null;
      sql?: string | null;
    };
    const rows = await this.pager.paged<Row>(
      QUERIES,
      {
        columns: ['id', 'label', 'description', 'db_id', 'database.id', 'schema', 'catalog', 'sql'],
        order_column: 'label',
        order_direction: 'asc',
      },
      (r) => r.id,
    );
    return rows.map((r) => ({
      id: r.id,
      label: String(r.label ?? ''),
      description: r.description ?? null,
      db_id: r.db_id ?? r.database?.id ?? null,
      schema: r.schema ?? null,
      catalog: r.catalog ?? null,
      sql: r.sql ?? '',
    }));
  }

  async create(q: SavedQueryWrite): Promise<number> {
    const body = await this.http.request<{ id?: unknown }>('POST', QUERIES, { json: queryBody(q) });
    if (typeof body.id !== 'number')
      throw new SupersetUnavailableError('bad_response', 'Superset created a saved query without saying its id', {
        method: 'POST',
        path: QUERIES,
      });
    return body.id;
  }

  async update(id: number, q: SavedQueryWrite): Promise<void> {
    await this.http.request('PUT', `${QUERIES}${seg(id)}`, { json: queryBody(q) });
  }
}

/** `catalog` only when set: 4.1 has no such field and refuses it. */
function queryBody(q: SavedQueryWrite): Record<string, unknown> {
  const out: Record<string, unknown> = {
    label: q.label,
    description: q.description ?? '',
    db_id: q.db_id,
    schema: q.schema ?? '',
    sql: q.sql,
  };
  if (q.catalog) out.catalog = q.catalog;
  return out;
}
