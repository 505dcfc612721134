import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities/index.ts';
import type { GitCompanionsCapture, GitCompanionsInput } from '../contracts/git.ts';

const read = proxyActivities<Activities>({
  startToCloseTimeout: '2 minutes',
  retry: { initialInterval: '1 second', maximumInterval: '5 seconds', maximumAttempts: 3 },
});

/**
 * A repository sync's companions: read in the worker, where the companion kinds live (the API
 * may not import them), and answered to the sync that waits for it. Reads only.
 */
export async function gitCompanionsWorkflow(input: GitCompanionsInput): Promise<GitCompanionsCapture> {
  return read.captureGitCompanions(input);
}
