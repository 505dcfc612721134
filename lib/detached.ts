/**
 * The one way to leave a promise un-awaited (ESLint's `no-floating-promises` refuses any other,
 * `void` included: lint/eslint.config.js). A detached piece of work is a read started ahead for a
 * later step, or work that belongs to no request: its caller says why in a comment at the call, and
 * a failure is logged here with the label, never swallowed. Whoever needs the result awaits the
 * same promise and meets the error there as well.
 */

/** What a detached failure is written to: pino's logger and Temporal's activity log both fit. */
export interface DetachedLog {
  warn(message: string): unknown;
}

/** Why a failure happened, short enough for one log line. */
export function failureText(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).slice(0, 300);
}

/**
 * Lets `work` run on without awaiting it. `label` names the item and step (`dashboard 12: target
 * checks ahead`): a rejection is logged as `<label> failed: <cause>`.
 */
export function detached(label: string, work: PromiseLike<unknown>, log: DetachedLog): void {
  work.then(undefined, (err: unknown) => {
    log.warn(`${label} failed: ${failureText(err)}`);
  });
}

/**
 * A read whose failure leaves its step to a later one (a check ahead that the verification then
 * makes itself): awaited, and on failure logged as `<label> failed: <cause>` and answered with
 * `fallback`, so the failure is seen in the log instead of vanishing into a null.
 */
export async function fallbackLogged<T, F>(label: string, work: PromiseLike<T>, fallback: F, log: DetachedLog): Promise<T | F> {
  try {
    return await work;
  } catch (err) {
    log.warn(`${label} failed: ${failureText(err)}`);
    return fallback;
  }
}
