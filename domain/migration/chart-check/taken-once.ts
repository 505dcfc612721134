/**
 * What a batch made ahead for its verification (a dashboard's charts, checks, an export), kept
 * per worker, task and dashboard as a promise and taken once: a retried verification, or one on
 * another worker, finds nothing and reads for itself. A cache only.
 */

/** Dashboards kept at once (a batch holds at most 16; a few tasks' worth): the oldest dropped first. */
const MAX_DASHBOARDS = 256;

export class TakenOnce<T> {
  private readonly kept = new Map<string, Promise<T>>();

  keep(taskId: string, dashboardId: number, value: Promise<T>): void {
    this.kept.set(`${taskId}:${dashboardId}`, value);
    while (this.kept.size > MAX_DASHBOARDS) this.kept.delete(this.kept.keys().next().value!);
  }

  /** What was kept for the task's dashboard, once (undefined: nothing was, or it was taken). */
  take(taskId: string, dashboardId: number): Promise<T> | undefined {
    const key = `${taskId}:${dashboardId}`;
    const hit = this.kept.get(key);
    this.kept.delete(key);
    return hit;
  }
}
