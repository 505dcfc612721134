import { z } from 'zod';
import { randomToken, sha256Hex } from '../../lib/crypto.ts';
import { NotFoundError } from '../../lib/errors.ts';
import { recordSecurityEvent } from '../auth/security-events.ts';
import type { AppContext } from '../context.ts';
import { defineRoute, type AnyRoute } from '../http/routes.ts';
import { permissionList, uuidParam } from './schemas.ts';

const KEY_PREFIX = 'sy_';
const access = { permission: 'admin:settings:WRITE' };

const apiKeyListItem = z.object({
  id: z.string(),
  name: z.string(),
  key_prefix: z.string().describe('the first characters of the key, to recognise it'),
  permissions: z.array(z.string()),
  active: z.boolean(),
  created_by: z.string().nullable(),
  created_at: z.string(),
  revoked_at: z.string().nullable(),
  last_used_at: z.string().nullable(),
});
const apiKeyCreateResponse = apiKeyListItem.extend({ key: z.string().describe('the raw key: shown once, never retrievable again') });
const apiKeyRevokeResponse = z.object({ id: z.string(), active: z.literal(false), revoked_at: z.string() });

type Row = {
  id: string;
  name: string;
  key_prefix: string;
  permissions: string[];
  active: boolean;
  created_by: string | null;
  created_at: Date;
  revoked_at: Date | null;
  last_used_at: Date | null;
};
const iso = (d: Date | null) => (d ? d.toISOString() : null);
// Never key_hash: list items are built field by field.
const toItem = (r: Row) => ({
  id: r.id,
  name: r.name,
  key_prefix: r.key_prefix,
  permissions: r.permissions,
  active: r.active,
  created_by: r.created_by,
  created_at: r.created_at.toISOString(),
  revoked_at: iso(r.revoked_at),
  last_used_at: iso(r.last_used_at),
});

export function apiKeyRoutes(app: AppContext): AnyRoute[] {
  const { knex } = app;
  return [
    defineRoute({
      method: 'get',
      path: '/api/admin/api-keys',
      tag: 'Admin',
      summary: 'List API keys (never the hash or the raw key)',
      access,
      responses: { 200: { description: 'API keys', schema: z.object({ items: z.array(apiKeyListItem) }) } },
      handler: async () => ({ items: ((await knex('api_keys').orderBy('created_at', 'desc')) as Row[]).map(toItem) }),
    }),
    defineRoute({
      method: 'post',
      path: '/api/admin/api-keys',
      tag: 'Admin',
      summary: 'Create an API key',
      description:
        'Generates a random key, stores only its SHA-256 and returns the raw key once. Present it as `X-API-Key`; it carries exactly the listed permissions.',
      access,
      body: z
        .object({
          name: z.string().trim().min(1, 'name is required').max(200),
          permissions: permissionList.refine((p) => p.length > 0, 'at least one permission is required'),
        })
        .strict(),
      responses: { 201: { description: 'Created; `key` is shown only now', schema: apiKeyCreateResponse } },
      async handler(ctx, { body, principal }) {
        const raw = KEY_PREFIX + randomToken(32);
        const [row] = (await knex('api_keys')
          .insert({
            name: body.name,
            key_hash: sha256Hex(raw),
            key_prefix: raw.slice(0, 10),
            permissions: body.permissions,
            created_by: principal.userId,
          })
          .returning('*')) as Row[];
        await recordSecurityEvent(knex, ctx, {
          type: 'API_KEY_CREATED',
          outcome: 'success',
          actorId: principal.userId,
          actorUsername: principal.username,
          detail: { api_key_id: row.id, name: row.name, permissions: row.permissions },
        });
        ctx.status = 201;
        return { ...toItem(row), key: raw };
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/api/admin/api-keys/:id',
      tag: 'Admin',
      summary: 'Revoke an API key',
      description:
        'Soft delete: `active` becomes false, the row stays for audit, the key is refused at once. 404 when the key is unknown or already revoked.',
      access,
      params: uuidParam('id'),
      responses: { 200: { description: 'Revoked', schema: apiKeyRevokeResponse }, 404: { description: 'Unknown or already revoked' } },
      async handler(ctx, { params, principal }) {
        const [row] = (await knex('api_keys')
          .where({ id: params.id, active: true })
          .update({ active: false, revoked_at: knex.fn.now() })
          .returning('*')) as Row[];
        if (!row) throw new NotFoundError('Active API key', params.id);
        await recordSecurityEvent(knex, ctx, {
          type: 'API_KEY_REVOKED',
          outcome: 'success',
          actorId: principal.userId,
          actorUsername: principal.username,
          detail: { api_key_id: row.id, name: row.name },
        });
        return { id: row.id, active: false as const, revoked_at: row.revoked_at!.toISOString() };
      },
    }),
  ];
}
