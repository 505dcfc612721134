import type { Knex } from 'knex';
import type { DashboardOutcome } from '../../contracts/migration.ts';

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
 * What a migration task did, dashboard by dashboard: the import intent written before an import
 * and confirmed after it (so a retried activity never imports twice), and each dashboard's
 * outcome (so the task's result is assembled here, never carried through workflow history).
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

  async recordOutcome(taskId: string, position: number, outcome: DashboardOutcome): Promise<void> {
    await this.knex('migration_outcomes')
      .insert({ task_id: taskId, source_dashboard_id: outcome.id, position, status: outcome.status, outcome: JSON.stringify(outcome) })
      .onConflict(['task_id', 'source_dashboard_id'])
      .merge({ position, status: outcome.status, outcome: JSON.stringify(outcome), updated_at: this.knex.fn.now() });
  }

  async outcome(taskId: string, sourceDashboardId: number): Promise<DashboardOutcome | undefined> {
    const row = await this.knex('migration_outcomes').where({ task_id: taskId, source_dashboard_id: sourceDashboardId }).first('outcome');
    return row?.outcome as DashboardOutcome | undefined;
  }

  /** Every recorded outcome of the task, in the order the dashboards were asked for. */
  async outcomes(taskId: string): Promise<DashboardOutcome[]> {
    const rows = await this.knex('migration_outcomes').where({ task_id: taskId }).orderBy('position').select('outcome');
    return rows.map((r) => r.outcome as DashboardOutcome);
  }
}
