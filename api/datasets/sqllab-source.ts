/**
 * A `sqllab` dictionary source is checked before any SQL reaches Superset: the database must be
 * the one every dataset of the request belongs to (read from Superset now), and a caller's query
 * must be one read-only SELECT for that database's dialect (lib/sql/read-only.ts decides). The
 * task then runs the parser's rendering of the query, never the caller's text.
 */
import { NotFoundError, ValidationError } from '../../lib/errors.ts';
import { checkReadOnlyQuery } from '../../lib/sql/read-only.ts';
import type { SupersetClient } from '../../lib/superset/client.ts';
import { SupersetNotFoundError } from '../../lib/superset/errors.ts';
import type { Supersets } from '../environments/upstream.ts';

/** Datasets read from Superset at once while checking a request. */
const READ_CONCURRENCY = 8;

export interface SqlLabRequest {
  envId: string;
  databaseId: number;
  datasetIds: number[];
  sql: string | null;
}

/** The database each dataset belongs to; null for a dataset Superset does not know. */
async function databasesOf(client: SupersetClient, ids: number[]): Promise<Map<number, number | null>> {
  const out = new Map<number, number | null>();
  const queue = [...ids];
  const worker = async () => {
    for (let id = queue.shift(); id !== undefined; id = queue.shift()) {
      try {
        out.set(id, (await client.datasets.get(id)).database?.id ?? null);
      } catch (err) {
        if (!(err instanceof SupersetNotFoundError)) throw err;
        out.set(id, null);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(READ_CONCURRENCY, ids.length) }, worker));
  return out;
}

/** The SQL the task may run (null: the catalog's column comments), or a 400/404 naming what is wrong. */
export async function checkSqlLabSource(supersets: Supersets, req: SqlLabRequest): Promise<{ sql: string | null }> {
  return supersets.use(req.envId, async (client, env) => {
    const database = await client.databases.find(req.databaseId);
    if (!database) throw new NotFoundError(`Database ${req.databaseId} in environment '${env.name}'`);
    let sql: string | null = null;
    if (req.sql !== null) {
      const verdict = await checkReadOnlyQuery(req.sql, database.backend);
      if (!verdict.ok) throw new ValidationError(`sql ${verdict.reason}`, [{ field: 'body.sql', message: verdict.reason }]);
      sql = verdict.sql;
    }
    const owners = await databasesOf(client, req.datasetIds);
    // A dataset Superset does not know fails alone in the task, as with any source; but the
    // query needs at least one dataset of its database to run for.
    const unknown = req.datasetIds.filter((id) => owners.get(id) === null);
    if (unknown.length === req.datasetIds.length) throw new NotFoundError(`Dataset(s) ${unknown.join(', ')} in environment '${env.name}'`);
    const elsewhere = req.datasetIds.filter((id) => owners.get(id) !== null && owners.get(id) !== req.databaseId);
    if (elsewhere.length) {
      const message = `a sqllab dictionary runs only against the database of the datasets it maps; ${elsewhere
        .map((id) => `dataset ${id} belongs to database ${owners.get(id)}`)
        .join(', ')}, not to database_id ${req.databaseId}`;
      throw new ValidationError(message, [{ field: 'body.dataset_ids', message }]);
    }
    return { sql };
  });
}
