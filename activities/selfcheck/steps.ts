import os from 'node:os';
import { ApplicationFailure, Context, sleep } from '@temporalio/activity';
import type { SelfcheckStepResult } from '../../contracts/selfcheck.ts';
import { progressLogLine, type TaskProgress } from '../../contracts/tasks.ts';
import type { ActivityDeps } from '../deps.ts';
import { currentTaskId } from '../task-context.ts';

/**
 * The selfcheck task's steps. Each writes one side-effect row keyed by (task, step) with
 * ON CONFLICT DO NOTHING: a retried or resumed step can never apply its effect twice.
 */
export function createSelfcheckActivities({ stores }: Pick<ActivityDeps, 'stores'>) {
  const { selfcheckEffects: effects, tasks, database } = stores;
  const applyEffect = (step: string): Promise<number> => effects.apply(currentTaskId(), step, Context.current().info.attempt);
  const passed = (step: SelfcheckStepResult, at?: StepPlace) => recordPassed(tasks, step, at);

  return {
    async selfcheckDatabase(at?: StepPlace): Promise<SelfcheckStepResult> {
      const { log, info } = Context.current();
      const version = await database.version();
      await applyEffect('database');
      log.info(`database reachable: ${version}`);
      return passed({ step: 'database', ok: true, detail: version, attempt: info.attempt }, at);
    },

    async selfcheckTemporal(at?: StepPlace): Promise<SelfcheckStepResult> {
      const ctx = Context.current();
      const desc = await ctx.client.workflow.getHandle(currentTaskId()).describe();
      await applyEffect('temporal');
      const detail = `workflow ${desc.workflowId} is ${desc.status.name} on task queue ${desc.taskQueue}`;
      ctx.log.info(`temporal reachable: ${detail}`);
      return passed({ step: 'temporal', ok: true, detail, attempt: ctx.info.attempt }, at);
    },

    async selfcheckWorker(at?: StepPlace): Promise<SelfcheckStepResult> {
      const ctx = Context.current();
      await applyEffect('worker');
      const detail = `worker pid ${process.pid} on ${os.hostname()}, node ${process.version}, queue ${ctx.info.taskQueue}`;
      ctx.log.info(`worker polling: ${detail}`);
      return passed({ step: 'worker', ok: true, detail, attempt: ctx.info.attempt }, at);
    },

    /** Sleeps while heartbeating; a new attempt (after a killed worker) resumes from the last heartbeat. */
    async selfcheckSleep(seconds: number, at?: StepPlace): Promise<SelfcheckStepResult> {
      const ctx = Context.current();
      await sleepHeartbeating(seconds);
      const appliedBy = await applyEffect('sleep');
      return passed(
        { step: 'sleep', ok: true, detail: `slept ${seconds} s (effect applied by attempt ${appliedBy})`, attempt: ctx.info.attempt },
        at,
      );
    },

    async selfcheckFail(
      input: { mode: 'retryable' | 'non_retryable'; failAttempts: number },
      at?: StepPlace,
    ): Promise<SelfcheckStepResult> {
      const ctx = Context.current();
      failAsRequested(input);
      await applyEffect('fail');
      ctx.log.info(`passed on attempt ${ctx.info.attempt} after ${input.failAttempts} requested failures`);
      return passed({ step: 'fail', ok: true, detail: `passed on attempt ${ctx.info.attempt}`, attempt: ctx.info.attempt }, at);
    },
  };
}

/**
 * A step records its own place in the plan once it passed: one activity per step instead of a
 * step and a progress report, so a selfcheck costs Temporal and the worker five activities, not eight.
 */
async function recordPassed(
  tasks: Pick<ActivityDeps, 'stores'>['stores']['tasks'],
  step: SelfcheckStepResult,
  at?: StepPlace,
): Promise<SelfcheckStepResult> {
  if (!at) return step;
  const progress: TaskProgress = { done: at.done, total: at.total, message: step.step };
  await tasks.setProgress(currentTaskId(), progress);
  Context.current().log.info(progressLogLine(progress));
  return step;
}

/** Sleeps `seconds` in slices, heartbeating the time slept, from where the last attempt's heartbeat left off. */
async function sleepHeartbeating(seconds: number): Promise<void> {
  const ctx = Context.current();
  const resumedFrom = Number(ctx.info.heartbeatDetails ?? 0);
  if (resumedFrom > 0) ctx.log.info(`resuming sleep at ${resumedFrom} ms of ${seconds * 1000} ms (attempt ${ctx.info.attempt})`);
  else ctx.log.info(`sleeping ${seconds} s`);
  let elapsed = resumedFrom;
  while (elapsed < seconds * 1000) {
    const slice = Math.min(250, seconds * 1000 - elapsed);
    await sleep(slice); // rejects when the task is cancelled
    elapsed += slice;
    ctx.heartbeat(elapsed);
  }
}

/** Throws the failure the selfcheck was asked for: always without retry, or retryable up to `failAttempts` attempts. */
function failAsRequested(input: { mode: 'retryable' | 'non_retryable'; failAttempts: number }): void {
  const ctx = Context.current();
  if (input.mode === 'non_retryable') {
    ctx.log.error('failing without retry, as requested');
    throw ApplicationFailure.nonRetryable('selfcheck was asked to fail (non-retryable)', 'SelfcheckRequestedFailure');
  }
  if (ctx.info.attempt <= input.failAttempts) {
    ctx.log.warn(`failing attempt ${ctx.info.attempt} of ${input.failAttempts}, as requested`);
    throw ApplicationFailure.retryable(`selfcheck was asked to fail attempt ${ctx.info.attempt}`, 'SelfcheckRequestedFailure');
  }
}

/** Where a step stands in the task's plan (1-based), for the progress it records when it passes. */
export interface StepPlace {
  done: number;
  total: number;
}
