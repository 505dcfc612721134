import type { Knex } from 'knex';
import { findEnvironment, getEnvironment, isUuid, type EnvironmentRow } from './repository.ts';

/** The environments table: the one way to look an environment up. */
export class EnvironmentStore {
  private readonly knex: Knex;

  constructor(knex: Knex) {
    this.knex = knex;
  }

  /** undefined for an unknown or malformed id (both are "no such environment"). */
  find(id: string): Promise<EnvironmentRow | undefined> {
    return findEnvironment(this.knex, id);
  }

  /** NotFoundError (404) when unknown. */
  get(id: string): Promise<EnvironmentRow> {
    return getEnvironment(this.knex, id);
  }

  /** Names of the given environments (unknown ids are left out). */
  async namesById(ids: readonly string[]): Promise<Map<string, string>> {
    const valid = ids.filter(isUuid);
    if (!valid.length) return new Map();
    const rows = await this.knex<EnvironmentRow>('environments').whereIn('id', valid).select('id', 'name');
    return new Map(rows.map((r) => [r.id, r.name]));
  }
}
