/**
 * Who may see and act on the assistant's rows, in one place (as Backstage's authorized service
 * wrappers keep a resource's rules beside it); the stores take plain filters and decide nothing.
 *
 * - The assistant acts for a person signed in: an API key gets 403, so a key reaches none of its
 *   creator's conversations, confirmations or audit.
 * - A conversation is its owner's alone, whoever else asks (an admin too): another person's
 *   answers as an absent one (404), so its id tells nothing.
 * - A confirmation is decided by the person who asked alone: anyone else gets 403 (the caller
 *   records it in the audit as denied).
 */
import type { ConfirmationRow } from '../../db/assistant/confirmations.ts';
import type { ConversationRow } from '../../db/assistant/conversations.ts';
import { ForbiddenError } from '../../lib/errors.ts';
import { personalUserId, type Principal } from '../auth/principal.ts';

/** The rows of one person: what a list of conversations or of audit entries goes through. */
export interface OwnRows {
  user_id: string;
}

/** The person the assistant acts for (403 for an API key). */
function user(principal: Principal): string {
  const id = personalUserId(principal);
  if (!id) throw new ForbiddenError('The assistant answers people signed in, not API keys');
  return id;
}

export const assistantPolicy = {
  user,
  /** Which conversations and audit entries a list shows: the caller's own (403 for a key). */
  mine: (principal: Principal): OwnRows => ({ user_id: user(principal) }),
  /** Read, continue, archive or delete a conversation: its owner only (403 for a key). */
  seeConversation: (principal: Principal, conv: Pick<ConversationRow, 'user_id'>): boolean => conv.user_id === user(principal),
  /** Confirm or cancel a confirmation: the person who asked only. */
  decide: (principal: Principal, row: Pick<ConfirmationRow, 'user_id'>): boolean => row.user_id === principal.userId,
};
