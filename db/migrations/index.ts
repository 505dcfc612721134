import type { Knex } from 'knex';
import * as m001 from './20261122_001_tasks.ts';
import * as m002 from './20261122_002_identity.ts';

interface MigrationModule {
  up(knex: Knex): Promise<void>;
  down(knex: Knex): Promise<void>;
}

/** A static list, so migrations behave the same under node, vitest and the Temporal worker. */
const migrations: Array<[string, MigrationModule]> = [
  ['20261122_001_tasks', m001],
  ['20261122_002_identity', m002],
];

export const migrationSource: Knex.MigrationSource<[string, MigrationModule]> = {
  getMigrations: async () => migrations,
  getMigrationName: ([name]) => name,
  getMigration: async ([, mod]) => mod,
};
