import type { ScheduledRunRegistration } from '../../contracts/schedules.ts';
import type { ActivityDeps } from '../deps.ts';
import { awaitTaskEnd, driftCandidates } from './follow.ts';
import { registerScheduledRun } from './register.ts';

export type { ScheduledTask } from './register.ts';

/** The activities of a schedule's run: register the run as an ordinary task, follow it, and plan a drift report. */
export function createScheduleActivities(deps: ActivityDeps) {
  return {
    registerScheduledRun: (input: ScheduledRunRegistration) => registerScheduledRun(deps, input),
    awaitTaskEnd: (input: { taskId: string }) => awaitTaskEnd(deps, input),
    driftCandidates: (input: { sourceEnvId: string; targetEnvId: string }) => driftCandidates(deps, input),
  };
}
