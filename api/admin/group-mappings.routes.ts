import { z } from 'zod';
import { ConflictError, NotFoundError, ValidationError } from '../../lib/errors.ts';
import { recordSecurityEvent } from '../auth/security-events.ts';
import type { AppContext } from '../context.ts';
import { defineRoute, type AnyRoute } from '../http/routes.ts';
import { uuidParam } from './schemas.ts';

const mappingView = z.object({
  id: z.string(),
  group_name: z.string(),
  role_id: z.string(),
  role_name: z.string(),
  created_at: z.string(),
});

export function groupMappingRoutes(app: AppContext): AnyRoute[] {
  const { knex } = app;
  const list = (id?: string) => {
    const q = knex('group_mappings as g')
      .join('roles as r', 'r.id', 'g.role_id')
      .select('g.id', 'g.group_name', 'g.role_id', 'r.name as role_name', 'g.created_at')
      .orderBy(['g.group_name', 'r.name']);
    if (id) q.where('g.id', id);
    return q.then((rows) => rows.map((r) => ({ ...r, created_at: new Date(r.created_at).toISOString() })));
  };
  return [
    defineRoute({
      method: 'get',
      path: '/api/admin/group-mappings',
      tag: 'Admin',
      summary: 'List directory-group to role mappings',
      description: 'At each OIDC sign-in the groups in the token (claim `OIDC_GROUPS_CLAIM`) become the roles mapped here.',
      access: 'admin',
      responses: { 200: { description: 'Mappings', schema: z.object({ items: z.array(mappingView) }) } },
      handler: async () => ({ items: await list() }),
    }),
    defineRoute({
      method: 'post',
      path: '/api/admin/group-mappings',
      tag: 'Admin',
      summary: 'Map a directory group to a role',
      access: 'admin',
      body: z
        .object({ group_name: z.string().trim().min(1, 'group_name is required').max(300), role_id: z.uuid('role_id must be a UUID') })
        .strict(),
      responses: { 201: { description: 'Created', schema: mappingView }, 409: { description: 'Mapping exists' } },
      async handler(ctx, { body, principal }) {
        const role = await knex('roles').where({ id: body.role_id }).first();
        if (!role) throw new ValidationError(`Unknown role ${body.role_id}`, [{ field: 'body.role_id', message: 'unknown role' }]);
        const [row] = await knex('group_mappings')
          .insert({ group_name: body.group_name, role_id: role.id })
          .onConflict(['group_name', 'role_id'])
          .ignore()
          .returning('id');
        if (!row) throw new ConflictError(`Group '${body.group_name}' is already mapped to ${role.name}`, 'duplicate_mapping');
        await recordSecurityEvent(knex, ctx, {
          type: 'GROUP_MAPPING_CREATED',
          outcome: 'success',
          actorId: principal.userId,
          actorUsername: principal.username,
          detail: { group: body.group_name, role: role.name },
        });
        ctx.status = 201;
        return (await list(row.id))[0];
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/api/admin/group-mappings/:mapping_id',
      tag: 'Admin',
      summary: 'Delete a group mapping',
      access: 'admin',
      params: uuidParam('mapping_id'),
      responses: {
        200: { description: 'Deleted', schema: z.object({ id: z.string(), deleted: z.literal(true) }) },
        404: { description: 'Unknown mapping' },
      },
      async handler(ctx, { params, principal }) {
        const [mapping] = await list(params.mapping_id);
        if (!mapping) throw new NotFoundError('Group mapping', params.mapping_id);
        await knex('group_mappings').where({ id: mapping.id }).delete();
        await recordSecurityEvent(knex, ctx, {
          type: 'GROUP_MAPPING_DELETED',
          outcome: 'success',
          actorId: principal.userId,
          actorUsername: principal.username,
          detail: { group: mapping.group_name, role: mapping.role_name },
        });
        return { id: mapping.id, deleted: true as const };
      },
    }),
  ];
}
