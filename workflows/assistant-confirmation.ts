import { condition, defineUpdate, proxyActivities, setHandler } from '@temporalio/workflow';
import type { Activities } from '../activities/index.ts';
import {
  CANCEL_UPDATE,
  CONFIRM_UPDATE,
  type AssistantConfirmationInput,
  type AssistantConfirmationResult,
  type ConfirmationState,
} from '../contracts/assistant.ts';

const { expireAssistantConfirmation } = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '10 seconds', maximumAttempts: 10 },
});

export const confirmUpdate = defineUpdate<ConfirmationState>(CONFIRM_UPDATE);
export const cancelUpdate = defineUpdate<ConfirmationState>(CANCEL_UPDATE);

/**
 * One risky assistant command waiting for its owner: a `confirm` or `cancel` update decides it,
 * or the timer expires it. Updates are handled one at a time, so the first decision wins and a
 * later one reads it back (confirming twice answers "confirmed" twice; the API starts the task
 * once, under an idempotency key). The API checks who may decide before sending an update.
 */
export async function assistantConfirmationWorkflow(input: AssistantConfirmationInput): Promise<AssistantConfirmationResult> {
  let state: ConfirmationState = 'pending';
  setHandler(confirmUpdate, () => {
    if (state === 'pending') state = 'confirmed';
    return state;
  });
  setHandler(cancelUpdate, () => {
    if (state === 'pending') state = 'cancelled';
    return state;
  });
  // At least 1 ms: a timeout of 0 would mean no timeout at all.
  const waitMs = Math.max(1, Date.parse(input.expiresAt) - Date.now());
  const decided = await condition(() => state !== 'pending', waitMs);
  if (!decided) {
    state = 'expired';
    await expireAssistantConfirmation({ confirmationId: input.confirmationId });
  }
  return { state: state as AssistantConfirmationResult['state'] };
}
