/** Exit codes a pipeline can branch on (as Tableau's Content Migration Tool runner does). */
export const EXIT = {
  OK: 0,
  /** The operation failed (or the API refused it). */
  FAILURE: 1,
  /** Some items (dashboards) failed, others did not. */
  PARTIAL: 2,
  /** Bad arguments, or no connection configured. */
  USAGE: 3,
} as const;
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** A failure that ends the command with this exit code and message (and the API's problem, if any). */
export class CliError extends Error {
  readonly exitCode: ExitCode;
  readonly problem?: unknown;

  constructor(message: string, exitCode: ExitCode = EXIT.FAILURE, problem?: unknown) {
    super(message);
    this.exitCode = exitCode;
    this.problem = problem;
  }
}

export const usage = (message: string) => new CliError(message, EXIT.USAGE);
