import knexFactory, { type Knex } from 'knex';
import { migrationSource } from './migrations/index.ts';

export type { Knex };

export function createKnex(url: string, opts: { poolMax?: number } = {}): Knex {
  const knex = knexFactory({
    client: 'pg',
    connection: url,
    // min 0: idle connections kept by the pool go stale on PostgreSQL without notice.
    pool: { min: 0, max: opts.poolMax ?? 10 },
    migrations: { migrationSource, tableName: 'knex_migrations' },
  });
  return knex;
}

export async function migrateLatest(knex: Knex): Promise<string[]> {
  const [, applied] = (await knex.migrate.latest()) as [number, string[]];
  return applied;
}
