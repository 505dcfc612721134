import { z } from 'zod';
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
  const { groupMappings } = app;
  return [
    defineRoute({
      method: 'get',
      path: '/api/admin/group-mappings',
      tag: 'Admin',
      summary: 'List directory-group to role mappings',
      description: 'At each OIDC sign-in the groups in the token (claim `OIDC_GROUPS_CLAIM`) become the roles mapped here.',
      access: 'admin',
      responses: { 200: { description: 'Mappings', schema: z.object({ items: z.array(mappingView) }) } },
      handler: () => groupMappings.list(),
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
        const mapping = await groupMappings.create(ctx, principal, body);
        ctx.status = 201;
        return mapping;
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
      handler: (ctx, { params, principal }) => groupMappings.remove(ctx, principal, params.mapping_id),
    }),
  ];
}
