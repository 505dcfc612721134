/**
 * Confirmations of risky assistant commands: the only code that reads or writes
 * `assistant_confirmations`. A confirmation leaves `pending` once, by a conditional update, so
 * a double confirm or a confirm racing the expiry timer has exactly one winner; the decision and
 * its audit row commit together.
 */
import type { Knex } from 'knex';
import { AuditStore, type AuditEntry } from './audit.ts';

export type ConfirmationStatus = 'pending' | 'confirmed' | 'cancelled' | 'expired';

/**
 * What confirming does: a task of a registered kind, a git commit, or a dataset review write at
 * the session version the assistant showed (stale at confirm: 409). Ids only, never a secret.
 */
export type PlannedAction =
  | { type: 'task'; kind: string; input: unknown; params: Record<string, unknown> }
  | { type: 'git_commit'; envId: string; dashboardId: number; message: string }
  | {
      type: 'dataset_review';
      op: 'set_field' | 'approve_mappings' | 'answer';
      sessionId: string;
      version: number;
      fieldId?: string;
      label?: string;
      questionKey?: string;
      option?: string;
    };

export interface ConfirmationRow {
  id: string;
  user_id: string;
  username: string;
  conversation_id: string | null;
  intent: Record<string, unknown> & { domain: string; operation: string };
  summary: string;
  action: PlannedAction;
  status: ConfirmationStatus;
  expires_at: Date;
  decided_at: Date | null;
  task_id: string | null;
  result: unknown;
  created_at: Date;
}

export class ConfirmationStore {
  private readonly knex: Knex;

  constructor(knex: Knex) {
    this.knex = knex;
  }

  async create(
    row: Pick<ConfirmationRow, 'id' | 'user_id' | 'username' | 'conversation_id' | 'intent' | 'summary' | 'action' | 'expires_at'>,
  ) {
    await this.knex('assistant_confirmations').insert({
      ...row,
      intent: JSON.stringify(row.intent),
      action: JSON.stringify(row.action),
    });
  }

  async get(id: string): Promise<ConfirmationRow | undefined> {
    return this.knex<ConfirmationRow>('assistant_confirmations').where({ id }).first();
  }

  /**
   * pending → `to`, only while unexpired (an expiry is only ever `expired`); with the audit row in
   * the same transaction. Returns the row when this call made the decision.
   */
  async decide(id: string, to: 'confirmed' | 'cancelled', audit?: Omit<AuditEntry, 'decision'>): Promise<ConfirmationRow | undefined> {
    return this.knex.transaction(async (trx) => {
      const [row] = await trx<ConfirmationRow>('assistant_confirmations')
        .where({ id, status: 'pending' })
        .andWhere('expires_at', '>', trx.fn.now())
        .update({ status: to, decided_at: trx.fn.now() as never })
        .returning('*');
      if (row && audit) await new AuditStore(trx).record({ ...audit, decision: to });
      return row as ConfirmationRow | undefined;
    });
  }

  /** pending and past its time → expired, audited once (by whoever notices first: the timer or a late confirm). */
  async expire(id: string): Promise<boolean> {
    return this.knex.transaction(async (trx) => {
      const [row] = await trx<ConfirmationRow>('assistant_confirmations')
        .where({ id, status: 'pending' })
        .andWhere('expires_at', '<=', trx.fn.now())
        .update({ status: 'expired', decided_at: trx.fn.now() as never })
        .returning('*');
      if (!row) return false;
      const r = row as ConfirmationRow;
      await new AuditStore(trx).record({
        userId: r.user_id,
        username: r.username,
        decision: 'expired',
        intent: r.intent,
        outcome: { summary: r.summary, expires_at: new Date(r.expires_at).toISOString() },
        conversationId: r.conversation_id,
        confirmationId: r.id,
      });
      return true;
    });
  }

  /** What confirming produced (the task, or a direct action's result), written once: true for the call that wrote it. */
  async recordOutcome(id: string, outcome: { taskId?: string; result?: unknown }): Promise<boolean> {
    const q = this.knex('assistant_confirmations').where({ id });
    if (outcome.taskId !== undefined) return (await q.whereNull('task_id').update({ task_id: outcome.taskId })) > 0;
    return (await q.whereNull('result').update({ result: JSON.stringify(outcome.result ?? null) })) > 0;
  }
}
