import { condition, proxyActivities, setHandler } from '@temporalio/workflow';
import type { Activities } from '../activities/index.ts';
import type { AssistantConfirmationInput, AssistantConfirmationResult } from '../contracts/assistant.ts';
import { confirmationDecidedSignal } from '../contracts/workflow-messages.ts';

const { settleAssistantConfirmation } = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '10 seconds', maximumAttempts: 10 },
});

/** When the row is still pending after the timer (its clock is behind this one), ask it again no sooner than this. */
const RECHECK_MS = 1_000;

/**
 * The timer of one risky assistant command waiting for its owner. It decides nothing: the row
 * (db/assistant/confirmations.ts) decides, by the database's clock, whether the confirmation is
 * pending, confirmed, cancelled or expired. What this workflow owns that the row cannot is the
 * wake-up: at `expiresAt` something must act for nobody, so an unanswered confirmation is marked
 * expired and audited when its time is up, not only when someone next touches it. The API tells
 * it (`decided`) once the row has left pending; either way it asks the row (which expires a
 * pending row past its time) and ends with the row's state, or waits again while the row says
 * pending.
 */
export async function assistantConfirmationWorkflow(input: AssistantConfirmationInput): Promise<AssistantConfirmationResult> {
  let told = false;
  setHandler(confirmationDecidedSignal, () => {
    told = true;
  });
  // At least 1 ms: a timeout of 0 would mean no timeout at all.
  let waitMs = Math.max(1, Date.parse(input.expiresAt) - Date.now());
  for (;;) {
    await condition(() => told, waitMs);
    told = false;
    const row = await settleAssistantConfirmation({ confirmationId: input.confirmationId });
    if (row.state !== 'pending') return { state: row.state };
    waitMs = Math.max(RECHECK_MS, Date.parse(row.expiresAt) - Date.now());
  }
}
