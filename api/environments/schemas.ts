import { z } from 'zod';
import type { EnvironmentRow } from '../../db/environments/store.ts';
import { pageEnvelope, pagination, secretDestinationUrl } from '../http/schemas.ts';

/** Any string: an id that is not a UUID is simply an unknown environment (404), not a bad request. */
export const envIdParams = z.object({ env_id: z.string().max(200).describe('Environment id (`env_id`)') });

const baseUrl = secretDestinationUrl(
  'Superset base URL, e.g. `https://bi.example.com` (a path prefix is allowed; no credentials, query or fragment)',
);

const fields = {
  name: z.string().trim().min(1, 'name is required').max(100),
  base_url: baseUrl,
  username: z.string().trim().min(1, 'username is required').max(255).describe('Superset service account (database login)'),
  password: z.string().min(1, 'password is required').max(1024).describe('Write-only; stored encrypted, never returned'),
  verify_tls: z.boolean().describe('Verify the TLS certificate of an https base URL (default true)'),
  timeout_seconds: z.number().int().min(1).max(600).describe('Per-request timeout towards Superset (default 30)'),
  description: z.string().trim().max(2000).nullable(),
  protected: z
    .boolean()
    .describe(
      'Every task that writes into it (migration, restore, column mapping, dataset launch, release publish or revoke, git deploy; accepting suggestions and undoing a change become tasks) waits for approval by another person (default false). Only an administrator (`admin:settings:WRITE`) may set or clear it, or delete a protected environment (403 `protection_admin_only`)',
    ),
};

export const environmentCreate = z
  .object({
    ...fields,
    verify_tls: fields.verify_tls.default(true),
    timeout_seconds: fields.timeout_seconds.default(30),
    description: fields.description.optional(),
    protected: fields.protected.default(false),
  })
  .strict();

export const environmentUpdate = z
  .object({
    name: fields.name.optional(),
    base_url: fields.base_url.optional(),
    username: fields.username.optional(),
    password: fields.password.optional().describe('Write-only; left out keeps the stored password'),
    verify_tls: fields.verify_tls.optional(),
    timeout_seconds: fields.timeout_seconds.optional(),
    description: fields.description.optional(),
    protected: fields.protected.optional(),
  })
  .strict();

export const environmentView = z.object({
  id: z.string().describe('The `env_id`'),
  name: z.string(),
  base_url: z.string(),
  username: z.string(),
  has_password: z.literal(true),
  verify_tls: z.boolean(),
  timeout_seconds: z.number().int(),
  description: z.string().nullable(),
  protected: z.boolean(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type EnvironmentView = z.infer<typeof environmentView>;

export const environmentList = pageEnvelope(environmentView);
export const environmentListQuery = z.object({ ...pagination });

const listCapabilities = z.object({
  filters: z
    .array(z.string())
    .nullable()
    .describe('Columns the list accepts filters on (`_info?keys=filters`); null when the instance refused the probe'),
  uuid_column: z.boolean().nullable().describe('List rows carry the object uuid; lookups by uuid otherwise fall back to exports'),
});

export const supersetCapabilities = z.object({
  version: z.string().nullable(),
  lists: z.object({ dashboard: listCapabilities, chart: listCapabilities, dataset: listCapabilities }),
  dataset_database_uuid: z.boolean().nullable().describe('Dataset list rows carry `database.uuid`'),
  security_api: z
    .boolean()
    .nullable()
    .describe("Flask-AppBuilder's security API answers the service account (usernames for the profile filter)"),
  thumbnails: z.boolean().nullable().describe('The THUMBNAILS feature flag is on; null when the instance has no dashboard to ask about'),
  probed_at: z.string(),
});

export const environmentTestReport = z.object({
  env_id: z.string(),
  ok: z.boolean().describe('Reachable, logged in, and no permission missing'),
  reachable: z.boolean(),
  login: z.boolean(),
  version: z.string().nullable().describe('Superset release, when the instance reveals it'),
  missing_permissions: z.array(z.string()).describe('e.g. `can_export on Dashboard`'),
  checked_permissions: z.array(z.string()),
  capabilities: supersetCapabilities
    .nullable()
    .describe('What this Superset can do, asked of it rather than inferred from its version; null when the check stopped before'),
  latency_ms: z.number().int(),
  error: z.object({ code: z.string(), detail: z.string() }).nullable(),
});

export function toEnvironmentView(row: EnvironmentRow): EnvironmentView {
  return {
    id: row.id,
    name: row.name,
    base_url: row.base_url,
    username: row.username,
    has_password: true,
    verify_tls: row.verify_tls,
    timeout_seconds: row.timeout_seconds,
    description: row.description,
    protected: row.protected === true,
    created_at: new Date(row.created_at).toISOString(),
    updated_at: new Date(row.updated_at).toISOString(),
  };
}
