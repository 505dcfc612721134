/** Database connections, as Superset lists them: with `backend` (the SQL dialect), never the URI. */
import type { Pager } from '../transport/paging.ts';
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

  constructor(pager: Pager) {
    this.pager = pager;
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
