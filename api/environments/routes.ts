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
        'An environment is one Superset instance: its base URL, a service account (the password is write-only and stored encrypted with AES-256-GCM under `SWITCHYARD_SECRET_KEY`), TLS verification and a per-request timeout. Names are unique, case-insensitively (409). Switchyard only ever calls fixed API paths under this base URL and never follows a redirect to another host. With `ALLOWED_UPSTREAM_HOSTS` set, a `base_url` whose host the policy does not allow (a name it does not list resolving outside its ranges included) is a 400 `host_not_allowed` and nothing is stored; a stored one the policy no longer allows is refused when connected to (503 `host_not_allowed` on the endpoints that use it).',
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
        'Fields left out keep their value; in particular an omitted `password` keeps the stored one. Changing where the password is sent (scheme, host, port or path of `base_url`, or `verify_tls` to false) without sending `password` again is a 400 `secret_required` and saves nothing, so the stored password can never be redirected to another server. Where the service account of a protected environment goes (`base_url`, `username`, `password`, `verify_tls`) only an administrator changes (403 `protection_admin_only`). The pooled Superset session of the environment is dropped, so the next call logs in with the new settings. Every change is a security event (fields changed, old and new `base_url`; never the password).',
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
        "Checks, in order: that Superset answers (and which release it is, from `/static/version_info.json` when served), that the service account can log in, and which of the permissions Switchyard needs it lacks (`can_read`/`can_write`/`can_export` on Dashboard, `can_read` on Chart, Dataset and Database), then what the instance can do (`capabilities`): which columns each list accepts filters on (`_info?keys=filters`), whether list rows carry uuids, whether the security API and thumbnails are on. Switchyard plans migrations from these probes, not from the version number (an instance that lists no uuid is looked up through exports). Always 200 with a report; `error` says what stopped the check, in Switchyard's words: of Superset's answer only its HTTP status and a short reason (one line of at most 200 characters, no markup, anything like a token masked), never its body; `host_not_allowed` when `ALLOWED_UPSTREAM_HOSTS` does not allow the environment's host (nothing is sent to it).",
      access: { permission: 'environments:WRITE' },
      params: envIdParams,
      responses: { 200: { description: 'The report', schema: environmentTestReport }, 404: { description: 'Unknown environment' } },
      handler: (ctx, { params, principal }) => envs.test(params.env_id, { ctx, principal }),
    }),
  ];
}
