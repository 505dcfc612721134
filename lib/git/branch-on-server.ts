/**
 * A pull request is opened once the server's API holds its branches. A git server may take a push
 * in two halves: the refs at once, what its API answers later. Gitea records a branch in the push's
 * hook but counts a repository empty until its push queue has taken the first push, and until then
 * refuses a pull request from or into it ("The target couldn't be found"); under load that lags by
 * many seconds. So the push (which returns after the server's hook, ./remote-http.ts) is followed
 * by a wait for the API to answer each branch at the pushed commit, bounded, and a bound reached
 * is said as such with what to do, never as the provider's bare 404.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { ConflictError } from '../errors.ts';
import type { ReviewProvider } from './reviews.ts';

/** How long the API gets to hold a pushed branch: a hang bound; a server that took the push answers in well under it. */
export const BRANCH_ON_SERVER_WITHIN_MS = 120_000;
const FIRST_PAUSE_MS = 200;
const LONGEST_PAUSE_MS = 2_000;

export interface BranchWanted {
  name: string;
  /** The commit the server must answer for it; any commit will do when absent (a base branch). */
  commit?: string;
}

/** Whether the server answers every branch wanted: the names it does not answer yet. */
async function missing(provider: ReviewProvider, wanted: BranchWanted[]): Promise<string[]> {
  const heads = await Promise.all(wanted.map((b) => provider.branchHead(b.name)));
  return wanted.filter((b, i) => heads[i] === null || (b.commit !== undefined && heads[i] !== b.commit)).map((b) => b.name);
}

/**
 * Resolves once the provider's API answers each branch (at its commit when one is given); a
 * refusal other than "not yet" is thrown as the provider gave it. Past the bound: 409
 * `branch_not_on_server`, naming the branches.
 */
export async function untilBranchesOnServer(
  provider: ReviewProvider,
  wanted: BranchWanted[],
  withinMs = BRANCH_ON_SERVER_WITHIN_MS,
): Promise<void> {
  const deadline = Date.now() + withinMs;
  let pause = FIRST_PAUSE_MS;
  for (;;) {
    const left = await missing(provider, wanted);
    if (!left.length) return;
    if (Date.now() >= deadline)
      throw new ConflictError(
        `The git server took the push but its API does not answer ${left.map((n) => `'${n}'`).join(', ')} at the pushed commit after ${Math.round(withinMs / 1000)} s: look at the server's queue or log, then open the pull request again`,
        'branch_not_on_server',
        { branches: left },
      );
    await sleep(pause);
    pause = Math.min(pause * 2, LONGEST_PAUSE_MS);
  }
}
