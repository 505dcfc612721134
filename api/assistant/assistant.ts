/**
 * What the assistant's routes call, as the context names it. The service itself takes the whole
 * context (each operation reaches the other services through it), so the context naming the
 * service's own type would close an import cycle; this interface names only the answers' schemas.
 */
import type { z } from 'zod';
import type { AuditDecision } from '../../db/assistant/audit.ts';
import type { Intent } from '../../lib/assistant/intent.ts';
import type { Principal } from '../auth/principal.ts';
import type {
  AnswerState,
  auditList,
  confirmAnswer,
  conversationList,
  deleteAnswer,
  historyAcrossList,
  messageBody,
  messageList,
} from './schemas.ts';

/** The assistant's answer to a message. */
export interface Answer {
  conversation_id: string;
  message_id: string;
  state: AnswerState;
  intent: Intent;
  text: string;
  confirmation?: { id: string; expires_at: string; summary: string };
  task_id?: string;
  data?: unknown;
}

/** An answer as its route's schema describes it. */
type Out<T extends z.ZodType> = Promise<z.input<T>>;

export interface Assistant {
  message(principal: Principal, body: z.output<typeof messageBody>): Promise<Answer>;
  confirm(principal: Principal, id: string): Out<typeof confirmAnswer>;
  cancel(principal: Principal, id: string): Out<typeof confirmAnswer>;
  listConversations(principal: Principal, pageNo: number, pageSize: number, archived?: boolean): Out<typeof conversationList>;
  history(principal: Principal, id: string, pageNo: number, pageSize: number): Out<typeof messageList>;
  historyAcross(principal: Principal, pageNo: number, pageSize: number): Out<typeof historyAcrossList>;
  deleteConversation(principal: Principal, id: string, hard: boolean): Out<typeof deleteAnswer>;
  auditLog(principal: Principal, pageNo: number, pageSize: number, decision?: AuditDecision): Out<typeof auditList>;
}
