import type { Knex } from 'knex';
import { z } from 'zod';
import { randomToken, sha256Hex } from '../../lib/crypto.ts';
import { AppError, NotFoundError } from '../../lib/errors.ts';
import { can, isAdmin, type Principal } from '../auth/principal.ts';
import { recordSecurityEvent } from '../auth/security-events.ts';
import type { AppContext } from '../context.ts';
import { defineRoute, type AnyRoute } from '../http/routes.ts';
import { isoInstant } from '../http/schemas.ts';
import { permissionList, uuidParam } from './schemas.ts';

const KEY_PREFIX = 'sy_';
const access = { permission: 'admin:settings:WRITE' };

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
const apiKeyCreateResponse = apiKeyListItem.extend({ key: z.string().describe('the raw key: shown once, never retrievable again') });
const apiKeyRevokeResponse = z.object({ id: z.string(), active: z.literal(false), revoked_at: z.string() });

type Row = {
  id: string;
  name: string;
  key_prefix: string;
  permissions: string[];
  active: boolean;
  expires_at: Date | null;
  created_by: string | null;
  created_by_username: string | null;
  created_by_api_key_id: string | null;
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
  expires_at: iso(r.expires_at),
  expired: r.expires_at !== null && r.expires_at.getTime() <= Date.now(),
  created_by: !r.created_by_username
    ? null
    : r.created_by_api_key_id
      ? { kind: 'api_key' as const, id: r.created_by_api_key_id, username: r.created_by_username }
      : { kind: 'user' as const, id: r.created_by, username: r.created_by_username },
  created_at: r.created_at.toISOString(),
  revoked_at: iso(r.revoked_at),
  last_used_at: iso(r.last_used_at),
});

const expiresAt = isoInstant('expires_at')
  .refine((d) => d.getTime() > Date.now(), 'expires_at must be in the future')
  .describe('Optional expiry (ISO 8601, in the future); the key is refused from then on');

/** A key may carry only what its creator holds (role Admin: anything), so minting one never escalates. */
function assertCreatorHolds(principal: Principal, permissions: string[]): void {
  if (isAdmin(principal)) return;
  const missing = permissions.filter((p) => !can(principal, p));
  if (!missing.length) return;
  throw new AppError(
    403,
    'forbidden',
    'Forbidden',
    `An API key may only carry permissions its creator holds; you lack ${missing.join(', ')}`,
    { extra: { missing_permissions: missing } },
  );
}

function listKeys(knex: Knex): Promise<Row[]> {
  return knex('api_keys').orderBy([
    { column: 'created_at', order: 'desc' },
    { column: 'id', order: 'desc' },
  ]);
}

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
      handler: async () => ({ items: (await listKeys(knex)).map(toItem) }),
    }),
    defineRoute({
      method: 'post',
      path: '/api/admin/api-keys',
      tag: 'Admin',
      summary: 'Create an API key',
      description:
        'Generates a random key, stores only its SHA-256 and returns the raw key once. Present it as `X-API-Key`; it carries exactly the listed permissions, which must all be held by the caller (role Admin: any; 403 naming the missing ones otherwise), so a key never grants more than its creator has. With `expires_at` the key is refused from that instant on, like a revoked one.',
      access,
      body: z
        .object({
          name: z.string().trim().min(1, 'name is required').max(200),
          permissions: permissionList.refine((p) => p.length > 0, 'at least one permission is required'),
          expires_at: expiresAt.optional(),
        })
        .strict(),
      responses: {
        201: { description: 'Created; `key` is shown only now', schema: apiKeyCreateResponse },
        403: { description: 'Not permitted, or a permission the caller does not hold (`missing_permissions`)' },
      },
      async handler(ctx, { body, principal }) {
        assertCreatorHolds(principal, body.permissions);
        const raw = KEY_PREFIX + randomToken(32);
        const [row] = (await knex('api_keys')
          .insert({
            name: body.name,
            key_hash: sha256Hex(raw),
            key_prefix: raw.slice(0, 10),
            permissions: body.permissions,
            expires_at: body.expires_at ?? null,
            created_by: principal.userId,
            created_by_username: principal.username,
            created_by_api_key_id: principal.apiKeyId ?? null,
          })
          .returning('*')) as Row[];
        await recordSecurityEvent(knex, ctx, {
          type: 'API_KEY_CREATED',
          outcome: 'success',
          actorId: principal.userId,
          actorUsername: principal.username,
          detail: { api_key_id: row.id, name: row.name, permissions: row.permissions, expires_at: iso(row.expires_at) },
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
