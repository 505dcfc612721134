/**
 * An event handler that runs async work. React drops the promise a handler returns, so a failure
 * would be an unhandled rejection that nobody sees. `act` awaits the work and hands any failure to
 * `onError` (the browser's own error report by default), so no click's promise is left floating.
 */
export function act<A extends unknown[]>(
  work: (...args: A) => Promise<unknown>,
  onError: (err: unknown) => void = reportError,
): (...args: A) => void {
  return (...args) => {
    work(...args).catch(onError);
  };
}
