/** Database connections, as Superset lists them: with `backend` (the SQL dialect), never the URI. */
import type { Pager } from '../transport/paging.ts';
import { seg } from '../transport/paths.ts';
import type { SupersetTransport } from '../transport/transport.ts';
import type { DatabaseInfo } from '../types.ts';

export const DATABASE_LIST_COLUMNS = [
  'id',
  'uuid',
  'database_name',
  'backend',
  'expose_in_sqllab',
  'allow_dml',
  'allow_run_async',
  'allow_multi_catalog',
];

export class Databases {
  private readonly pager: Pager;
  private readonly http: SupersetTransport;

  constructor(pager: Pager, http: SupersetTransport) {
    this.pager = pager;
    this.http = http;
  }

  /**
   * A connection's SQLAlchemy URI as Superset shows it (password masked): where its default
   * catalog is read from (Superset's engine specs derive it from the URI; no endpoint names it).
   */
  async connectionUri(id: number): Promise<string | null> {
    const body = await this.http.getJson<{ result?: { sqlalchemy_uri?: string } }>(`/api/v1/database/${seg(id)}/connection`);
    return body.result?.sqlalchemy_uri ?? null;
  }

  /** Every catalog the connection can reach, as Superset lists them for it (4.1 and later). */
  async catalogs(id: number): Promise<string[]> {
    const body = await this.http.getJson<{ result?: string[] }>(`/api/v1/database/${seg(id)}/catalogs/`);
    return body.result ?? [];
  }

  /** Every database connection (the list never exposes URIs). */
  list(): Promise<DatabaseInfo[]> {
    return this.pager.all<DatabaseInfo>('database', {
      columns: DATABASE_LIST_COLUMNS,
      orderColumn: 'database_name',
      orderDirection: 'asc',
    });
  }

  /** One database connection as the list shows it, or undefined. */
  async find(id: number): Promise<DatabaseInfo | undefined> {
    return (await this.list()).find((d) => d.id === id);
  }
}
