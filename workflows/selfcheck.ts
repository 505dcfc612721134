import { log, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities/index.ts';
import type { SelfcheckInput, SelfcheckStepResult } from '../contracts/selfcheck.ts';
import { reportTaskProgress, runAsTask } from './task-run.ts';

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
    const plan: Array<() => Promise<SelfcheckStepResult>> = [
      () => quick.selfcheckDatabase(),
      () => quick.selfcheckTemporal(),
      () => quick.selfcheckWorker(),
    ];
    if (input.sleepSeconds > 0) plan.push(() => sleeping.selfcheckSleep(input.sleepSeconds));
    if (input.fail !== 'none')
      plan.push(() => failing.selfcheckFail({ mode: input.fail as 'retryable' | 'non_retryable', failAttempts: input.failAttempts }));

    const steps: SelfcheckStepResult[] = [];
    for (const [i, run] of plan.entries()) {
      const step = await run();
      steps.push(step);
      log.info(`step ${step.step} passed: ${step.detail}`);
      await reportTaskProgress({ done: i + 1, total: plan.length, message: step.step });
    }
    return { steps };
  });
}
