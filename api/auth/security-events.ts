import type { Context } from 'koa';
import type { Knex } from 'knex';
import { redact } from '../../lib/redact.ts';

export const SECURITY_EVENT_TYPES = [
  'LOGIN',
  'LOGIN_FAILED',
  'LOGIN_THROTTLED',
  'OIDC_LOGIN',
  'OIDC_LOGIN_FAILED',
  'CURRENT_USER_READ',
  'LOGOUT',
  'API_KEY_CREATED',
  'API_KEY_REVOKED',
  'ROLE_CREATED',
  'ROLE_UPDATED',
  'ROLE_DELETED',
  'USER_CREATED',
  'USER_UPDATED',
  'USER_DELETED',
  'GROUP_MAPPING_CREATED',
  'GROUP_MAPPING_DELETED',
  'ENVIRONMENT_CREATED',
  'ENVIRONMENT_UPDATED',
  'ENVIRONMENT_DELETED',
  'ENVIRONMENT_TESTED',
  'LLM_PROVIDER_CREATED',
  'LLM_PROVIDER_UPDATED',
  'LLM_PROVIDER_DELETED',
  'LLM_PROVIDER_TESTED',
] as const;
export type SecurityEventType = (typeof SECURITY_EVENT_TYPES)[number];

export interface SecurityEventInput {
  type: SecurityEventType;
  outcome: 'success' | 'failure';
  actorId?: string | null;
  actorUsername?: string | null;
  detail?: Record<string, unknown>;
}

/** Security events never hold a password, token or key: details pass through the redactor. */
export async function recordSecurityEvent(knex: Knex, ctx: Context | undefined, ev: SecurityEventInput): Promise<void> {
  await knex('security_events').insert({
    event_type: ev.type,
    outcome: ev.outcome,
    actor_id: ev.actorId ?? null,
    actor_username: ev.actorUsername ?? null,
    ip: ctx?.ip ?? null,
    user_agent: ctx?.get('user-agent')?.slice(0, 500) || null,
    detail: ev.detail ? JSON.stringify(redact(ev.detail)) : null,
  });
}
