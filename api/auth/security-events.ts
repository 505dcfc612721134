import type { Context } from 'koa';
import { SECURITY_EVENT_TYPES, type SecurityEventOutcome, type SecurityEventType } from '../../contracts/security-events.ts';
import type { SecurityEventFilter, SecurityEventStore } from '../../db/identity/index.ts';
import type { Principal } from './principal.ts';

export { SECURITY_EVENT_TYPES, type SecurityEventType };

export interface SecurityEventInput {
  type: SecurityEventType;
  outcome: SecurityEventOutcome;
  actorId?: string | null;
  actorUsername?: string | null;
  detail?: Record<string, unknown>;
}

/**
 * The security event log: who did what, from which address and user agent, with what outcome.
 * Details are redacted by the store, so events never hold a password, token or key.
 */
export class SecurityEventService {
  private readonly store: SecurityEventStore;

  constructor(store: SecurityEventStore) {
    this.store = store;
  }

  /** `ctx` is the request the event happened in (address, user agent); undefined outside one. */
  record(ctx: Context | undefined, ev: SecurityEventInput): Promise<void> {
    return this.store.append({
      ...ev,
      ip: ctx?.ip ?? null,
      userAgent: ctx?.get('user-agent')?.slice(0, 500) || null,
    });
  }

  /** A change `principal` made successfully (an administrator's, usually); made with an API key, the key is named in `detail.via_key`. */
  recordChange(
    ctx: Context,
    principal: Pick<Principal, 'userId' | 'username'> & Partial<Pick<Principal, 'apiKeyId' | 'apiKeyName'>>,
    type: SecurityEventType,
    detail: Record<string, unknown>,
  ): Promise<void> {
    const via = principal.apiKeyId ? { via_key: { id: principal.apiKeyId, name: principal.apiKeyName ?? null } } : {};
    return this.record(ctx, {
      type,
      outcome: 'success',
      actorId: principal.userId,
      actorUsername: principal.username,
      detail: { ...detail, ...via },
    });
  }

  /** A page of events, newest first. */
  async list(filter: SecurityEventFilter, page: number, pageSize: number) {
    const { items, total } = await this.store.list(filter, page, pageSize);
    return {
      items: items.map((r) => ({ ...r, id: String(r.id), ts: new Date(r.ts).toISOString() })),
      total,
      page,
      page_size: pageSize,
      has_next: page * pageSize < total,
    };
  }
}
