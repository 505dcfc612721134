import type { ConfirmationState } from '../../contracts/assistant.ts';
import type { ActivityDeps } from '../deps.ts';

/**
 * The confirmation timer's one question to the row: a pending confirmation past its time (by the
 * database's clock) expires, audited once; the answer is the row's state, whatever decided it.
 */
export function createAssistantActivities(deps: Pick<ActivityDeps, 'stores'>) {
  const store = deps.stores.assistant.confirmations;
  return {
    async settleAssistantConfirmation(input: { confirmationId: string }): Promise<{ state: ConfirmationState; expiresAt: string }> {
      await store.expire(input.confirmationId);
      const row = await store.get(input.confirmationId);
      // A row that is gone has nothing left to wait for.
      if (!row) return { state: 'expired', expiresAt: new Date(0).toISOString() };
      return { state: row.status, expiresAt: new Date(row.expires_at).toISOString() };
    },
  };
}
