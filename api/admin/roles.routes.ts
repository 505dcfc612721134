import { z } from 'zod';
import type { AppContext } from '../context.ts';
import { defineRoute, type AnyRoute } from '../http/routes.ts';
import { permissionList, roleView, uuidParam } from './schemas.ts';

const roleName = z
  .string()
  .trim()
  .min(1, 'name is required')
  .max(100)
  .regex(/^[A-Za-z0-9 ._-]+$/, 'name may hold letters, digits, spaces and . _ -');

export function roleRoutes(app: AppContext): AnyRoute[] {
  const { roles } = app;
  return [
    defineRoute({
      method: 'get',
      path: '/api/admin/roles',
      tag: 'Admin',
      summary: 'List roles with their permissions',
      access: 'admin',
      responses: { 200: { description: 'Roles', schema: z.object({ items: z.array(roleView) }) } },
      handler: () => roles.list(),
    }),
    defineRoute({
      method: 'post',
      path: '/api/admin/roles',
      tag: 'Admin',
      summary: 'Create a role',
      description:
        'The name is unique (case-insensitive): 409 otherwise. Permissions must come from the catalogue (`GET /api/admin/permissions`).',
      access: 'admin',
      body: z.object({ name: roleName, description: z.string().max(500).optional(), permissions: permissionList.default([]) }).strict(),
      responses: { 201: { description: 'Created', schema: roleView }, 409: { description: 'Duplicate name' } },
      async handler(ctx, { body, principal }) {
        const role = await roles.create(ctx, principal, body);
        ctx.status = 201;
        return role;
      },
    }),
    defineRoute({
      method: 'put',
      path: '/api/admin/roles/:role_id',
      tag: 'Admin',
      summary: 'Update a role',
      description: 'Fields not sent stay as they are; `permissions` replaces the set. Built-in roles are read-only (409).',
      access: 'admin',
      params: uuidParam('role_id'),
      body: z
        .object({
          name: roleName.optional(),
          description: z.string().max(500).nullable().optional(),
          permissions: permissionList.optional(),
        })
        .strict(),
      responses: {
        200: { description: 'Updated', schema: roleView },
        404: { description: 'Unknown role' },
        409: { description: 'Duplicate name or built-in role' },
      },
      handler: (ctx, { params, body, principal }) => roles.update(ctx, principal, params.role_id, body),
    }),
    defineRoute({
      method: 'delete',
      path: '/api/admin/roles/:role_id',
      tag: 'Admin',
      summary: 'Delete a role',
      description: 'Users and group mappings lose the role. Built-in roles cannot be deleted (409).',
      access: 'admin',
      params: uuidParam('role_id'),
      responses: {
        200: { description: 'Deleted', schema: z.object({ id: z.string(), deleted: z.literal(true) }) },
        404: { description: 'Unknown role' },
        409: { description: 'Built-in role' },
      },
      handler: (ctx, { params, principal }) => roles.remove(ctx, principal, params.role_id),
    }),
  ];
}
