/**
 * The role store: the only code that reads or writes `roles`, `role_permissions`, `user_roles`
 * and `group_mappings`: what a role permits and who gets it (users directly, directory groups
 * at each OIDC sign-in). Role names are unique case-insensitively (index `roles_name_lower`).
 * Deleting a role removes its permissions, assignments and group mappings by cascade.
 */
import type { Knex } from 'knex';

export interface RoleRecord {
  id: string;
  name: string;
  description: string | null;
  builtin: boolean;
  created_at: Date;
  updated_at: Date;
}

export type RoleWithPermissions = RoleRecord & { permissions: string[] };

export interface GroupMappingRecord {
  id: string;
  group_name: string;
  role_id: string;
  role_name: string;
  created_at: Date;
}

/** A user's role names and the union of their permissions, both sorted. */
export interface Access {
  roles: string[];
  permissions: string[];
}

export class RoleStore {
  private readonly knex: Knex;

  constructor(knex: Knex) {
    this.knex = knex;
  }

  // --- roles and their permissions ------------------------------------------------------------

  /** Roles ordered by name, each with its sorted permissions; only `ids` when given. */
  async list(ids?: string[]): Promise<RoleWithPermissions[]> {
    const q = this.knex<RoleRecord>('roles').orderBy('name');
    if (ids) q.whereIn('id', ids);
    const roles = await q;
    const perms = await this.knex('role_permissions').whereIn(
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

  async get(id: string): Promise<RoleWithPermissions | undefined> {
    const [role] = await this.list([id]);
    return role;
  }

  /** The role row alone (no permissions). */
  async byId(id: string): Promise<RoleRecord | undefined> {
    return this.knex<RoleRecord>('roles').where({ id }).first();
  }

  /** Exact name (built-in names are spelled as seeded). */
  async byName(name: string): Promise<RoleRecord | undefined> {
    return this.knex<RoleRecord>('roles').where({ name }).first();
  }

  /** Whether another role (not `exceptId`) holds this name, case-insensitively. */
  async nameTaken(name: string, exceptId?: string): Promise<boolean> {
    const q = this.knex('roles').whereRaw('lower(name) = lower(?)', [name]);
    if (exceptId) q.whereNot({ id: exceptId });
    return !!(await q.first());
  }

  /** Roles whose names are among `names` (case-insensitive). */
  async byNames(names: string[]): Promise<Array<Pick<RoleRecord, 'id' | 'name'>>> {
    if (!names.length) return [];
    return this.knex('roles')
      .whereRaw('lower(name) = any(?)', [names.map((n) => n.toLowerCase())])
      .select('id', 'name');
  }

  /** A role and its permissions, in one transaction; returns its id. */
  async create(role: { name: string; description: string | null; permissions: string[] }): Promise<string> {
    return this.knex.transaction(async (trx) => {
      const [row] = await trx('roles').insert({ name: role.name, description: role.description }).returning('id');
      if (role.permissions.length)
        await trx('role_permissions').insert(role.permissions.map((permission) => ({ role_id: row.id, permission })));
      return row.id as string;
    });
  }

  /** Changes the given fields; `permissions` replaces the set. One transaction. */
  async update(id: string, patch: { name?: string; description?: string | null; permissions?: string[] }): Promise<void> {
    await this.knex.transaction(async (trx) => {
      const row: Record<string, unknown> = { updated_at: trx.fn.now() };
      if (patch.name !== undefined) row.name = patch.name;
      if (patch.description !== undefined) row.description = patch.description;
      await trx('roles').where({ id }).update(row);
      if (patch.permissions) {
        await trx('role_permissions').where({ role_id: id }).delete();
        if (patch.permissions.length)
          await trx('role_permissions').insert(patch.permissions.map((permission) => ({ role_id: id, permission })));
      }
    });
  }

  /** Deletes the role; its permissions, assignments and group mappings go with it (cascade). */
  async delete(id: string): Promise<void> {
    await this.knex('roles').where({ id }).delete();
  }

  /**
   * Built-in roles get their documented permissions (upgrades add new ones; none are taken away).
   * A custom role that already holds a built-in name becomes that built-in role.
   */
  async seedBuiltin(roles: Record<string, { description: string; permissions: readonly string[] }>): Promise<void> {
    await this.knex.transaction(async (trx) => {
      for (const [name, def] of Object.entries(roles)) {
        let role = await trx<RoleRecord>('roles').whereRaw('lower(name) = lower(?)', [name]).first();
        if (!role) [role] = await trx<RoleRecord>('roles').insert({ name, description: def.description, builtin: true }).returning('*');
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

  // --- who holds a role -----------------------------------------------------------------------

  /** Role names and the union of their permissions, for one user. */
  async accessOf(userId: string): Promise<Access> {
    const rows = await this.knex('user_roles as ur')
      .join('roles as r', 'r.id', 'ur.role_id')
      .leftJoin('role_permissions as rp', 'rp.role_id', 'r.id')
      .where('ur.user_id', userId)
      .select('r.name', 'rp.permission');
    const roles = [...new Set(rows.map((r) => r.name as string))].sort();
    const permissions = [...new Set(rows.map((r) => r.permission as string | null).filter((p): p is string => !!p))].sort();
    return { roles, permissions };
  }

  /** Replaces the user's roles with exactly `roleIds`, atomically (a savepoint inside a caller's transaction). */
  async setUserRoles(userId: string, roleIds: string[]): Promise<void> {
    await this.knex.transaction(async (trx) => {
      await trx('user_roles').where({ user_id: userId }).delete();
      if (roleIds.length) await trx('user_roles').insert(roleIds.map((role_id) => ({ user_id: userId, role_id })));
    });
  }

  /** Whether any user holds the role. */
  async hasHolder(roleId: string): Promise<boolean> {
    return !!(await this.knex('user_roles').where({ role_id: roleId }).first());
  }

  // --- directory groups -----------------------------------------------------------------------

  /** Group mappings with their role's name, ordered by group then role; only `id` when given. */
  async groupMappings(id?: string): Promise<GroupMappingRecord[]> {
    const q = this.knex('group_mappings as g')
      .join('roles as r', 'r.id', 'g.role_id')
      .select('g.id', 'g.group_name', 'g.role_id', 'r.name as role_name', 'g.created_at')
      .orderBy(['g.group_name', 'r.name']);
    if (id) q.where('g.id', id);
    return q;
  }

  /** The new mapping's id, or undefined when the group is already mapped to that role. */
  async addGroupMapping(groupName: string, roleId: string): Promise<string | undefined> {
    const [row] = await this.knex('group_mappings')
      .insert({ group_name: groupName, role_id: roleId })
      .onConflict(['group_name', 'role_id'])
      .ignore()
      .returning('id');
    return row?.id as string | undefined;
  }

  async deleteGroupMapping(id: string): Promise<void> {
    await this.knex('group_mappings').where({ id }).delete();
  }

  /** The distinct roles mapped to any of `groups` (group names compare case-insensitively). */
  async rolesForGroups(groups: string[]): Promise<Array<Pick<RoleRecord, 'id' | 'name'>>> {
    if (!groups.length) return [];
    return this.knex('group_mappings as gm')
      .join('roles as r', 'r.id', 'gm.role_id')
      .whereRaw('lower(gm.group_name) = any(?::text[])', [groups.map((g) => g.toLowerCase())])
      .distinct('r.id', 'r.name');
  }
}
