/**
 * The assistant's audit: the only code that reads or writes `assistant_audit`. One row per
 * decision (executed, confirmed, cancelled, expired, denied) with the intent and its outcome.
 */
import type { Knex } from 'knex';

export type AuditDecision = 'executed' | 'confirmed' | 'cancelled' | 'expired' | 'denied';

export interface AuditEntry {
  userId: string | null;
  username: string;
  decision: AuditDecision;
  intent: { domain: string; operation: string } & Record<string, unknown>;
  outcome: Record<string, unknown>;
  conversationId?: string | null;
  confirmationId?: string | null;
  taskId?: string | null;
}

export interface AuditRow {
  id: string;
  seq: string;
  user_id: string | null;
  username: string;
  decision: AuditDecision;
  domain: string;
  operation: string;
  intent: Record<string, unknown>;
  outcome: Record<string, unknown>;
  conversation_id: string | null;
  confirmation_id: string | null;
  task_id: string | null;
  created_at: Date;
}

export class AuditStore {
  private readonly knex: Knex | Knex.Transaction;

  /** Takes a transaction too, so a decision and its audit row commit together. */
  constructor(knex: Knex | Knex.Transaction) {
    this.knex = knex;
  }

  async record(e: AuditEntry): Promise<void> {
    await this.knex('assistant_audit').insert({
      user_id: e.userId,
      username: e.username,
      decision: e.decision,
      domain: e.intent.domain,
      operation: e.intent.operation,
      intent: JSON.stringify(e.intent),
      outcome: JSON.stringify(e.outcome),
      conversation_id: e.conversationId ?? null,
      confirmation_id: e.confirmationId ?? null,
      task_id: e.taskId ?? null,
    });
  }

  /** The decisions matching `filter` (one user's), newest first. */
  async list(
    filter: { user_id: string },
    page: number,
    pageSize: number,
    decision?: AuditDecision,
  ): Promise<{ rows: AuditRow[]; total: number }> {
    const base = () => {
      const q = this.knex<AuditRow>('assistant_audit').where(filter);
      if (decision) void q.andWhere({ decision });
      return q;
    };
    const [rows, count] = await Promise.all([
      base()
        .orderBy('seq', 'desc')
        .offset((page - 1) * pageSize)
        .limit(pageSize),
      base().count<{ count: string }[]>('* as count'),
    ]);
    return { rows: rows as AuditRow[], total: Number(count[0]?.count ?? 0) };
  }
}
