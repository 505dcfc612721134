/**
 * Writes lib/sql/postgres-functions.json: the names of PostgreSQL's built-in functions (schema
 * pg_catalog) that PostgreSQL itself declares unable to write. PostgreSQL's catalog says it for
 * every function: a STABLE or IMMUTABLE one "cannot modify the database", and one that writes,
 * touches a sequence, changes settings or takes locks must be PARALLEL UNSAFE. A name is listed
 * only when every function of that name is non-volatile and parallel safe, since a query names a
 * function, not an overload. Run it when the embedded PostgreSQL moves to a new major version:
 *
 *   node scripts/sql/postgres-functions.ts
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { startEmbeddedPostgres } from '../../lib/embedded/postgres.ts';
import { createLogger } from '../../lib/logger.ts';

const OUT = path.join(import.meta.dirname, '../../lib/sql/postgres-functions.json');

const dir = mkdtempSync(path.join(os.tmpdir(), 'sy-pg-functions-'));
const server = await startEmbeddedPostgres({ dataDir: path.join(dir, 'data'), logger: createLogger('warn') });
try {
  const client = new pg.Client({ connectionString: server.url });
  await client.connect();
  const version = (await client.query<{ server_version: string }>('show server_version')).rows[0]!.server_version;
  const { rows } = await client.query<{ name: string }>(`
    select p.proname as name
    from pg_catalog.pg_proc p join pg_catalog.pg_namespace n on n.oid = p.pronamespace
    where n.nspname = 'pg_catalog' and p.prokind in ('f', 'a', 'w')
    group by p.proname
    having bool_and(p.provolatile in ('i', 's') and p.proparallel = 's')
    order by p.proname collate "C"`);
  await client.end();
  const names = rows.map((r) => r.name);
  writeFileSync(
    OUT,
    `${JSON.stringify({ postgresql: version, generated_by: 'scripts/sql/postgres-functions.ts', functions: names }, null, 1)}\n`,
  );
  console.log(`${names.length} function names from PostgreSQL ${version} written to ${path.relative(process.cwd(), OUT)}`);
} finally {
  await server.stop();
  // As root the cluster may live in a fallback folder of its own (resolveClusterDir), with its password file beside it.
  const own = path.join(dir, 'data');
  if (server.dataDir !== own) rmSync(path.dirname(server.dataDir), { recursive: true, force: true });
  rmSync(dir, { recursive: true, force: true });
}
