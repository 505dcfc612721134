/**
 * Target dashboards' chart checks begun as soon as their batch has imported them and written their
 * companions (../target-checks-ahead.ts): the verification that follows takes them, awaiting those
 * still being made, instead of reading and querying the target again. Kept per worker and task,
 * taken once. Only a passing check stands in: one that failed, or could
 * not be made, is made again by the verification, so it never reports a failure from here. A cache
 * only: on another worker the verification checks the target itself.
 */
import type { Bundle } from '../../../lib/bundles/bundle.ts';
import type { ChartCheck, ChartForCheck } from './types.ts';

/** Dashboards kept at once (a batch holds at most 16; a few tasks' worth). */
const MAX_DASHBOARDS = 256;

export interface TargetChecked {
  charts: ChartForCheck[];
  /** Each chart's check, in the charts' order. */
  checks: ChartCheck[];
}

export class TargetChecksAhead {
  private readonly kept = new Map<string, Promise<TargetChecked | undefined>>();
  private readonly exports = new Map<string, Promise<Bundle | undefined>>();

  /**
   * The target's export of the dashboard the checks were read from (after the batch's writes),
   * for the verification to record as the target's state instead of exporting it again.
   */
  keepExport(taskId: string, dashboardId: number, exported: Promise<Bundle | undefined>): void {
    this.exports.set(`${taskId}:${dashboardId}`, exported);
    while (this.exports.size > MAX_DASHBOARDS) this.exports.delete(this.exports.keys().next().value!);
  }

  /** The export kept for the task's target dashboard, once (undefined: none was made here). */
  takeExport(taskId: string, dashboardId: number): Promise<Bundle | undefined> | undefined {
    const key = `${taskId}:${dashboardId}`;
    const hit = this.exports.get(key);
    this.exports.delete(key);
    return hit;
  }

  /** The dashboard's checks as they will be once made (undefined: they could not be). */
  keep(taskId: string, dashboardId: number, checked: Promise<TargetChecked | undefined>): void {
    this.kept.set(`${taskId}:${dashboardId}`, checked);
    while (this.kept.size > MAX_DASHBOARDS) this.kept.delete(this.kept.keys().next().value!);
  }

  /** What was kept for the task's target dashboard, once (awaited by the verification if still being made). */
  take(taskId: string, dashboardId: number): Promise<TargetChecked | undefined> | undefined {
    const key = `${taskId}:${dashboardId}`;
    const hit = this.kept.get(key);
    this.kept.delete(key);
    return hit;
  }
}

/** A check the verification may take as made: it passed. */
export function standsIn(check: ChartCheck | undefined): check is ChartCheck {
  return !!check && 'ok' in check.answer && check.answer.ok === true;
}
