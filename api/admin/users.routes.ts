import { z } from 'zod';
import { userSchema } from '../auth/schemas.ts';
import type { AppContext } from '../context.ts';
import { pageEnvelope, pagination } from '../http/schemas.ts';
import { defineRoute, type AnyRoute } from '../http/routes.ts';
import { password, username, uuidParam } from './schemas.ts';

const roleNames = z
  .array(z.string().trim().min(1))
  .max(50)
  .transform((r) => [...new Set(r)]);

export function userRoutes(app: AppContext): AnyRoute[] {
  const { users } = app;
  return [
    defineRoute({
      method: 'get',
      path: '/api/admin/users',
      tag: 'Admin',
      summary: 'List users (UserSchema)',
      access: 'admin',
      query: z.object({ ...pagination, search: z.string().max(200).optional() }),
      responses: { 200: { description: 'Users', schema: pageEnvelope(userSchema) } },
      handler: (_ctx, { query }) => users.list(query.search, query.page, query.page_size),
    }),
    defineRoute({
      method: 'post',
      path: '/api/admin/users',
      tag: 'Admin',
      summary: 'Create a local user',
      access: 'admin',
      body: z
        .object({
          username,
          password,
          email: z.email().nullable().optional(),
          display_name: z.string().trim().max(200).nullable().optional(),
          roles: roleNames.default([]),
          active: z.boolean().default(true),
        })
        .strict(),
      responses: { 201: { description: 'Created', schema: userSchema }, 409: { description: 'Username taken' } },
      async handler(ctx, { body, principal }) {
        const user = await users.create(ctx, principal, body);
        ctx.status = 201;
        return user;
      },
    }),
    defineRoute({
      method: 'put',
      path: '/api/admin/users/:user_id',
      tag: 'Admin',
      summary: 'Update a user',
      description:
        "Fields not sent stay as they are; `roles` replaces the set. A new password or deactivation ends the user's sessions. The last active admin cannot lose the Admin role or be deactivated (409).",
      access: 'admin',
      params: uuidParam('user_id'),
      body: z
        .object({
          password: password.optional(),
          email: z.email().nullable().optional(),
          display_name: z.string().trim().max(200).nullable().optional(),
          roles: roleNames.optional(),
          active: z.boolean().optional(),
        })
        .strict(),
      responses: {
        200: { description: 'Updated', schema: userSchema },
        404: { description: 'Unknown user' },
        409: { description: 'Would remove the last admin' },
      },
      handler: (ctx, { params, body, principal }) => users.update(ctx, principal, params.user_id, body),
    }),
    defineRoute({
      method: 'delete',
      path: '/api/admin/users/:user_id',
      tag: 'Admin',
      summary: 'Delete a user',
      description: 'Removes the user and their sessions. You cannot delete yourself or the last active admin (409).',
      access: 'admin',
      params: uuidParam('user_id'),
      responses: {
        200: { description: 'Deleted', schema: z.object({ id: z.string(), deleted: z.literal(true) }) },
        404: { description: 'Unknown user' },
        409: { description: 'Yourself or the last admin' },
      },
      handler: (ctx, { params, principal }) => users.remove(ctx, principal, params.user_id),
    }),
  ];
}
