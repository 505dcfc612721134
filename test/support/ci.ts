// What CI allows a test run to leave out: nothing. `.ci/run` exports CI=true; under it the
// switches that make tests skip are refused before anything starts, and a part a test needs
// (a tool, a server it starts) that is missing fails the file with the part's name instead of
// skipping it. Locally the same tests skip and say why.
import { spawnSync } from 'node:child_process';

/** The switches that turn real-part tests into skips (or start only some instances); local runs only. */
export const SKIP_SWITCHES = [
  'SWITCHYARD_TEST_SUPERSET',
  'SWITCHYARD_TEST_GITEA',
  'SWITCHYARD_TEST_WALK_THROUGH',
  'SWITCHYARD_TEST_SUPERSETS',
] as const;

/** Whether this is a CI run (CI=true or CI=1, as `.ci/run` and most CI services set it). */
export function inCi(env: NodeJS.ProcessEnv = process.env): boolean {
  return /^(1|true)$/i.test(env.CI ?? '');
}

/** Throws, naming every skip switch set, when this is a CI run: CI runs every test against every part. */
export function refuseSkipSwitchesInCi(env: NodeJS.ProcessEnv = process.env): void {
  if (!inCi(env)) return;
  const set = SKIP_SWITCHES.filter((name) => (env[name] ?? '') !== '');
  if (set.length === 0) return;
  throw new Error(
    `CI=true runs every test against every part, so ${set.map((n) => `${n}=${env[n]}`).join(', ')} is refused ` +
      `(these switches skip tests; they are for local runs). Unset ${set.length === 1 ? 'it' : 'them'}.`,
  );
}

/**
 * Whether a part a test needs is here. Missing: under CI this throws with the part's name and how
 * to get it (the file fails); locally it answers false and the caller skips, with this warning.
 */
export function available(part: string, present: boolean, howToGet: string, env: NodeJS.ProcessEnv = process.env): boolean {
  if (present) return true;
  const message = `${part} is missing: ${howToGet}`;
  if (inCi(env)) throw new Error(`${message} (CI=true: a missing part fails the run instead of skipping its tests)`);
  console.warn(`${message}; the tests that need it are skipped`);
  return false;
}

/** Whether a command runs here (`<cmd> <args>` exits 0). */
export function commandRuns(cmd: string, args: string[] = ['--version']): boolean {
  const r = spawnSync(cmd, args, { stdio: 'ignore' });
  return r.error === undefined && r.status === 0;
}
