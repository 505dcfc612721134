import type { Knex } from 'knex';
import { BUILTIN_ROLES } from '../../contracts/permissions.ts';

export interface UserRow {
  id: string;
  username: string;
  email: string | null;
  display_name: string | null;
  password_hash: string | null;
  auth_source: 'local' | 'oidc';
  oidc_issuer: string | null;
  oidc_subject: string | null;
  active: boolean;
  last_login_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export interface RoleRow {
  id: string;
  name: string;
  description: string | null;
  builtin: boolean;
  created_at: Date;
  updated_at: Date;
}

export async function findUserByUsername(knex: Knex, username: string): Promise<UserRow | undefined> {
  return knex<UserRow>('users').whereRaw('lower(username) = lower(?)', [username]).first();
}

export async function findUserById(knex: Knex, id: string): Promise<UserRow | undefined> {
  return knex<UserRow>('users').where({ id }).first();
}

/** Role names and the union of their permissions, for one user. */
export async function loadAccess(knex: Knex, userId: string): Promise<{ roles: string[]; permissions: string[] }> {
  const rows = await knex('user_roles as ur')
    .join('roles as r', 'r.id', 'ur.role_id')
    .leftJoin('role_permissions as rp', 'rp.role_id', 'r.id')
    .where('ur.user_id', userId)
    .select('r.name', 'rp.permission');
  const roles = [...new Set(rows.map((r) => r.name as string))].sort();
  const permissions = [...new Set(rows.map((r) => r.permission as string | null).filter((p): p is string => !!p))].sort();
  return { roles, permissions };
}

export async function rolesWithPermissions(knex: Knex, ids?: string[]) {
  const q = knex<RoleRow>('roles').orderBy('name');
  if (ids) q.whereIn('id', ids);
  const roles = await q;
  const perms = await knex('role_permissions').whereIn(
    'role_id',
    roles.map((r) => r.id),
  );
  return roles.map((r) => ({
    ...r,
    permissions: perms
      .filter((p) => p.role_id === r.id)
      .map((p) => p.permission as string)
      .sort(),
  }));
}

export async function setUserRoles(trx: Knex, userId: string, roleIds: string[]): Promise<void> {
  await trx('user_roles').where({ user_id: userId }).delete();
  if (roleIds.length) await trx('user_roles').insert(roleIds.map((role_id) => ({ user_id: userId, role_id })));
}

/** Built-in roles get their documented permissions at every start (upgrades add new ones). */
export async function seedBuiltinRoles(knex: Knex): Promise<void> {
  await knex.transaction(async (trx) => {
    for (const [name, def] of Object.entries(BUILTIN_ROLES)) {
      let role = await trx<RoleRow>('roles').whereRaw('lower(name) = lower(?)', [name]).first();
      if (!role) [role] = await trx<RoleRow>('roles').insert({ name, description: def.description, builtin: true }).returning('*');
      else if (!role.builtin) await trx('roles').where({ id: role.id }).update({ builtin: true });
      if (def.permissions.length) {
        await trx('role_permissions')
          .insert(def.permissions.map((permission) => ({ role_id: role!.id, permission })))
          .onConflict(['role_id', 'permission'])
          .ignore();
      }
    }
  });
}
