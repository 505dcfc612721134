import type { Knex } from 'knex';

/** An accepted database mapping between two environments (one target per source database and pair). */
export interface DatabaseMappingRow {
  id: string;
  source_env_id: string;
  target_env_id: string;
  source_database_id: number;
  source_database_name: string;
  source_database_uuid: string | null;
  target_database_id: number;
  target_database_name: string;
  target_database_uuid: string | null;
  created_by: string | null;
  updated_by: string | null;
  created_at: Date;
  updated_at: Date;
}

export type DatabaseMappingInput = Pick<
  DatabaseMappingRow,
  | 'source_database_id'
  | 'source_database_name'
  | 'source_database_uuid'
  | 'target_database_id'
  | 'target_database_name'
  | 'target_database_uuid'
>;

/** The `database_mappings` table: the accepted mappings of each pair of environments. */
export class DatabaseMappingStore {
  private readonly knex: Knex;

  constructor(knex: Knex) {
    this.knex = knex;
  }

  /** The pair's mappings, by source database name. */
  list(sourceEnvId: string, targetEnvId: string): Promise<DatabaseMappingRow[]> {
    return this.knex<DatabaseMappingRow>('database_mappings')
      .where({ source_env_id: sourceEnvId, target_env_id: targetEnvId })
      .orderBy('source_database_name')
      .orderBy('source_database_id');
  }

  /** The environments `sourceEnvId` has saved mappings into (what impact calls the environments it migrates to). */
  async targetsOf(sourceEnvId: string): Promise<string[]> {
    const rows = await this.knex('database_mappings').distinct('target_env_id').where({ source_env_id: sourceEnvId });
    return rows.map((r: { target_env_id: string }) => r.target_env_id);
  }

  /**
   * Replaces the pair's mappings with `mappings` in one transaction: rows for source databases
   * still mapped are updated in place (created_by/created_at kept), the others deleted.
   */
  async replace(
    sourceEnvId: string,
    targetEnvId: string,
    mappings: DatabaseMappingInput[],
    userId: string | null,
  ): Promise<DatabaseMappingRow[]> {
    await this.knex.transaction(async (trx) => {
      const keep = mappings.map((m) => m.source_database_id);
      await trx('database_mappings')
        .where({ source_env_id: sourceEnvId, target_env_id: targetEnvId })
        .modify((q) => {
          if (keep.length) q.whereNotIn('source_database_id', keep);
        })
        .delete();
      if (mappings.length) {
        await trx('database_mappings')
          .insert(
            mappings.map((m) => ({ ...m, source_env_id: sourceEnvId, target_env_id: targetEnvId, created_by: userId, updated_by: userId })),
          )
          .onConflict(['source_env_id', 'target_env_id', 'source_database_id'])
          .merge([
            'source_database_name',
            'source_database_uuid',
            'target_database_id',
            'target_database_name',
            'target_database_uuid',
            'updated_by',
            'updated_at',
          ] as never);
      }
    });
    return this.list(sourceEnvId, targetEnvId);
  }
}
