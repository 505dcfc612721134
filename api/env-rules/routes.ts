import { z } from 'zod';
import { ENV_RULE_KINDS } from '../../contracts/env-rules.ts';
import type { EnvironmentRuleRow } from '../../db/environments/rules.ts';
import type { EnvironmentRow } from '../../db/environments/store.ts';
import { ruleProblems } from '../../lib/bundles/env-rules.ts';
import { ConflictError, NotFoundError, ValidationError } from '../../lib/errors.ts';
import type { AppContext } from '../context.ts';
import { defineRoute, type AnyRoute } from '../http/routes.ts';

const pairParams = z.object({
  env_id: z.string().max(200).describe('Source environment'),
  target_env_id: z.string().max(200).describe('Target environment'),
});
const ruleParams = pairParams.extend({ rule_id: z.uuid().describe('The rule') });

const ruleBody = z
  .object({
    kind: z.enum(ENV_RULE_KINDS as ['schema', 'catalog', 'text']).describe('`schema`, `catalog` or `text`'),
    from: z
      .string()
      .max(2000)
      .describe('The schema or catalog name in the source, or the text (an http(s) URL: links on its origin and path)'),
    to: z.string().max(2000).describe('What it becomes in the target'),
    description: z.string().max(500).nullable().optional(),
  })
  .strict();

const ruleView = z.object({
  id: z.string(),
  position: z.number().int().describe('Rules apply in this order'),
  kind: z.enum(ENV_RULE_KINDS as ['schema', 'catalog', 'text']),
  from: z.string(),
  to: z.string(),
  description: z.string().nullable(),
  created_by: z.string().nullable(),
  updated_by: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});
const ruleSet = z.object({ source_env_id: z.string(), target_env_id: z.string(), items: z.array(ruleView) });

function toView(r: EnvironmentRuleRow) {
  return {
    id: r.id,
    position: r.position,
    kind: r.kind,
    from: r.from_value,
    to: r.to_value,
    description: r.description,
    created_by: r.created_by,
    updated_by: r.updated_by,
    created_at: new Date(r.created_at).toISOString(),
    updated_at: new Date(r.updated_at).toISOString(),
  };
}

const TAG = 'Environment rules';
const APPLIES =
  'Rules apply, in order, to every bundle written from `env_id` into `target_env_id`, renaming schemas and catalogs and replacing text and links. Details: docs/environments.md#get-apienvironmentsenv_idrulestarget_env_id.';

/** Per-environment rules of a pair, beside its database mappings (`/api/environments/{env_id}/db-mappings/{target_env_id}`). No Superset call. */
export function envRuleRoutes(app: AppContext): AnyRoute[] {
  const store = app.stores.environmentRules;
  const pair = async (sourceId: string, targetId: string): Promise<[EnvironmentRow, EnvironmentRow]> =>
    Promise.all([app.stores.environments.get(sourceId), app.stores.environments.get(targetId)]);

  /** The body checked against the rule's meaning and the pair's other rules. */
  const checked = async (source: EnvironmentRow, target: EnvironmentRow, body: z.output<typeof ruleBody>, except?: string) => {
    if (source.id === target.id)
      throw new ValidationError('source and target environments must differ', [
        { field: 'path.target_env_id', message: 'must differ from env_id' },
      ]);
    const errors = ruleProblems(body).map((p) => ({ field: `body.${p.field}`, message: p.message }));
    if (errors.length) throw new ValidationError(errors.map((e) => `${e.field}: ${e.message}`).join('; '), errors);
    const twin = (await store.list(source.id, target.id)).find(
      (r) => r.kind === body.kind && r.from_value === body.from && r.id !== except,
    );
    if (twin)
      throw new ConflictError(`the pair already has a ${body.kind} rule from '${body.from}' (rule ${twin.id})`, 'rule_exists', {
        rule_id: twin.id,
      });
  };

  return [
    defineRoute({
      method: 'get',
      path: '/api/environments/:env_id/rules/:target_env_id',
      tag: TAG,
      summary: 'The per-environment rules from one environment to another',
      description: APPLIES,
      access: { permission: 'dashboards:READ' },
      params: pairParams,
      responses: {
        200: { description: 'The rules, in the order they apply', schema: ruleSet },
        404: { description: 'Either environment is unknown' },
      },
      async handler(_ctx, { params }) {
        const [source, target] = await pair(params.env_id, params.target_env_id);
        return { source_env_id: source.id, target_env_id: target.id, items: (await store.list(source.id, target.id)).map(toView) };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/api/environments/:env_id/rules/:target_env_id',
      tag: TAG,
      summary: "Add a per-environment rule (applied after the pair's existing ones)",
      description: APPLIES,
      access: { permission: 'dashboards:MIGRATE' },
      params: pairParams,
      body: ruleBody,
      responses: {
        201: { description: 'The rule', schema: ruleView },
        400: {
          description:
            'Same environment twice, a schema or catalog name that is not an identifier (letters, digits, `_`, `$`, `-`, at most 63; the offending character is named), `from` equal to `to`, a URL rule whose `to` is not an http(s) URL',
        },
        404: { description: 'Either environment is unknown' },
        409: { description: 'The pair already has a rule of that kind from that value (code `rule_exists`)' },
      },
      async handler(ctx, { params, body, principal }) {
        const [source, target] = await pair(params.env_id, params.target_env_id);
        await checked(source, target, body);
        const row = await store.add(source.id, target.id, body, principal.userId);
        ctx.status = 201;
        ctx.set('Location', `/api/environments/${source.id}/rules/${target.id}/${row.id}`);
        return toView(row);
      },
    }),
    defineRoute({
      method: 'put',
      path: '/api/environments/:env_id/rules/:target_env_id/:rule_id',
      tag: TAG,
      summary: 'Change a per-environment rule (its place in the order kept)',
      access: { permission: 'dashboards:MIGRATE' },
      params: ruleParams,
      body: ruleBody,
      responses: {
        200: { description: 'The rule', schema: ruleView },
        400: { description: 'As for adding one' },
        404: { description: 'Either environment or the rule is unknown' },
        409: { description: 'Another rule of the pair has that kind and `from` (code `rule_exists`)' },
      },
      async handler(_ctx, { params, body, principal }) {
        const [source, target] = await pair(params.env_id, params.target_env_id);
        if (!(await store.get(source.id, target.id, params.rule_id))) throw new NotFoundError('rule', params.rule_id);
        await checked(source, target, body, params.rule_id);
        const row = await store.update(source.id, target.id, params.rule_id, body, principal.userId);
        if (!row) throw new NotFoundError('rule', params.rule_id);
        return toView(row);
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/api/environments/:env_id/rules/:target_env_id/:rule_id',
      tag: TAG,
      summary: 'Remove a per-environment rule',
      access: { permission: 'dashboards:MIGRATE' },
      params: ruleParams,
      responses: { 204: { description: 'Removed' }, 404: { description: 'Either environment or the rule is unknown' } },
      async handler(ctx, { params }) {
        const [source, target] = await pair(params.env_id, params.target_env_id);
        if (!(await store.remove(source.id, target.id, params.rule_id))) throw new NotFoundError('rule', params.rule_id);
        ctx.status = 204;
      },
    }),
  ];
}
