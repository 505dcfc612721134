import { z } from 'zod';
import type { Knex } from 'knex';
import { findUserById, findUserByUsername, loadAccess, setUserRoles, type UserRow } from '../../db/identity/repository.ts';
import { hashPassword } from '../../lib/crypto.ts';
import { ConflictError, NotFoundError, ValidationError } from '../../lib/errors.ts';
import { ADMIN_ROLE } from '../auth/principal.ts';
import { toUserView, userSchema } from '../auth/schemas.ts';
import { recordSecurityEvent } from '../auth/security-events.ts';
import type { AppContext } from '../context.ts';
import { pageEnvelope, pagination } from '../http/schemas.ts';
import { defineRoute, type AnyRoute } from '../http/routes.ts';
import { password, username, uuidParam } from './schemas.ts';

const roleNames = z
  .array(z.string().trim().min(1))
  .max(50)
  .transform((r) => [...new Set(r)]);

/** Role names to ids; unknown names are a 400 naming them. */
async function resolveRoles(knex: Knex, names: string[]): Promise<string[]> {
  if (!names.length) return [];
  const rows = await knex('roles')
    .whereRaw('lower(name) = any(?)', [names.map((n) => n.toLowerCase())])
    .select('id', 'name');
  const found = new Set(rows.map((r) => String(r.name).toLowerCase()));
  const unknown = names.filter((n) => !found.has(n.toLowerCase()));
  if (unknown.length)
    throw new ValidationError(
      `Unknown role(s): ${unknown.join(', ')}`,
      unknown.map((n) => ({ field: 'body.roles', message: `unknown role '${n}'` })),
    );
  return rows.map((r) => r.id as string);
}

async function otherActiveAdmins(knex: Knex, userId: string): Promise<number> {
  const [{ n }] = await knex('user_roles as ur')
    .join('roles as r', 'r.id', 'ur.role_id')
    .join('users as u', 'u.id', 'ur.user_id')
    .where('r.name', ADMIN_ROLE)
    .where('u.active', true)
    .whereNot('u.id', userId)
    .count({ n: '*' });
  return Number(n);
}

async function view(knex: Knex, user: UserRow) {
  return toUserView(user, (await loadAccess(knex, user.id)).roles);
}

export function userRoutes(app: AppContext): AnyRoute[] {
  const { knex } = app;
  return [
    defineRoute({
      method: 'get',
      path: '/api/admin/users',
      tag: 'Admin',
      summary: 'List users (UserSchema)',
      access: 'admin',
      query: z.object({ ...pagination, search: z.string().max(200).optional() }),
      responses: { 200: { description: 'Users', schema: pageEnvelope(userSchema) } },
      async handler(_ctx, { query }) {
        const base = knex('users');
        if (query.search)
          base.where((b) =>
            b
              .whereILike('username', `%${query.search}%`)
              .orWhereILike('email', `%${query.search}%`)
              .orWhereILike('display_name', `%${query.search}%`),
          );
        const [{ n }] = await base.clone().count({ n: '*' });
        const rows: UserRow[] = await base
          .orderBy([{ column: 'username' }, { column: 'id' }])
          .limit(query.page_size)
          .offset((query.page - 1) * query.page_size);
        const total = Number(n);
        return {
          items: await Promise.all(rows.map((u) => view(knex, u))),
          total,
          page: query.page,
          page_size: query.page_size,
          has_next: query.page * query.page_size < total,
        };
      },
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
        if (await findUserByUsername(knex, body.username))
          throw new ConflictError(`The username '${body.username}' is taken`, 'duplicate_username');
        const roleIds = await resolveRoles(knex, body.roles);
        const hash = await hashPassword(body.password);
        const user = await knex.transaction(async (trx) => {
          const [row] = await trx('users')
            .insert({
              username: body.username,
              password_hash: hash,
              email: body.email ?? null,
              display_name: body.display_name ?? null,
              active: body.active,
            })
            .returning('*');
          await setUserRoles(trx, row.id, roleIds);
          return row as UserRow;
        });
        await recordSecurityEvent(knex, ctx, {
          type: 'USER_CREATED',
          outcome: 'success',
          actorId: principal.userId,
          actorUsername: principal.username,
          detail: { username: user.username, roles: body.roles },
        });
        ctx.status = 201;
        return view(knex, user);
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
      async handler(ctx, { params, body, principal }) {
        const user = await findUserById(knex, params.user_id);
        if (!user) throw new NotFoundError('User', params.user_id);
        const roleIds = body.roles ? await resolveRoles(knex, body.roles) : undefined;
        const { roles: current } = await loadAccess(knex, user.id);
        const losesAdmin =
          current.includes(ADMIN_ROLE) && ((body.roles && !body.roles.some((r) => r.toLowerCase() === 'admin')) || body.active === false);
        if (losesAdmin && (await otherActiveAdmins(knex, user.id)) === 0)
          throw new ConflictError('This is the last active admin; make someone else an admin first', 'last_admin');
        if (body.password && user.auth_source !== 'local')
          throw new ValidationError('Users who sign in through OIDC have no local password', [
            { field: 'body.password', message: 'not allowed for OIDC users' },
          ]);
        const hash = body.password ? await hashPassword(body.password) : undefined;
        await knex.transaction(async (trx) => {
          const patch: Record<string, unknown> = { updated_at: trx.fn.now() };
          if (hash) patch.password_hash = hash;
          if (body.email !== undefined) patch.email = body.email;
          if (body.display_name !== undefined) patch.display_name = body.display_name;
          if (body.active !== undefined) patch.active = body.active;
          await trx('users').where({ id: user.id }).update(patch);
          if (roleIds) await setUserRoles(trx, user.id, roleIds);
          if (hash || body.active === false)
            await trx('sessions').where({ user_id: user.id }).whereNull('revoked_at').update({ revoked_at: trx.fn.now() });
        });
        await recordSecurityEvent(knex, ctx, {
          type: 'USER_UPDATED',
          outcome: 'success',
          actorId: principal.userId,
          actorUsername: principal.username,
          detail: { username: user.username, changed: Object.keys(body), ...(body.roles ? { roles: body.roles } : {}) },
        });
        return view(knex, (await findUserById(knex, user.id))!);
      },
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
      async handler(ctx, { params, principal }) {
        const user = await findUserById(knex, params.user_id);
        if (!user) throw new NotFoundError('User', params.user_id);
        if (user.id === principal.userId) throw new ConflictError('You cannot delete your own account', 'self_delete');
        const { roles } = await loadAccess(knex, user.id);
        if (roles.includes(ADMIN_ROLE) && user.active && (await otherActiveAdmins(knex, user.id)) === 0)
          throw new ConflictError('This is the last active admin', 'last_admin');
        await knex('users').where({ id: user.id }).delete();
        await recordSecurityEvent(knex, ctx, {
          type: 'USER_DELETED',
          outcome: 'success',
          actorId: principal.userId,
          actorUsername: principal.username,
          detail: { username: user.username },
        });
        return { id: user.id, deleted: true as const };
      },
    }),
  ];
}
