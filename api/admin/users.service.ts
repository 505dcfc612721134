import type { Context } from 'koa';
import type { IdentityStores, UserPatch, UserRecord } from '../../db/identity/index.ts';
import { hashPassword } from '../../lib/crypto.ts';
import { ConflictError, NotFoundError, ValidationError } from '../../lib/errors.ts';
import { ADMIN_ROLE, type Principal } from '../auth/principal.ts';
import { toUserView } from '../auth/schemas.ts';
import type { SecurityEventService } from '../auth/security-events.ts';

export interface NewUserInput {
  username: string;
  password: string;
  email?: string | null;
  display_name?: string | null;
  roles: string[];
  active: boolean;
}

export interface UserChange {
  password?: string;
  email?: string | null;
  display_name?: string | null;
  roles?: string[];
  active?: boolean;
}

/**
 * Local user administration. The last active admin can be neither demoted, deactivated nor
 * deleted; a new password or a deactivation ends the user's sessions in the same transaction.
 */
export class UserService {
  private readonly identity: IdentityStores;
  private readonly events: SecurityEventService;

  constructor(deps: { identity: IdentityStores; events: SecurityEventService }) {
    this.identity = deps.identity;
    this.events = deps.events;
  }

  async list(search: string | undefined, page: number, pageSize: number) {
    const { items, total } = await this.identity.users.list(search, page, pageSize);
    return {
      items: await Promise.all(items.map((u) => this.view(u))),
      total,
      page,
      page_size: pageSize,
      has_next: page * pageSize < total,
    };
  }

  async create(ctx: Context, principal: Principal, input: NewUserInput) {
    if (await this.identity.users.byUsername(input.username))
      throw new ConflictError(`The username '${input.username}' is taken`, 'duplicate_username');
    const roleIds = await this.resolveRoles(input.roles);
    const hash = await hashPassword(input.password);
    const user = await this.identity.transaction(async (tx) => {
      const row = await tx.users.create({
        username: input.username,
        password_hash: hash,
        email: input.email ?? null,
        display_name: input.display_name ?? null,
        active: input.active,
      });
      await tx.roles.setUserRoles(row.id, roleIds);
      return row;
    });
    await this.events.recordChange(ctx, principal, 'USER_CREATED', { username: user.username, roles: input.roles });
    return this.view(user);
  }

  /** Fields absent from `change` stay as they are; `roles` replaces the set. */
  async update(ctx: Context, principal: Principal, userId: string, change: UserChange) {
    const user = await this.identity.users.byId(userId);
    if (!user) throw new NotFoundError('User', userId);
    const roleIds = change.roles ? await this.resolveRoles(change.roles) : undefined;
    const { roles: current } = await this.identity.roles.accessOf(user.id);
    const losesAdmin =
      current.includes(ADMIN_ROLE) && ((change.roles && !change.roles.some((r) => r.toLowerCase() === 'admin')) || change.active === false);
    if (losesAdmin && (await this.identity.access.activeHoldersExcept(ADMIN_ROLE, user.id)) === 0)
      throw new ConflictError('This is the last active admin; make someone else an admin first', 'last_admin');
    if (change.password && user.auth_source !== 'local')
      throw new ValidationError('Users who sign in through OIDC have no local password', [
        { field: 'body.password', message: 'not allowed for OIDC users' },
      ]);
    const hash = change.password ? await hashPassword(change.password) : undefined;
    const updated = await this.identity.transaction(async (tx) => {
      const patch: UserPatch = {};
      if (hash) patch.password_hash = hash;
      if (change.email !== undefined) patch.email = change.email;
      if (change.display_name !== undefined) patch.display_name = change.display_name;
      if (change.active !== undefined) patch.active = change.active;
      const row = await tx.users.update(user.id, patch);
      if (roleIds) await tx.roles.setUserRoles(user.id, roleIds);
      if (hash || change.active === false) await tx.sessions.revokeAllOf(user.id);
      return row;
    });
    await this.events.recordChange(ctx, principal, 'USER_UPDATED', {
      username: user.username,
      changed: Object.keys(change),
      ...(change.roles ? { roles: change.roles } : {}),
    });
    return this.view(updated!);
  }

  /** Removes the user and their sessions; not yourself, not the last active admin (409). */
  async remove(ctx: Context, principal: Principal, userId: string) {
    const user = await this.identity.users.byId(userId);
    if (!user) throw new NotFoundError('User', userId);
    if (user.id === principal.userId) throw new ConflictError('You cannot delete your own account', 'self_delete');
    const { roles } = await this.identity.roles.accessOf(user.id);
    if (roles.includes(ADMIN_ROLE) && user.active && (await this.identity.access.activeHoldersExcept(ADMIN_ROLE, user.id)) === 0)
      throw new ConflictError('This is the last active admin', 'last_admin');
    await this.identity.users.delete(user.id);
    await this.events.recordChange(ctx, principal, 'USER_DELETED', { username: user.username });
    return { id: user.id, deleted: true as const };
  }

  /** Role names to ids; unknown names are a 400 naming them. */
  private async resolveRoles(names: string[]): Promise<string[]> {
    const rows = await this.identity.roles.byNames(names);
    const found = new Set(rows.map((r) => r.name.toLowerCase()));
    const unknown = names.filter((n) => !found.has(n.toLowerCase()));
    if (unknown.length)
      throw new ValidationError(
        `Unknown role(s): ${unknown.join(', ')}`,
        unknown.map((n) => ({ field: 'body.roles', message: `unknown role '${n}'` })),
      );
    return rows.map((r) => r.id);
  }

  private async view(user: UserRecord) {
    return toUserView(user, (await this.identity.roles.accessOf(user.id)).roles);
  }
}
