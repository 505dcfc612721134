import type { AnswerState } from './schemas.ts';

/** The assistant's answer to one message, before it is stored in the conversation. */
export interface Reply {
  state: AnswerState;
  text: string;
  data?: unknown;
  confirmation?: { id: string; expires_at: string; summary: string };
  taskId?: string;
  /** The command lacks something the next message may give: keep it for that reply. */
  incomplete?: boolean;
}
