/** The assistant's confirmation workflow: its name, updates and input (ids and a time, never a secret). */
export const ASSISTANT_CONFIRMATION_WORKFLOW = 'assistantConfirmationWorkflow';
export const CONFIRM_UPDATE = 'confirm';
export const CANCEL_UPDATE = 'cancel';

export type ConfirmationState = 'pending' | 'confirmed' | 'cancelled' | 'expired';

export interface AssistantConfirmationInput {
  confirmationId: string;
  /** ISO-8601; the workflow's timer ends the confirmation then. */
  expiresAt: string;
}

export interface AssistantConfirmationResult {
  state: Exclude<ConfirmationState, 'pending'>;
}

export const confirmationWorkflowId = (confirmationId: string) => `assistant-confirmation-${confirmationId}`;
