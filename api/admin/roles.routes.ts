import { z } from 'zod';
import { rolesWithPermissions } from '../../db/identity/repository.ts';
import { ConflictError, NotFoundError } from '../../lib/errors.ts';
import { recordSecurityEvent } from '../auth/security-events.ts';
import type { AppContext } from '../context.ts';
import { defineRoute, type AnyRoute } from '../http/routes.ts';
import { permissionList, roleView, uuidParam } from './schemas.ts';

const roleName = z
  .string()
  .trim()
  .min(1, 'name is required')
  .max(100)
  .regex(/^[A-Za-z0-9 ._-]+$/, 'name may hold letters, digits, spaces and . _ -');

export function toRoleView(r: Awaited<ReturnType<typeof rolesWithPermissions>>[number]) {
  return { ...r, created_at: r.created_at.toISOString(), updated_at: r.updated_at.toISOString() };
}

async function loadRole(app: AppContext, id: string) {
  const [role] = await rolesWithPermissions(app.knex, [id]);
  if (!role) throw new NotFoundError('Role', id);
  return role;
}

async function assertNameFree(app: AppContext, name: string, exceptId?: string) {
  const q = app.knex('roles').whereRaw('lower(name) = lower(?)', [name]);
  if (exceptId) q.whereNot({ id: exceptId });
  if (await q.first()) throw new ConflictError(`A role named '${name}' already exists`, 'duplicate_name');
}

export function roleRoutes(app: AppContext): AnyRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: '/api/admin/roles',
      tag: 'Admin',
      summary: 'List roles with their permissions',
      access: 'admin',
      responses: { 200: { description: 'Roles', schema: z.object({ items: z.array(roleView) }) } },
      handler: async () => ({ items: (await rolesWithPermissions(app.knex)).map(toRoleView) }),
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
        await assertNameFree(app, body.name);
        const id = await app.knex.transaction(async (trx) => {
          const [row] = await trx('roles')
            .insert({ name: body.name, description: body.description ?? null })
            .returning('id');
          if (body.permissions.length)
            await trx('role_permissions').insert(body.permissions.map((permission) => ({ role_id: row.id, permission })));
          return row.id as string;
        });
        await recordSecurityEvent(app.knex, ctx, {
          type: 'ROLE_CREATED',
          outcome: 'success',
          actorId: principal.userId,
          actorUsername: principal.username,
          detail: { role: body.name, permissions: body.permissions },
        });
        ctx.status = 201;
        return toRoleView(await loadRole(app, id));
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
      async handler(ctx, { params, body, principal }) {
        const role = await loadRole(app, params.role_id);
        if (role.builtin)
          throw new ConflictError(`The built-in role ${role.name} cannot be changed; create a role of your own instead`, 'builtin_role');
        if (body.name) await assertNameFree(app, body.name, role.id);
        await app.knex.transaction(async (trx) => {
          const patch: Record<string, unknown> = { updated_at: trx.fn.now() };
          if (body.name !== undefined) patch.name = body.name;
          if (body.description !== undefined) patch.description = body.description;
          await trx('roles').where({ id: role.id }).update(patch);
          if (body.permissions) {
            await trx('role_permissions').where({ role_id: role.id }).delete();
            if (body.permissions.length)
              await trx('role_permissions').insert(body.permissions.map((permission) => ({ role_id: role.id, permission })));
          }
        });
        const updated = await loadRole(app, role.id);
        await recordSecurityEvent(app.knex, ctx, {
          type: 'ROLE_UPDATED',
          outcome: 'success',
          actorId: principal.userId,
          actorUsername: principal.username,
          detail: {
            role: updated.name,
            before: { name: role.name, permissions: role.permissions },
            after: { name: updated.name, permissions: updated.permissions },
          },
        });
        return toRoleView(updated);
      },
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
      async handler(ctx, { params, principal }) {
        const role = await loadRole(app, params.role_id);
        if (role.builtin) throw new ConflictError(`The built-in role ${role.name} cannot be deleted`, 'builtin_role');
        await app.knex('roles').where({ id: role.id }).delete();
        await recordSecurityEvent(app.knex, ctx, {
          type: 'ROLE_DELETED',
          outcome: 'success',
          actorId: principal.userId,
          actorUsername: principal.username,
          detail: { role: role.name },
        });
        return { id: role.id, deleted: true as const };
      },
    }),
  ];
}
