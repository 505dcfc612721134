import type { Context } from 'koa';
import type { GroupMappingRecord, IdentityStores } from '../../db/identity/index.ts';
import { ConflictError, NotFoundError, ValidationError } from '../../lib/errors.ts';
import type { Principal } from '../auth/principal.ts';
import type { SecurityEventService } from '../auth/security-events.ts';

const toView = (m: GroupMappingRecord) => ({ ...m, created_at: new Date(m.created_at).toISOString() });

/** Directory group → role mappings, applied at each OIDC sign-in. */
export class GroupMappingService {
  private readonly identity: IdentityStores;
  private readonly events: SecurityEventService;

  constructor(deps: { identity: IdentityStores; events: SecurityEventService }) {
    this.identity = deps.identity;
    this.events = deps.events;
  }

  async list() {
    return { items: (await this.identity.roles.groupMappings()).map(toView) };
  }

  async create(ctx: Context, principal: Principal, input: { group_name: string; role_id: string }) {
    const role = await this.identity.roles.byId(input.role_id);
    if (!role) throw new ValidationError(`Unknown role ${input.role_id}`, [{ field: 'body.role_id', message: 'unknown role' }]);
    const id = await this.identity.roles.addGroupMapping(input.group_name, role.id);
    if (!id) throw new ConflictError(`Group '${input.group_name}' is already mapped to ${role.name}`, 'duplicate_mapping');
    await this.events.recordChange(ctx, principal, 'GROUP_MAPPING_CREATED', { group: input.group_name, role: role.name });
    return (await this.identity.roles.groupMappings(id)).map(toView)[0];
  }

  async remove(ctx: Context, principal: Principal, mappingId: string) {
    const [mapping] = await this.identity.roles.groupMappings(mappingId);
    if (!mapping) throw new NotFoundError('Group mapping', mappingId);
    await this.identity.roles.deleteGroupMapping(mapping.id);
    await this.events.recordChange(ctx, principal, 'GROUP_MAPPING_DELETED', { group: mapping.group_name, role: mapping.role_name });
    return { id: mapping.id, deleted: true as const };
  }
}
