import knexFactory, { type Knex } from 'knex';
import { migrationSource } from './migrations/index.ts';

export type { Knex };

export interface KnexOptions {
  poolMax?: number;
  /**
   * Keep every connection the pool has opened (min = max) instead of closing idle ones; with
   * `fillPool` at start, requests never wait for one to open. For the API: opening a connection
   * (a new server process, SCRAM, a cold catalog cache) cost a request 15-55 ms under bench:tasks
   * whenever a burst needed more connections than the pool held.
   */
  keepWarm?: boolean;
}

export function createKnex(url: string, opts: KnexOptions = {}): Knex {
  const max = opts.poolMax ?? 10;
  const knex = knexFactory({
    client: 'pg',
    // TCP keepalives tell a connection the server or network dropped while idle; one that ended
    // is refused by the pool's validation and replaced.
    connection: { connectionString: url, keepAlive: true },
    pool: { min: opts.keepWarm ? max : 0, max },
    migrations: { migrationSource, tableName: 'knex_migrations' },
  });
  return knex;
}

/** Knex's pool as seen from outside a query: connections taken and given back by hand. */
export interface PooledClient<C = unknown> {
  pool?: { max?: number };
  acquireConnection(): Promise<C>;
  releaseConnection(connection: C): Promise<unknown>;
}

export function pooledClient<C = unknown>(knex: Knex): PooledClient<C> {
  return knex.client as unknown as PooledClient<C>;
}

/**
 * Opens all of a pool's connections now, so no request waits for one later. They are held all at
 * once: queries run side by side could finish on fewer connections while the last ones are still
 * being opened.
 */
export async function fillPool(knex: Knex): Promise<void> {
  const client = pooledClient(knex);
  const max = client.pool?.max ?? 1;
  const held = await Promise.allSettled(Array.from({ length: max }, () => client.acquireConnection()));
  await Promise.all(held.flatMap((h) => (h.status === 'fulfilled' ? [client.releaseConnection(h.value)] : [])));
  const failed = held.find((h) => h.status === 'rejected');
  if (failed) throw failed.reason;
}

/** One key per database for every Switchyard migrator (an advisory lock's 64-bit key, from its name). */
const MIGRATION_LOCK = 'switchyard.knex_migrations';

/**
 * Applies pending migrations, one migrator at a time per database: a PostgreSQL advisory lock held
 * by a transaction of its own while knex migrates on the pool's other connections (the pool needs
 * two). Knex's own lock refuses a second migrator rather than waiting, and two first runs race to
 * create its tables; pods started together (the Helm chart's init steps) queue here instead, and
 * those after the first find nothing to do. The lock ends with its connection if the process dies.
 */
export async function migrateLatest(knex: Knex): Promise<string[]> {
  return knex.transaction(async (lock) => {
    await lock.raw('select pg_advisory_xact_lock(hashtext(?))', [MIGRATION_LOCK]);
    const [, applied] = (await knex.migrate.latest()) as [number, string[]];
    return applied;
  });
}

/** Names of the migrations this code has that the database has not applied (all of them on an empty database). */
export async function pendingMigrations(knex: Knex): Promise<string[]> {
  if (!(await knex.schema.hasTable('knex_migrations'))) {
    const all = await migrationSource.getMigrations([]);
    return all.map((m) => migrationSource.getMigrationName(m));
  }
  const [, pending] = (await knex.migrate.list()) as [unknown[], { file: string }[]];
  return pending.map((p) => p.file);
}
