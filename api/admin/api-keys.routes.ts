import { permissions } from '../../contracts/permissions.ts';
import { z } from 'zod';
import type { AppContext } from '../context.ts';
import { defineRoute, type AnyRoute } from '../http/routes.ts';
import { isoInstant } from '../http/schemas.ts';
import { permissionList, uuidParam } from './schemas.ts';

const access = { permission: permissions.admin.settingsWrite } as const;

const creator = z
  .object({
    kind: z.enum(['user', 'api_key']),
    id: z.string().nullable().describe('the user id (null once the user is deleted), or the id of the key that created this one'),
    username: z.string().describe('the user name (or `api-key:<name>`) at creation'),
  })
  .nullable()
  .describe('Who created the key');

const apiKeyListItem = z.object({
  id: z.string(),
  name: z.string(),
  key_prefix: z.string().describe('the first characters of the key, to recognise it'),
  permissions: z.array(z.string()),
  active: z.boolean().describe('false once revoked'),
  expires_at: z.string().nullable().describe('after this instant the key is refused like a revoked one; null: no expiry'),
  expired: z.boolean(),
  created_by: creator,
  created_at: z.string(),
  revoked_at: z.string().nullable(),
  last_used_at: z.string().nullable(),
});
const apiKeyCreateResponse = apiKeyListItem.extend({
  raw_key: z.string().describe('the raw key: shown once, never retrievable again'),
  key: z
    .string()
    .meta({ deprecated: true })
    .describe('deprecated alias of `raw_key` (the same value), kept for clients that still read it; read `raw_key`'),
});
const apiKeyRevokeResponse = z.object({ id: z.string(), active: z.literal(false), revoked_at: z.string() });

const expiresAt = isoInstant('expires_at')
  .refine((d) => d.getTime() > Date.now(), 'expires_at must be in the future')
  .describe('Optional expiry (ISO 8601, in the future); the key is refused from then on');

export function apiKeyRoutes(app: AppContext): AnyRoute[] {
  const { apiKeys } = app;
  return [
    defineRoute({
      method: 'get',
      path: '/api/admin/api-keys',
      tag: 'Admin',
      summary: 'List API keys (never `key_hash` or `raw_key`)',
      access,
      responses: { 200: { description: 'API keys', schema: z.object({ items: z.array(apiKeyListItem) }) } },
      handler: () => apiKeys.list(),
    }),
    defineRoute({
      method: 'post',
      path: '/api/admin/api-keys',
      tag: 'Admin',
      summary: 'Create an API key',
      description:
        'Generates a random key, stores only its SHA-256 and returns the raw key once, as `raw_key`; the key acts for its creator with the listed permissions, never more than the creator holds now. Details: docs/identity-and-access.md#post-apiadminapi-keys.',
      access,
      body: z
        .object({
          name: z.string().trim().min(1, 'name is required').max(200),
          permissions: permissionList.refine((p) => p.length > 0, 'at least one permission is required'),
          expires_at: expiresAt.optional(),
        })
        .strict(),
      responses: {
        201: { description: 'Created; `raw_key` is shown only now', schema: apiKeyCreateResponse },
        403: { description: 'Not permitted, or a permission the caller does not hold (`missing_permissions`)' },
      },
      async handler(ctx, { body, principal }) {
        const key = await apiKeys.create(ctx, principal, body);
        ctx.status = 201;
        return key;
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/api/admin/api-keys/:id',
      tag: 'Admin',
      summary: 'Revoke an API key',
      description:
        'Soft delete: `active` becomes false, the row stays for audit, the key is refused at once, and so are keys it made and the runs of schedules made with it. 404 when the key is unknown or already revoked.',
      access,
      params: uuidParam('id'),
      responses: { 200: { description: 'Revoked', schema: apiKeyRevokeResponse }, 404: { description: 'Unknown or already revoked' } },
      handler: (ctx, { params, principal }) => apiKeys.revoke(ctx, principal, params.id),
    }),
  ];
}
