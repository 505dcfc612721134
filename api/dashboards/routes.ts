import type { AppContext } from '../context.ts';
import { defineRoute, type AnyRoute } from '../http/routes.ts';
import { AppError } from '../../lib/errors.ts';
import { RASTER_TYPES } from '../../lib/superset/raster.ts';
import {
  dashboardDetail,
  dashboardIdParams,
  dashboardListQuery,
  dashboardsResponse,
  envQuery,
  thumbnailComputing,
  type ThumbnailOff,
} from './schemas.ts';

const UNAVAILABLE = {
  description:
    'Superset unreachable, timed out, failed or refused the service account (code `upstream_unavailable`, with `env_id`, `reason`, `upstream_status`)',
};

/**
 * Dashboards of an environment. NOTE: `/api/dashboards/db-mappings` (api/db-mappings) must be
 * registered before `/api/dashboards/:id`; app.ts lists it first.
 */
export function dashboardRoutes(app: AppContext): AnyRoute[] {
  const { dashboards } = app;
  return [
    defineRoute({
      method: 'get',
      path: '/api/dashboards',
      tag: 'Dashboards',
      summary: 'List the dashboards of an environment',
      description:
        "A page of the environment's dashboards, searched and paged in Superset with an exact `total`, optionally narrowed by the caller's profile-default filter. Details: docs/environments.md#get-apidashboards.",
      access: { permission: 'dashboards:READ' },
      query: dashboardListQuery,
      responses: {
        200: { description: 'A page of dashboards (DashboardsResponse)', schema: dashboardsResponse },
        400: {
          description:
            'Bad pagination (`page` < 1 or past 1000000000, `page_size` outside 1..100), missing `env_id` or unknown `page_context`',
        },
        404: { description: 'Unknown environment' },
        503: UNAVAILABLE,
      },
      handler: (_ctx, { query, principal }) =>
        dashboards.list({
          envId: query.env_id,
          page: query.page,
          pageSize: query.page_size,
          search: query.search || undefined,
          overrideShowAll: query.override_show_all ?? false,
          pageContext: query.page_context,
          principal,
        }),
    }),

    defineRoute({
      method: 'get',
      path: '/api/dashboards/:id',
      tag: 'Dashboards',
      summary: 'A dashboard with its charts and datasets',
      description:
        '`id` is the Superset dashboard id in the environment `env_id`. Three Superset calls, made in parallel (dashboard, charts, datasets).',
      access: { permission: 'dashboards:READ' },
      params: dashboardIdParams,
      query: envQuery,
      responses: {
        200: { description: 'The dashboard', schema: dashboardDetail },
        404: { description: 'Unknown environment, or no such dashboard in it' },
        503: UNAVAILABLE,
      },
      handler: (_ctx, { params, query }) => dashboards.detail(query.env_id, params.id),
    }),

    defineRoute({
      method: 'get',
      path: '/api/dashboards/:id/thumbnail',
      tag: 'Dashboards',
      summary: "A dashboard's thumbnail image",
      description:
        "Proxies Superset's thumbnail of the dashboard as a raster image; 202 with `Retry-After` while it renders, and a JSON `ThumbnailOff` body when thumbnails are off. Details: docs/environments.md#get-apidashboardsidthumbnail.",
      access: { permission: 'dashboards:READ' },
      params: dashboardIdParams,
      query: envQuery,
      responses: {
        200: {
          description:
            'The image (PNG, JPEG, GIF or WebP only), or `application/json` ThumbnailOff `{status: "off", detail}` when thumbnails are off in that Superset',
          contentType: [...RASTER_TYPES, 'application/json'],
        },
        202: { description: 'Being rendered; ask again after `retry_after_seconds`', schema: thumbnailComputing },
        404: { description: 'Unknown environment or dashboard (`not_found`), or no thumbnail (`thumbnail_unavailable`)' },
        503: UNAVAILABLE,
      },
      async handler(ctx, { params, query }) {
        const thumb = await dashboards.thumbnail(query.env_id, params.id);
        if (thumb.status === 'ready') {
          ctx.status = 200;
          ctx.type = thumb.contentType;
          ctx.set('Cache-Control', 'private, max-age=300');
          ctx.body = thumb.bytes;
          return;
        }
        if (thumb.status === 'off') {
          const off: ThumbnailOff = {
            status: 'off',
            detail: `Thumbnails are off in this Superset (its THUMBNAILS feature flag); dashboard ${params.id} has none to show`,
          };
          ctx.status = 200;
          ctx.set('Cache-Control', 'private, max-age=300');
          ctx.body = off;
          return;
        }
        if (thumb.status === 'computing') {
          ctx.status = 202;
          ctx.set('Retry-After', String(thumb.retryAfterSeconds));
          ctx.body = {
            status: 'computing',
            retry_after_seconds: thumb.retryAfterSeconds,
            detail: `Superset is rendering the thumbnail of dashboard ${params.id}; ask again in ${thumb.retryAfterSeconds} s`,
          };
          return;
        }
        throw new AppError(
          404,
          'thumbnail_unavailable',
          'No thumbnail',
          `Superset has no thumbnail for dashboard ${params.id} (thumbnails are disabled on the instance, or the render failed): ${thumb.detail}`,
        );
      },
    }),
  ];
}
