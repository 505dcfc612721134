import type { ActivityDeps } from '../deps.ts';

/** The confirmation workflow's one side effect: an unanswered confirmation expires (audited once). */
export function createAssistantActivities(deps: Pick<ActivityDeps, 'stores'>) {
  const store = deps.stores.assistant.confirmations;
  return {
    async expireAssistantConfirmation(input: { confirmationId: string }): Promise<{ expired: boolean }> {
      return { expired: await store.expire(input.confirmationId) };
    },
  };
}
