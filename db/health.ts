import type { Knex } from 'knex';

/** The readiness probe's and the selfcheck's view of the database: it answers a query, and says what it is. */
export class DatabaseHealthStore {
  private readonly knex: Knex;

  constructor(knex: Knex) {
    this.knex = knex;
  }

  async ping(): Promise<void> {
    await this.knex.raw('select 1');
  }

  /** The server's version line, without its build details ("PostgreSQL 17.2"). */
  async version(): Promise<string> {
    const { rows } = await this.knex.raw<{ rows: Array<{ version: string }> }>('select version() as version');
    return rows[0].version.split(' on ')[0];
  }
}
