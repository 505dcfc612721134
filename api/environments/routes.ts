import type { AppContext } from '../context.ts';
import { defineRoute, type AnyRoute } from '../http/routes.ts';
import {
  envIdParams,
  environmentCreate,
  environmentList,
  environmentListQuery,
  environmentTestReport,
  environmentUpdate,
  environmentView,
} from './schemas.ts';

export function environmentRoutes(app: AppContext): AnyRoute[] {
  const envs = app.environments;
  return [
    defineRoute({
      method: 'get',
      path: '/api/environments',
      tag: 'Environments',
      summary: 'List environments',
      description: 'Sorted by name. The service-account password is never returned (`has_password` only).',
      access: { permission: 'environments:READ' },
      query: environmentListQuery,
      responses: { 200: { description: 'A page of environments', schema: environmentList } },
      handler: (_ctx, { query }) => envs.list(query.page, query.page_size),
    }),

    defineRoute({
      method: 'post',
      path: '/api/environments',
      tag: 'Environments',
      summary: 'Create an environment',
      description:
        'Registers one Superset instance: its base URL, a service account (the password write-only and stored encrypted), TLS verification and a per-request timeout. Details: docs/environments.md#post-apienvironments.',
      access: { permission: 'environments:WRITE' },
      body: environmentCreate,
      responses: {
        201: { description: 'Created', schema: environmentView },
        400: { description: 'Invalid body (`validation_failed`), or a `base_url` outside `ALLOWED_UPSTREAM_HOSTS` (`host_not_allowed`)' },
        403: { description: '`protected: true` without `admin:settings:WRITE` (code `protection_admin_only`)' },
        409: { description: 'An environment with this name exists (code `conflict`)' },
      },
      async handler(ctx, { body, principal }) {
        const view = await envs.create(body, { ctx, principal });
        ctx.status = 201;
        ctx.set('Location', `/api/environments/${view.id}`);
        ctx.body = view;
      },
    }),

    defineRoute({
      method: 'get',
      path: '/api/environments/:env_id',
      tag: 'Environments',
      summary: 'Get an environment',
      access: { permission: 'environments:READ' },
      params: envIdParams,
      responses: { 200: { description: 'The environment', schema: environmentView }, 404: { description: 'Unknown environment' } },
      handler: (_ctx, { params }) => envs.get(params.env_id),
    }),

    defineRoute({
      method: 'put',
      path: '/api/environments/:env_id',
      tag: 'Environments',
      summary: 'Change an environment',
      description:
        'Changes the fields sent and keeps the others; moving where the password goes requires sending the password again. Details: docs/environments.md#put-apienvironmentsenv_id.',
      access: { permission: 'environments:WRITE' },
      params: envIdParams,
      body: environmentUpdate,
      responses: {
        200: { description: 'The changed environment', schema: environmentView },
        400: {
          description:
            'Invalid body (`validation_failed`), the destination changed without the password (`secret_required`), or a `base_url` outside `ALLOWED_UPSTREAM_HOSTS` (`host_not_allowed`)',
        },
        403: {
          description:
            'Setting or clearing `protected`, or changing `base_url`, `username`, `password` or `verify_tls` of a protected environment, without `admin:settings:WRITE` (code `protection_admin_only`)',
        },
        404: { description: 'Unknown environment' },
        409: { description: 'Another environment has this name' },
      },
      handler: (ctx, { params, body, principal }) => envs.update(params.env_id, body, { ctx, principal }),
    }),

    defineRoute({
      method: 'delete',
      path: '/api/environments/:env_id',
      tag: 'Environments',
      summary: 'Delete an environment',
      description: 'Also deletes the database mappings saved from or to it.',
      access: { permission: 'environments:WRITE' },
      params: envIdParams,
      responses: {
        204: { description: 'Deleted' },
        403: { description: 'A protected environment, without `admin:settings:WRITE` (code `protection_admin_only`)' },
        404: { description: 'Unknown environment' },
      },
      async handler(ctx, { params, principal }) {
        await envs.remove(params.env_id, { ctx, principal });
        ctx.status = 204;
      },
    }),

    defineRoute({
      method: 'post',
      path: '/api/environments/:env_id/test',
      tag: 'Environments',
      summary: 'Test an environment',
      description:
        'Checks that Superset answers, that the service account logs in and has the permissions Switchyard needs, and what the instance can do (`capabilities`); always 200 with a report. Details: docs/environments.md#post-apienvironmentsenv_idtest.',
      access: { permission: 'environments:WRITE' },
      params: envIdParams,
      responses: { 200: { description: 'The report', schema: environmentTestReport }, 404: { description: 'Unknown environment' } },
      handler: (ctx, { params, principal }) => envs.test(params.env_id, { ctx, principal }),
    }),
  ];
}
