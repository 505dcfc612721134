/** The audit row of one assistant decision (executed, confirmed, denied; cancelled and expired commit with the row's change). */
import type { AuditDecision, AuditStore } from '../../db/assistant/audit.ts';
import type { Intent } from '../../lib/assistant/intent.ts';
import type { Principal } from '../auth/principal.ts';

export interface DecisionLinks {
  conversationId?: string | null;
  confirmationId?: string;
  taskId?: string;
}

export async function recordDecision(
  audit: AuditStore,
  principal: Principal,
  decision: AuditDecision,
  intent: Intent,
  outcome: Record<string, unknown>,
  links: DecisionLinks = {},
): Promise<void> {
  await audit.record({
    userId: principal.userId,
    username: principal.username,
    decision,
    intent: intent as unknown as Intent & Record<string, unknown>,
    outcome,
    conversationId: links.conversationId ?? null,
    confirmationId: links.confirmationId ?? null,
    taskId: links.taskId ?? null,
  });
}
