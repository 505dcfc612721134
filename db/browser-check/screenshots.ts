import type { Knex } from 'knex';
import { isUuid } from '../../lib/ids.ts';

export type ScreenshotSide = 'target' | 'source';

/**
 * The browser check's screenshots (table `browser_screenshots`): one PNG per task, target
 * dashboard and side. Saving again (a retried activity) replaces the picture under the same id.
 */
export class BrowserScreenshotStore {
  private readonly knex: Knex;
  constructor(knex: Knex) {
    this.knex = knex;
  }

  /** Stores (or replaces) the side's screenshot of the task's dashboard; its id. */
  async save(row: { taskId: string; dashboardId: number; side: ScreenshotSide; png: Uint8Array }): Promise<string> {
    const [saved] = await this.knex('browser_screenshots')
      .insert({ task_id: row.taskId, dashboard_id: row.dashboardId, side: row.side, png: Buffer.from(row.png) })
      .onConflict(['task_id', 'dashboard_id', 'side'])
      .merge(['png', 'created_at'])
      .returning('id');
    return String((saved as { id: string }).id);
  }

  /** The PNG of one of the task's screenshots, or undefined (unknown id, or another task's). */
  async png(taskId: string, id: string): Promise<Buffer | undefined> {
    if (!isUuid(id)) return undefined;
    const row = await this.knex('browser_screenshots').where({ task_id: taskId, id }).first('png');
    return row ? (row.png as Buffer) : undefined;
  }
}
