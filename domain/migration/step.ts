/**
 * The step a dashboard's failure is reported at (`export`, `plan`, `rls`, `import`), recorded
 * where the error is thrown instead of tracked in a variable each step reassigns: each step runs
 * inside `withStep`, which tags what it throws, and the dashboard's one catch reads the tag back
 * (`failedStep`) with the error as it was thrown, for the one classification of failures.
 */

/** Where a dashboard's work failed: the step, and the environment when it is not the step's usual one. */
export interface FailedStep {
  step: string;
  /** The environment the step talked to; by default the source for `export`, else the target. */
  env?: string;
}

/** An error thrown inside `withStep`, tagged with that step (the innermost one). Never leaves a dashboard's catch. */
export class StepFailure extends Error {
  readonly at: FailedStep;

  constructor(at: FailedStep, cause: unknown) {
    super(`${at.step}: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    this.name = 'StepFailure';
    this.at = at;
  }
}

/** Runs `fn` as step `step` (talking to environment `env`, when not the step's usual one): what it throws carries the step. */
export async function withStep<T>(step: string, fn: () => Promise<T>, env?: string): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw err instanceof StepFailure ? err : new StepFailure(env ? { step, env } : { step }, err);
  }
}

/** The step an error was thrown in (`fallback` when it was thrown outside any step), and the error as it was thrown. */
export function failedStep(err: unknown, fallback: string): FailedStep & { error: unknown } {
  if (err instanceof StepFailure) return { ...err.at, error: err.cause };
  return { step: fallback, error: err };
}

/** The error as it was thrown, for a caller outside every dashboard's catch (an outage goes to Temporal as it is). */
export function unwrapStep(err: unknown): unknown {
  return err instanceof StepFailure ? err.cause : err;
}
