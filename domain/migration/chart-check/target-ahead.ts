/**
 * Target dashboards' chart checks begun as soon as their batch has imported them and written their
 * companions (../target-checks-ahead.ts): the verification that follows takes them from the task's
 * prefetch plan (../prefetch-plan.ts targetChecks), awaiting those still being made, instead of
 * reading and querying the target again. Only a passing check stands in: one that failed, or could
 * not be made, is made again by the verification, so it never reports a failure from here. A
 * worker's memory only: on another worker the verification checks the target itself.
 */
import type { ChartCheck, ChartForCheck } from './types.ts';

export interface TargetChecked {
  charts: ChartForCheck[];
  /** Each chart's check, in the charts' order. */
  checks: ChartCheck[];
}

/** A check the verification may take as made: it passed. */
export function standsIn(check: ChartCheck | undefined): check is ChartCheck {
  return !!check && 'ok' in check.answer && check.answer.ok === true;
}
