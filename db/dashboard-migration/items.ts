import type { Knex } from 'knex';

/** The import intent of one dashboard of a migration task (table `migration_items`). */
export interface ImportIntent {
  task_id: string;
  source_dashboard_id: number;
  dashboard_uuid: string;
  bundle_hash: string;
  status: 'importing' | 'imported';
  target_dashboard_id: number | null;
}

/**
 * The import intent of each dashboard of a migration task, written before its import and
 * confirmed after it, so a retried activity never imports a dashboard twice. (Each dashboard's
 * outcome is a task item: db/tasks/items.ts.)
 */
export class MigrationItemsStore {
  private readonly knex: Knex;
  constructor(knex: Knex) {
    this.knex = knex;
  }

  async intent(taskId: string, sourceDashboardId: number): Promise<ImportIntent | undefined> {
    return this.knex<ImportIntent>('migration_items').where({ task_id: taskId, source_dashboard_id: sourceDashboardId }).first();
  }

  /** Written before the import: a retry that finds it with the same hash checks the target first. */
  async markImporting(intents: Array<Pick<ImportIntent, 'task_id' | 'source_dashboard_id' | 'dashboard_uuid' | 'bundle_hash'>>): Promise<void> {
    if (!intents.length) return;
    await this.knex('migration_items')
      .insert(intents.map((i) => ({ ...i, status: 'importing' })))
      .onConflict(['task_id', 'source_dashboard_id'])
      .merge(['dashboard_uuid', 'bundle_hash', 'status', 'updated_at']);
  }

  async markImported(taskId: string, sourceDashboardId: number, targetDashboardId: number): Promise<void> {
    await this.knex('migration_items')
      .where({ task_id: taskId, source_dashboard_id: sourceDashboardId })
      .update({ status: 'imported', target_dashboard_id: targetDashboardId, updated_at: this.knex.fn.now() });
  }
}
