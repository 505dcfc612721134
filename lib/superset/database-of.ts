import type { SupersetClient } from './client.ts';
import type { DatabaseInfo } from './types.ts';

/** One database connection as Superset lists it (with `backend`, the SQL dialect; never the URI), or undefined. */
export async function databaseOf(client: SupersetClient, id: number): Promise<DatabaseInfo | undefined> {
  return (await client.listDatabases()).find((d) => d.id === id);
}
