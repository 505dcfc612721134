/**
 * LLM providers: any OpenAI-compatible chat-completions endpoint, managed by admins. The API key
 * is a stored secret: encrypted at rest, write-only (answers carry a fixed mask), refused
 * (`400 secret_required`) when the base URL changes without it, and only ever read by the
 * activity that calls the provider.
 */
import { z } from 'zod';
import type { LlmProviderFields, LlmProviderRow } from '../../db/llm-providers/store.ts';
import { assertDestinationAllowed, egressPolicy } from '../../lib/egress/policy.ts';
import { ValidationError } from '../../lib/errors.ts';
import { completeStructured, LlmError } from '../../lib/llm/chat.ts';
import { upstreamReason } from '../../lib/upstream-reason.ts';
import { assertSecretResent } from '../../lib/secret-destination.ts';
import type { AppContext } from '../context.ts';
import { defineRoute, type AnyRoute } from '../http/routes.ts';
import { pageEnvelope, pagination, secretDestinationUrl } from '../http/schemas.ts';

/** The API key in answers: a fixed mask, no character of the key. */
export const KEY_MASK = '********';

const baseUrl = secretDestinationUrl(
  'OpenAI-compatible API base, e.g. `https://api.openai.com/v1` or `http://127.0.0.1:11434/v1` (no credentials, query or fragment)',
);

const fields = {
  name: z.string().trim().min(1, 'name is required').max(100),
  base_url: baseUrl,
  model: z.string().trim().min(1, 'model is required').max(200).describe('model name as the provider knows it'),
  api_key: z.string().min(1, 'api_key is required').max(4096).describe('Write-only; stored encrypted, never returned'),
  timeout_seconds: z.number().int().min(1).max(600).describe('per-request timeout (default 60)'),
  sample_data_env_ids: z
    .array(z.string().min(1).max(200))
    .max(100)
    .transform((ids) => [...new Set(ids)])
    .describe('environments whose sample rows (a few values per column) may be sent to this provider; none by default'),
  description: z.string().trim().max(2000).nullable(),
};

const createBody = z
  .object({
    ...fields,
    timeout_seconds: fields.timeout_seconds.default(60),
    sample_data_env_ids: fields.sample_data_env_ids.default([]),
    description: fields.description.optional(),
  })
  .strict();

const updateBody = z
  .object({
    name: fields.name.optional(),
    base_url: fields.base_url.optional(),
    model: fields.model.optional(),
    api_key: fields.api_key.optional().describe('Write-only; left out keeps the stored key, but is required when base_url moves elsewhere'),
    timeout_seconds: fields.timeout_seconds.optional(),
    sample_data_env_ids: fields.sample_data_env_ids.optional(),
    description: fields.description.optional(),
  })
  .strict();

const providerView = z.object({
  id: z.string(),
  name: z.string(),
  base_url: z.string(),
  model: z.string(),
  api_key: z.literal(KEY_MASK).describe('always the mask: the key is write-only'),
  timeout_seconds: z.number().int(),
  sample_data_env_ids: z.array(z.string()),
  description: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});

const testReport = z.object({
  provider_id: z.string(),
  ok: z.boolean(),
  model: z.string().describe('the model that answered (or was asked)'),
  latency_ms: z.number().int(),
  error: z.object({ kind: z.string(), status: z.number().int().nullable(), message: z.string() }).nullable(),
});

const providerParams = z.object({ provider_id: z.string().min(1).max(200) });

function toView(r: LlmProviderRow): z.infer<typeof providerView> {
  return {
    id: r.id,
    name: r.name,
    base_url: r.base_url,
    model: r.model,
    api_key: KEY_MASK,
    timeout_seconds: r.timeout_seconds,
    sample_data_env_ids: r.sample_data_env_ids ?? [],
    description: r.description,
    created_at: new Date(r.created_at).toISOString(),
    updated_at: new Date(r.updated_at).toISOString(),
  };
}

