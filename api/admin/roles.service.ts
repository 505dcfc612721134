import type { Context } from 'koa';
import type { IdentityStores, RoleWithPermissions } from '../../db/identity/index.ts';
import { ConflictError, NotFoundError } from '../../lib/errors.ts';
import type { Principal } from '../auth/principal.ts';
import type { SecurityEventService } from '../auth/security-events.ts';

export function toRoleView(r: RoleWithPermissions) {
  return { ...r, created_at: r.created_at.toISOString(), updated_at: r.updated_at.toISOString() };
}

/** Custom roles: unique names (case-insensitive), permissions from the catalogue; built-in roles are read-only. */
export class RoleService {
  private readonly identity: IdentityStores;
  private readonly events: SecurityEventService;

  constructor(deps: { identity: IdentityStores; events: SecurityEventService }) {
    this.identity = deps.identity;
    this.events = deps.events;
  }

  async list() {
    return { items: (await this.identity.roles.list()).map(toRoleView) };
  }

  async create(ctx: Context, principal: Principal, input: { name: string; description?: string; permissions: string[] }) {
    await this.assertNameFree(input.name);
    const id = await this.identity.roles.create({
      name: input.name,
      description: input.description ?? null,
      permissions: input.permissions,
    });
    await this.events.recordChange(ctx, principal, 'ROLE_CREATED', { role: input.name, permissions: input.permissions });
    return toRoleView(await this.load(id));
  }

  async update(
    ctx: Context,
    principal: Principal,
    roleId: string,
    change: { name?: string; description?: string | null; permissions?: string[] },
  ) {
    const role = await this.load(roleId);
    if (role.builtin)
      throw new ConflictError(`The built-in role ${role.name} cannot be changed; create a role of your own instead`, 'builtin_role');
    if (change.name) await this.assertNameFree(change.name, role.id);
    await this.identity.roles.update(role.id, change);
    const updated = await this.load(role.id);
    await this.events.recordChange(ctx, principal, 'ROLE_UPDATED', {
      role: updated.name,
      before: { name: role.name, permissions: role.permissions },
      after: { name: updated.name, permissions: updated.permissions },
    });
    return toRoleView(updated);
  }

  async remove(ctx: Context, principal: Principal, roleId: string) {
    const role = await this.load(roleId);
    if (role.builtin) throw new ConflictError(`The built-in role ${role.name} cannot be deleted`, 'builtin_role');
    await this.identity.roles.delete(role.id);
    await this.events.recordChange(ctx, principal, 'ROLE_DELETED', { role: role.name });
    return { id: role.id, deleted: true as const };
  }

  private async load(id: string): Promise<RoleWithPermissions> {
    const role = await this.identity.roles.get(id);
    if (!role) throw new NotFoundError('Role', id);
    return role;
  }

  private async assertNameFree(name: string, exceptId?: string): Promise<void> {
    if (await this.identity.roles.nameTaken(name, exceptId))
      throw new ConflictError(`A role named '${name}' already exists`, 'duplicate_name');
  }
}
