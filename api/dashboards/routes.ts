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
      description: [
        'Search and paging run in Superset (`title_or_slug`, ordered by last change). `total` is exact and, when the profile filter applies, counts the filtered result; `has_next` follows from it. Any depth is served as Superset serves it, past 10,000 rows included (no bound on `page` × `page_size`; past the last row the page is empty); with the profile filter the matching keys are streamed a page at a time up to the page asked for.',
        '',
        "Profile-default filter: it applies when the caller saved `profile_filter_enabled: true` with a bound `superset_username` (see `/api/profile/preferences`) and `page_context` is `dashboards_main` (the default). A dashboard then matches when that username, trimmed and case-insensitively, is one of its owners or its last modifier. The username is resolved to the Superset account once per request (no per-dashboard calls); no match gives `total: 0` and an empty page with the filter still `applied`. `override_show_all=true` shows everything for this request (`applied: false`); `page_context=other` disables the filter (`source_page: other`). `effective_profile_filter.reason` says which rule decided, and `effective_profile_filter.resolution` who the username resolved to: one account, none (then only plain-value owners or modifiers equal to the username match) or several (`ambiguous`, each candidate named; possible only without Superset's security API).",
      ].join('\n'),
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
        'Proxies Superset\'s thumbnail (following its redirect to the current digest on the same host only). Only raster images (PNG, JPEG, GIF, WebP, recognised from their bytes) are passed on; anything else Superset answers (an SVG could carry script) is a 503 `upstream_unavailable` with reason `bad_response`. 202 with `Retry-After` when Superset is still rendering it. When Superset answers 404 and its probed capabilities say the THUMBNAILS feature flag is off (Superset\'s default), the answer is 200 with a JSON body `{"status": "off", "detail"}` (ThumbnailOff) rather than an error: a console shows a placeholder and logs nothing; tell it from an image by the `Content-Type`. 404 `thumbnail_unavailable` when thumbnails are on but Superset has none (the render failed); 404 `not_found` when the dashboard does not exist.',
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
