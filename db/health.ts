import type { Knex } from 'knex';

/** The readiness probe's view of the database: it answers a query. */
export class DatabaseHealthStore {
  private readonly knex: Knex;

  constructor(knex: Knex) {
    this.knex = knex;
  }

  async ping(): Promise<void> {
    await this.knex.raw('select 1');
  }
}
