import { z } from 'zod';
import { PERMISSIONS } from '../../contracts/permissions.ts';
import { SECURITY_EVENT_TYPES } from '../auth/security-events.ts';
import type { AppContext } from '../context.ts';
import { isoInstant, pageEnvelope, pagination } from '../http/schemas.ts';
import { defineRoute, type AnyRoute } from '../http/routes.ts';

const eventView = z.object({
  id: z.string(),
  ts: z.string(),
  event_type: z.enum(SECURITY_EVENT_TYPES),
  outcome: z.enum(['success', 'failure']),
  actor_id: z.string().nullable(),
  actor_username: z.string().nullable(),
  ip: z.string().nullable(),
  user_agent: z.string().nullable(),
  detail: z.record(z.string(), z.unknown()).nullable(),
});

export function securityEventRoutes(app: AppContext): AnyRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: '/api/admin/security-events',
      tag: 'Admin',
      summary: 'Security events, newest first',
      access: 'admin',
      query: z.object({
        ...pagination,
        event_type: z.enum(SECURITY_EVENT_TYPES).optional(),
        outcome: z.enum(['success', 'failure']).optional(),
        actor: z.string().max(200).optional().describe('actor username'),
        since: isoInstant('since').optional(),
        until: isoInstant('until').optional(),
      }),
      responses: { 200: { description: 'Events', schema: pageEnvelope(eventView) } },
      handler: (_ctx, { query }) =>
        app.securityEvents.list(
          { eventType: query.event_type, outcome: query.outcome, actor: query.actor, since: query.since, until: query.until },
          query.page,
          query.page_size,
        ),
    }),
    defineRoute({
      method: 'get',
      path: '/api/admin/permissions',
      tag: 'Admin',
      summary: 'The permission catalogue (resource:ACTION) that roles and API keys draw from',
      access: 'admin',
      responses: {
        200: { description: 'Permissions', schema: z.object({ items: z.array(z.object({ name: z.string(), description: z.string() })) }) },
      },
      handler: () => ({ items: Object.entries(PERMISSIONS).map(([name, description]) => ({ name, description })) }),
    }),
  ];
}
