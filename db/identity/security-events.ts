/**
 * The security event store: the only code that reads or writes `security_events`, an append-only
 * log. Every detail passes through the redactor on its way in, so no password, token or key is
 * stored whoever writes the event.
 */
import type { Knex } from 'knex';
import type { SecurityEventOutcome, SecurityEventType } from '../../contracts/security-events.ts';
import { redact } from '../../lib/redact.ts';

export interface SecurityEventRecord {
  /** bigserial, as PostgreSQL's driver returns it: a string. */
  id: string;
  ts: Date;
  event_type: SecurityEventType;
  outcome: SecurityEventOutcome;
  actor_id: string | null;
  actor_username: string | null;
  ip: string | null;
  user_agent: string | null;
  detail: Record<string, unknown> | null;
}

export interface NewSecurityEvent {
  type: SecurityEventType;
  outcome: SecurityEventOutcome;
  actorId?: string | null;
  actorUsername?: string | null;
  ip?: string | null;
  userAgent?: string | null;
  detail?: Record<string, unknown>;
}

export interface SecurityEventFilter {
  eventType?: SecurityEventType;
  outcome?: SecurityEventOutcome;
  /** Actor username, case-insensitive. */
  actor?: string;
  /** Inclusive. */
  since?: Date;
  /** Exclusive. */
  until?: Date;
}

export class SecurityEventStore {
  private readonly knex: Knex;

  constructor(knex: Knex) {
    this.knex = knex;
  }

  async append(ev: NewSecurityEvent): Promise<void> {
    await this.knex('security_events').insert({
      event_type: ev.type,
      outcome: ev.outcome,
      actor_id: ev.actorId ?? null,
      actor_username: ev.actorUsername ?? null,
      ip: ev.ip ?? null,
      user_agent: ev.userAgent ?? null,
      detail: ev.detail ? JSON.stringify(redact(ev.detail)) : null,
    });
  }

  /** A page, newest first (then by id, so pages never overlap), and the exact total. */
  async list(filter: SecurityEventFilter, page: number, pageSize: number): Promise<{ items: SecurityEventRecord[]; total: number }> {
    const q = this.knex<SecurityEventRecord>('security_events');
    if (filter.eventType) q.where('event_type', filter.eventType);
    if (filter.outcome) q.where('outcome', filter.outcome);
    if (filter.actor) q.whereRaw('lower(actor_username) = lower(?)', [filter.actor]);
    if (filter.since) q.where('ts', '>=', filter.since);
    if (filter.until) q.where('ts', '<', filter.until);
    const [{ n }] = await q.clone().count<{ n: string }[]>({ n: '*' });
    const items: SecurityEventRecord[] = await q
      .orderBy([
        { column: 'ts', order: 'desc' },
        { column: 'id', order: 'desc' },
      ])
      .limit(pageSize)
      .offset((page - 1) * pageSize);
    return { items, total: Number(n) };
  }
}
