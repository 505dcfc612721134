/**
 * Confirmations of risky assistant commands: the only code that reads or writes
 * `assistant_confirmations`. The row is the one decider of a confirmation's state, by the
 * database's clock: it leaves `pending` once, by a conditional update, so a double confirm or a
 * confirm racing the expiry timer has exactly one winner; the decision and its audit row commit
 * together.
 */
import type { Knex } from 'knex';
import type { PlannedAction } from '../../contracts/assistant.ts';
import { AuditStore, type AuditEntry } from './audit.ts';

export type ConfirmationStatus = 'pending' | 'confirmed' | 'cancelled' | 'expired';

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

  /** A pending confirmation that expires `ttlSeconds` from now by the database's clock; answers its expiry. */
  async create(
    row: Pick<ConfirmationRow, 'id' | 'user_id' | 'username' | 'conversation_id' | 'intent' | 'summary' | 'action'>,
    ttlSeconds: number,
  ): Promise<{ expires_at: Date }> {
    const [created] = await this.knex('assistant_confirmations')
      .insert({
        ...row,
        intent: JSON.stringify(row.intent),
        action: JSON.stringify(row.action),
        expires_at: this.knex.raw('now() + make_interval(secs => ?)', [ttlSeconds]),
      })
      .returning(['expires_at']);
    return { expires_at: new Date((created as { expires_at: Date }).expires_at) };
  }

  /** The row, and whether its time is up by the database's clock (a pending row past it is as good as expired). */
  async get(id: string): Promise<(ConfirmationRow & { past_expiry: boolean }) | undefined> {
    return this.knex<ConfirmationRow>('assistant_confirmations')
      .where({ id })
      .first('*', this.knex.raw('expires_at <= now() as past_expiry'));
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
