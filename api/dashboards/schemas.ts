import { z } from 'zod';
import { queryBoolean, supersetIdParam, upstreamPagination } from '../http/schemas.ts';

export const PAGE_CONTEXTS = ['dashboards_main', 'other'] as const;
export type PageContext = (typeof PAGE_CONTEXTS)[number];

export const envIdQuery = z.string({ error: 'env_id is required' }).min(1, 'env_id is required').max(200).describe('Environment id');

export const dashboardListQuery = z.object({
  env_id: envIdQuery,
  ...upstreamPagination,
  search: z.string().trim().max(500).optional().describe('Case-insensitive substring of the title or slug'),
  override_show_all: queryBoolean.optional().describe('true: show every dashboard on this page even when the profile filter would apply'),
  page_context: z
    .enum(PAGE_CONTEXTS, { error: 'page_context must be dashboards_main or other' })
    .default('dashboards_main')
    .describe('Where the list is shown; the profile filter only applies on `dashboards_main` (the default)'),
});

export const dashboardIdParams = z.object({
  id: supersetIdParam('dashboard').describe('Superset dashboard id in the environment'),
});
export const envQuery = z.object({ env_id: envIdQuery });

const userRef = z.object({
  id: z.number().int().nullable(),
  first_name: z.string().nullable(),
  last_name: z.string().nullable(),
  display_name: z.string(),
  email: z.string().nullable().optional(),
});

export const dashboardItem = z.object({
  id: z.number().int(),
  uuid: z.string().nullable(),
  title: z.string(),
  slug: z.string().nullable(),
  url: z.string().nullable().describe('Absolute URL of the dashboard in Superset'),
  published: z.boolean().nullable(),
  status: z.string().nullable(),
  certified_by: z.string().nullable(),
  owners: z.array(userRef),
  changed_by: userRef.nullable().describe('Last modifier (`modified_by`)'),
  changed_by_name: z.string().nullable(),
  changed_on: z.string().nullable().describe('ISO-8601 UTC'),
  changed_on_humanized: z.string().nullable(),
  created_by: userRef.nullable(),
  tags: z.array(z.string()),
  thumbnail_url: z.string().describe("Switchyard's thumbnail proxy for this dashboard"),
});
export type DashboardItem = z.infer<typeof dashboardItem>;

export const effectiveProfileFilter = z.object({
  applied: z.boolean(),
  source_page: z.enum(PAGE_CONTEXTS),
  override_show_all: z.boolean(),
  username: z.string().nullable().describe('The bound Superset username the filter compares with'),
  match_logic: z.literal('owners_or_modified_by'),
  reason: z
    .enum(['applied', 'override_show_all', 'page_context_other', 'disabled', 'no_bound_username', 'anonymous_caller'])
    .describe('Why the filter is or is not applied'),
  resolution: z
    .object({
      status: z
        .enum(['resolved', 'unresolved', 'ambiguous'])
        .describe(
          '`resolved`: one account; `unresolved`: none, so only plain-value owners and modifiers equal to the username match; `ambiguous`: several accounts matched the username, all of them match (the `candidates`): bind a username that names one',
        ),
      via: z
        .enum(['security_api', 'related_owners'])
        .describe(
          "how the username was resolved: Superset's security API (exact usernames) or, without it, `related/owners` (e-mail, its local part or display name)",
        ),
      candidates: z
        .array(z.object({ id: z.number().int(), display_name: z.string(), email: z.string().nullable() }))
        .describe('the accounts the username resolved to'),
    })
    .optional()
    .describe('Present when the filter is applied: who the bound username resolved to upstream'),
});
export type EffectiveProfileFilter = z.infer<typeof effectiveProfileFilter>;
export type ProfileResolution = NonNullable<EffectiveProfileFilter['resolution']>;

export const dashboardsResponse = z.object({
  items: z.array(dashboardItem),
  total: z.number().int().describe('Exact count of the (filtered) result'),
  page: z.number().int(),
  page_size: z.number().int(),
  has_next: z.boolean(),
  env_id: z.string(),
  effective_profile_filter: effectiveProfileFilter,
});

export const dashboardDetail = dashboardItem.extend({
  css: z.string().nullable(),
  json_metadata: z.record(z.string(), z.unknown()).nullable().describe('Parsed `json_metadata`'),
  position: z.record(z.string(), z.unknown()).nullable().describe('Parsed `position_json`'),
  charts: z.array(
    z.object({
      id: z.number().int(),
      name: z.string(),
      viz_type: z.string().nullable(),
      dataset_id: z.number().int().nullable(),
      description: z.string().nullable(),
      changed_on: z.string().nullable(),
      url: z.string().nullable(),
    }),
  ),
  datasets: z.array(
    z.object({
      id: z.number().int(),
      uid: z.string().nullable(),
      name: z.string(),
      table_name: z.string().nullable(),
      schema: z.string().nullable(),
      kind: z.enum(['physical', 'virtual']),
      sql: z.string().nullable(),
      database: z.object({ id: z.number().int(), name: z.string().nullable(), backend: z.string().nullable() }).nullable(),
      column_count: z.number().int(),
      metric_count: z.number().int(),
    }),
  ),
  env_id: z.string(),
});

/** The thumbnail route's answer when the Superset has thumbnails switched off (not an error: nothing to fix here). */
export const thumbnailOff = z.object({
  status: z.literal('off'),
  detail: z.string(),
});
export type ThumbnailOff = z.infer<typeof thumbnailOff>;

export const thumbnailComputing = z.object({
  status: z.literal('computing'),
  retry_after_seconds: z.number().int(),
  detail: z.string(),
});

export const datasetListQuery = z.object({
  env_id: envIdQuery,
  ...upstreamPagination,
  search: z.string().trim().max(500).optional().describe('Case-insensitive substring of the table name'),
});

export const datasetItem = z.object({
  id: z.number().int(),
  uuid: z.string().nullable(),
  table_name: z.string(),
  schema: z.string().nullable(),
  catalog: z.string().nullable(),
  kind: z.string().nullable().describe('`physical` or `virtual`'),
  sql: z.string().nullable(),
  description: z.string().nullable(),
  database: z.object({ id: z.number().int(), name: z.string(), uuid: z.string().nullable() }).nullable(),
  owners: z.array(userRef),
  changed_by_name: z.string().nullable(),
  changed_on: z.string().nullable(),
  explore_url: z.string().nullable().describe('Absolute URL'),
});

export const datasetsResponse = z.object({
  items: z.array(datasetItem),
  total: z.number().int(),
  page: z.number().int(),
  page_size: z.number().int(),
  has_next: z.boolean(),
  env_id: z.string(),
});
