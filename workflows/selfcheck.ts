import { log, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities/index.ts';
import type { SelfcheckInput, SelfcheckStepResult } from '../contracts/selfcheck.ts';
import { runAsTask } from './task-run.ts';

const quick = proxyActivities<Activities>({
  startToCloseTimeout: '20 seconds',
  retry: { initialInterval: '200 ms', maximumInterval: '2 seconds', maximumAttempts: 5 },
});

const failing = proxyActivities<Activities>({
  startToCloseTimeout: '20 seconds',
  retry: { initialInterval: '200 ms', backoffCoefficient: 1, maximumAttempts: 10 },
});

/** A heartbeat timeout makes a killed worker's attempt fail fast and resume elsewhere. */
const sleeping = proxyActivities<Activities>({
  startToCloseTimeout: '15 minutes',
  heartbeatTimeout: '3 seconds',
  cancellationType: 'WAIT_CANCELLATION_COMPLETED',
  retry: { initialInterval: '200 ms', maximumInterval: '2 seconds' },
});

export interface SelfcheckResult {
  steps: SelfcheckStepResult[];
}

/** Deployment smoke test: database, Temporal, worker, and optional sleep/failure for drills. */
export async function selfcheckWorkflow(input: SelfcheckInput): Promise<SelfcheckResult> {
  return runAsTask(async () => {
    // Each step records the progress it reaches itself (no separate progress activity per step).
    const total = 3 + (input.sleepSeconds > 0 ? 1 : 0) + (input.fail !== 'none' ? 1 : 0);
    const plan: Array<(at: { done: number; total: number }) => Promise<SelfcheckStepResult>> = [
      (at) => quick.selfcheckDatabase(at),
      (at) => quick.selfcheckTemporal(at),
      (at) => quick.selfcheckWorker(at),
    ];
    if (input.sleepSeconds > 0) plan.push((at) => sleeping.selfcheckSleep(input.sleepSeconds, at));
    if (input.fail !== 'none')
      plan.push((at) => failing.selfcheckFail({ mode: input.fail as 'retryable' | 'non_retryable', failAttempts: input.failAttempts }, at));

    const steps: SelfcheckStepResult[] = [];
    for (const [i, run] of plan.entries()) {
      const step = await run({ done: i + 1, total });
      steps.push(step);
      log.info(`step ${step.step} passed: ${step.detail}`);
    }
    return { steps };
  });
}
