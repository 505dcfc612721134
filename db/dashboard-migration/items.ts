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

  /** Whether any of these dashboards of the task has an intent: an earlier attempt may have imported it. One query. */
  async anyIntent(taskId: string, sourceDashboardIds: number[]): Promise<boolean> {
    if (!sourceDashboardIds.length) return false;
    const row = await this.knex('migration_items')
      .where({ task_id: taskId })
      .whereIn('source_dashboard_id', sourceDashboardIds)
      .first('source_dashboard_id');
    return row !== undefined;
  }

  /** Written before the import: a retry that finds it with the same hash checks the target first. */
  async markImporting(
    intents: Array<Pick<ImportIntent, 'task_id' | 'source_dashboard_id' | 'dashboard_uuid' | 'bundle_hash'>>,
  ): Promise<void> {
    if (!intents.length) return;
    await this.knex('migration_items')
      .insert(intents.map((i) => ({ ...i, status: 'importing' })))
      .onConflict(['task_id', 'source_dashboard_id'])
      .merge(['dashboard_uuid', 'bundle_hash', 'status', 'updated_at']);
  }

  /** Several intents confirmed in one statement (the dashboards of one joint import). */
  async markAllImported(taskId: string, landed: Array<{ sourceDashboardId: number; targetDashboardId: number }>): Promise<void> {
    if (!landed.length) return;
    const rows = landed.map(() => '(?::integer, ?::integer)').join(', ');
    await this.knex.raw(
      `update migration_items as m set status = 'imported', target_dashboard_id = v.target_id, updated_at = now()
       from (values ${rows}) as v(source_id, target_id)
       where m.task_id = ? and m.source_dashboard_id = v.source_id`,
      [...landed.flatMap((l) => [l.sourceDashboardId, l.targetDashboardId]), taskId],
    );
  }

  async markImported(taskId: string, sourceDashboardId: number, targetDashboardId: number): Promise<void> {
    await this.knex('migration_items')
      .where({ task_id: taskId, source_dashboard_id: sourceDashboardId })
      .update({ status: 'imported', target_dashboard_id: targetDashboardId, updated_at: this.knex.fn.now() });
  }
}
