/**
 * Target dashboards' chart checks begun as soon as their batch has imported them and written their
 * companions (../target-checks-ahead.ts): the verification that follows takes them, awaiting those
 * still being made, instead of reading and querying the target again. Kept per worker and task,
 * taken once. Only a passing check stands in: one that failed, or could
 * not be made, is made again by the verification, so it never reports a failure from here. A cache
 * only: on another worker the verification checks the target itself.
 */
import type { Bundle } from '../../../lib/bundles/bundle.ts';
import { TakenOnce } from './taken-once.ts';
import type { ChartCheck, ChartForCheck } from './types.ts';

export interface TargetChecked {
  charts: ChartForCheck[];
  /** Each chart's check, in the charts' order. */
  checks: ChartCheck[];
}

export class TargetChecksAhead {
  /** Each dashboard's checks as they will be once made (undefined: they could not be); awaited by the verification if still being made. */
  readonly checks = new TakenOnce<TargetChecked | undefined>();
  /**
   * The target's export of each dashboard the checks were read from (after the batch's writes),
   * for the verification to record as the target's state instead of exporting it again.
   */
  readonly exports = new TakenOnce<Bundle | undefined>();
}

/** A check the verification may take as made: it passed. */
export function standsIn(check: ChartCheck | undefined): check is ChartCheck {
  return !!check && 'ok' in check.answer && check.answer.ok === true;
}