export function llmProviderRoutes(app: AppContext): AnyRoute[] {
  const store = app.stores.llmProviders;
  const tag = 'LLM providers';

  async function checkEnvironments(ids: string[] | undefined): Promise<void> {
    if (!ids?.length) return;
    const known = await app.stores.environments.namesById(ids);
    const unknown = ids.filter((id) => !known.has(id));
    if (unknown.length) {
      throw new ValidationError(`sample_data_env_ids names unknown environments: ${unknown.join(', ')}`, [
        { field: 'body.sample_data_env_ids', message: `unknown environment(s): ${unknown.join(', ')}` },
      ]);
    }
  }

  return [
    defineRoute({
      method: 'get',
      path: '/api/admin/llm-providers',
      tag,
      summary: 'List LLM providers',
      description:
        'Sorted by name. The API key is write-only: answers carry `api_key: "********"`. The provider `default` (the `LLM_*` variables) is not listed.',
      access: 'admin',
      query: z.object(pagination),
      responses: { 200: { description: 'A page of providers', schema: pageEnvelope(providerView) } },
      async handler(_ctx, { query }) {
        const { rows, total } = await store.list(query.page, query.page_size);
        return {
          items: rows.map(toView),
          total,
          page: query.page,
          page_size: query.page_size,
          has_next: query.page * query.page_size < total,
        };
      },
    }),

    defineRoute({
      method: 'post',
      path: '/api/admin/llm-providers',
      tag,
      summary: 'Add an LLM provider',
      description:
        'Adds any OpenAI-compatible chat-completions API; the API key is stored encrypted and never returned. Details: docs/identity-and-access.md#post-apiadminllm-providers.',
      access: 'admin',
      body: createBody,
      responses: {
        201: { description: 'Created', schema: providerView },
        400: { description: 'Invalid body (`validation_failed`), or a `base_url` outside `ALLOWED_UPSTREAM_HOSTS` (`host_not_allowed`)' },
        409: { description: 'A provider with this name exists' },
      },
      async handler(ctx, { body, principal }) {
        await checkEnvironments(body.sample_data_env_ids);
        await assertDestinationAllowed(egressPolicy(app.config), body.base_url, 'body.base_url');
        const row = await store.create({
          name: body.name,
          base_url: body.base_url,
          model: body.model,
          api_key: body.api_key,
          timeout_seconds: body.timeout_seconds,
          sample_data_env_ids: body.sample_data_env_ids,
          description: body.description ?? null,
        });
        await app.securityEvents.recordChange(ctx, principal, 'LLM_PROVIDER_CREATED', {
          provider_id: row.id,
          name: row.name,
          base_url: row.base_url,
          model: row.model,
        });
        app.logger.info({ provider_id: row.id, name: row.name, base_url: row.base_url }, 'LLM provider created');
        ctx.status = 201;
        ctx.set('Location', `/api/admin/llm-providers/${row.id}`);
        ctx.body = toView(row);
      },
    }),

    defineRoute({
      method: 'put',
      path: '/api/admin/llm-providers/:provider_id',
      tag,
      summary: 'Change an LLM provider',
      description:
        'Changes only the fields sent; the stored key is kept when `api_key` is left out, except that moving `base_url` elsewhere (scheme, host, port or path) without sending `api_key` again is `400 secret_required` and saves nothing: the stored key only goes where it was sent with.',
      access: 'admin',
      params: providerParams,
      body: updateBody,
      responses: {
        200: { description: 'The provider', schema: providerView },
        400: { description: 'Invalid body, `secret_required`, or a `base_url` outside `ALLOWED_UPSTREAM_HOSTS` (`host_not_allowed`)' },
        404: { description: 'Unknown provider' },
        409: { description: 'A provider with this name exists' },
      },
      async handler(ctx, { params, body, principal }) {
        await checkEnvironments(body.sample_data_env_ids);
        if (body.base_url !== undefined) await assertDestinationAllowed(egressPolicy(app.config), body.base_url, 'body.base_url');
        const patch: Partial<LlmProviderFields> = {};
        if (body.name !== undefined) patch.name = body.name;
        if (body.base_url !== undefined) patch.base_url = body.base_url;
        if (body.model !== undefined) patch.model = body.model;
        if (body.api_key !== undefined) patch.api_key = body.api_key;
        if (body.timeout_seconds !== undefined) patch.timeout_seconds = body.timeout_seconds;
        if (body.sample_data_env_ids !== undefined) patch.sample_data_env_ids = body.sample_data_env_ids;
        if (body.description !== undefined) patch.description = body.description;
        const actor = { actorId: principal.userId, actorUsername: principal.username };
        try {
          const { row, before } = await store.update(params.provider_id, patch, (b) =>
            assertSecretResent({
              before: { url: b.base_url },
              after: { url: body.base_url },
              secretSent: body.api_key !== undefined,
              secretField: 'body.api_key',
              urlField: 'body.base_url',
            }),
          );
          const changed = Object.keys(patch);
          await app.securityEvents.recordChange(ctx, principal, 'LLM_PROVIDER_UPDATED', {
            provider_id: row.id,
            name: row.name,
            changed,
            ...(before.base_url !== row.base_url ? { base_url: { from: before.base_url, to: row.base_url } } : {}),
          });
          app.logger.info({ provider_id: row.id, changed }, 'LLM provider updated');
          return toView(row);
        } catch (err) {
          if ((err as { code?: string }).code === 'secret_required') {
            await app.securityEvents.record(ctx, {
              type: 'LLM_PROVIDER_UPDATED',
              outcome: 'failure',
              ...actor,
              detail: { provider_id: params.provider_id, reason: 'secret_required', base_url_requested: body.base_url ?? null },
            });
          }
          throw err;
        }
      },
    }),

    defineRoute({
      method: 'delete',
      path: '/api/admin/llm-providers/:provider_id',
      tag,
      summary: 'Remove an LLM provider',
      description: 'Its suggestions stay, with the provider named in their provenance.',
      access: 'admin',
      params: providerParams,
      responses: { 204: { description: 'Removed' }, 404: { description: 'Unknown provider' } },
      async handler(ctx, { params, principal }) {
        const row = await store.remove(params.provider_id);
        await app.securityEvents.recordChange(ctx, principal, 'LLM_PROVIDER_DELETED', {
          provider_id: row.id,
          name: row.name,
          base_url: row.base_url,
        });
        ctx.status = 204;
      },
    }),

    defineRoute({
      method: 'post',
      path: '/api/admin/llm-providers/:provider_id/test',
      tag,
      summary: 'Test an LLM provider',
      description:
        'Sends one tiny structured-output request to the provider and reports whether it answered, with the latency and, on failure, a short reason (never the body or the key). Details: docs/identity-and-access.md#post-apiadminllm-providersprovider_idtest.',
      access: 'admin',
      params: providerParams,
      responses: { 200: { description: 'The test report', schema: testReport }, 404: { description: 'Unknown provider' } },
      async handler(ctx, { params, principal }) {
        const conn = await store.connection(params.provider_id, app.config);
        const started = Date.now();
        let error: z.infer<typeof testReport>['error'] = null;
        let model = conn.model;
        try {
          const answer = await completeStructured(
            {
              baseUrl: conn.baseUrl,
              apiKey: conn.apiKey,
              model: conn.model,
              timeoutSeconds: Math.min(conn.timeoutSeconds, 30),
              egress: egressPolicy(app.config),
            },
            [{ role: 'user', content: 'Reply with the JSON object {"ok": true}.' }],
            {
              name: 'connection_test',
              jsonSchema: { type: 'object', additionalProperties: false, required: ['ok'], properties: { ok: { type: 'boolean' } } },
              check: (v) => (v && typeof v === 'object' && 'ok' in v ? { ok: true, value: v } : { ok: false, error: 'no "ok" member' }),
            },
            { maxRetries: 0, timeoutRetries: 0, maxRetryAfterSeconds: 0, baseDelayMs: 0, maxDelayMs: 0 },
          );
          model = answer.model;
        } catch (err) {
          if (!(err instanceof LlmError)) throw err;
          const said = upstreamReason(err.providerMessage, [conn.apiKey]);
          error = { kind: err.kind, status: err.status ?? null, message: said ?? upstreamReason(err.message, [conn.apiKey]) ?? err.kind };
        }
        const report = { provider_id: conn.id, ok: error === null, model, latency_ms: Date.now() - started, error };
        await app.securityEvents.record(ctx, {
          type: 'LLM_PROVIDER_TESTED',
          outcome: report.ok ? 'success' : 'failure',
          actorId: principal.userId,
          actorUsername: principal.username,
          detail: { provider_id: conn.id, name: conn.name, base_url: conn.baseUrl, ok: report.ok, error: error?.kind ?? null },
        });
        return report;
      },
    }),
  ];
}
