import { z } from 'zod';
import { supersetId } from '../http/schemas.ts';
import type { DatabaseMappingRow } from '../../db/environments/mappings.ts';
import type { EnvironmentRow } from '../../db/environments/store.ts';
import { ValidationError } from '../../lib/errors.ts';
import type { DatabaseInfo } from '../../lib/superset/types.ts';
import type { AppContext } from '../context.ts';
import { defineRoute, type AnyRoute } from '../http/routes.ts';
import { scoreMatch, SUGGESTION_THRESHOLD, type DatabaseSide } from './similarity.ts';

const envPairQuery = z.object({
  source_env_id: z.string({ error: 'source_env_id is required' }).min(1).max(200),
  target_env_id: z.string({ error: 'target_env_id is required' }).min(1).max(200),
});
const pairParams = z.object({
  env_id: z.string().max(200).describe('Source environment'),
  target_env_id: z.string().max(200).describe('Target environment'),
});

const dbRef = z.object({ id: z.number().int(), name: z.string(), uuid: z.string().nullable(), backend: z.string().nullable() });
const savedRef = z.object({ id: z.number().int(), name: z.string(), uuid: z.string().nullable() });
const score = z.object({
  confidence: z.number().min(0).max(1),
  same_uuid: z.boolean(),
  name_similarity: z.number().min(0).max(1),
  same_backend: z.boolean().nullable(),
});

const suggestionsResponse = z.object({
  source_env_id: z.string(),
  target_env_id: z.string(),
  items: z.array(
    z.object({
      source_database: dbRef,
      suggested_target: dbRef.nullable().describe(`Best target when its confidence is at least ${SUGGESTION_THRESHOLD}`),
      confidence: z.number().min(0).max(1),
      candidates: z.array(dbRef.extend(score.shape)).describe('Up to three best targets, best first'),
      saved_target: savedRef.nullable().describe('The mapping saved for this pair, if any'),
    }),
  ),
});

const mappingView = z.object({
  source_database: savedRef,
  target_database: savedRef,
  created_by: z.string().nullable(),
  updated_by: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});
const mappingSet = z.object({ source_env_id: z.string(), target_env_id: z.string(), items: z.array(mappingView) });
const mappingPut = z
  .object({
    mappings: z
      .array(
        z
          .object({
            source_database_id: supersetId('database').describe('Database id in the source environment'),
            target_database_id: supersetId('database').describe('Database id in the target environment'),
          })
          .strict(),
      )
      .max(1000),
  })
  .strict();

function side(d: DatabaseInfo): DatabaseSide {
  return { id: d.id, name: d.database_name, uuid: d.uuid ?? null, backend: d.backend ?? null };
}

function toMappingView(r: DatabaseMappingRow) {
  return {
    source_database: { id: r.source_database_id, name: r.source_database_name, uuid: r.source_database_uuid },
    target_database: { id: r.target_database_id, name: r.target_database_name, uuid: r.target_database_uuid },
    created_by: r.created_by,
    updated_by: r.updated_by,
    created_at: new Date(r.created_at).toISOString(),
    updated_at: new Date(r.updated_at).toISOString(),
  };
}

/**
 * Database mappings between two environments: suggestions computed from both Superset instances,
 * and the accepted set persisted per (source, target) pair for migrations to reuse.
 * Registered before `/api/dashboards/:id` (see app.ts).
 */
export function dbMappingRoutes(app: AppContext): AnyRoute[] {
  const pair = async (sourceId: string, targetId: string): Promise<[EnvironmentRow, EnvironmentRow]> =>
    Promise.all([app.stores.environments.get(sourceId), app.stores.environments.get(targetId)]);
  const databases = (env: EnvironmentRow) => app.supersets.use(env.id, (client) => client.databases.list());

  return [
    defineRoute({
      method: 'get',
      path: '/api/dashboards/db-mappings',
      tag: 'Database mappings',
      summary: 'Suggest database mappings between two environments',
      description: `For each database of the source environment, the target database it most likely corresponds to, with a confidence in 0..1 (no suggestion below ${SUGGESTION_THRESHOLD}), and the mapping already saved for the pair. Details: docs/environments.md#get-apidashboardsdb-mappings.`,
      access: { permission: 'dashboards:READ' },
      query: envPairQuery,
      responses: {
        200: { description: 'One suggestion per source database', schema: suggestionsResponse },
        404: { description: 'Either environment is unknown' },
        503: { description: 'Either Superset is unavailable (code `upstream_unavailable`)' },
      },
      async handler(_ctx, { query }) {
        const [source, target] = await pair(query.source_env_id, query.target_env_id);
        const [sourceDbs, targetDbs, saved] = await Promise.all([
          databases(source),
          databases(target),
          app.stores.databaseMappings.list(source.id, target.id),
        ]);
        const savedBySource = new Map(saved.map((m) => [m.source_database_id, m]));
        return {
          source_env_id: source.id,
          target_env_id: target.id,
          items: sourceDbs.map((s) => {
            const src = side(s);
            const ranked = targetDbs
              .map((t) => ({ ...side(t), ...scoreMatch(src, side(t)) }))
              .sort((a, b) => b.confidence - a.confidence || a.name.localeCompare(b.name) || a.id - b.id);
            const best = ranked[0];
            const m = savedBySource.get(s.id);
            return {
              source_database: src,
              suggested_target:
                best && best.confidence >= SUGGESTION_THRESHOLD
                  ? { id: best.id, name: best.name, uuid: best.uuid, backend: best.backend }
                  : null,
              confidence: best?.confidence ?? 0,
              candidates: ranked.slice(0, 3),
              saved_target: m ? { id: m.target_database_id, name: m.target_database_name, uuid: m.target_database_uuid } : null,
            };
          }),
        };
      },
    }),

    defineRoute({
      method: 'get',
      path: '/api/environments/:env_id/db-mappings/:target_env_id',
      tag: 'Database mappings',
      summary: 'The saved database mappings from one environment to another',
      description: 'What migrations from `env_id` to `target_env_id` use unless a request overrides them. No Superset call.',
      access: { permission: 'dashboards:READ' },
      params: pairParams,
      responses: { 200: { description: 'The saved mappings', schema: mappingSet }, 404: { description: 'Either environment is unknown' } },
      async handler(_ctx, { params }) {
        const [source, target] = await pair(params.env_id, params.target_env_id);
        const rows = await app.stores.databaseMappings.list(source.id, target.id);
        return { source_env_id: source.id, target_env_id: target.id, items: rows.map(toMappingView) };
      },
    }),

    defineRoute({
      method: 'put',
      path: '/api/environments/:env_id/db-mappings/:target_env_id',
      tag: 'Database mappings',
      summary: 'Save the database mappings from one environment to another',
      description:
        'Replaces the whole set for the pair (an empty list clears it). Each source database appears at most once. Both ids are checked against the two Superset instances, and their names and uuids are stored with them, so a later migration can also match by uuid.',
      access: { permission: 'dashboards:MIGRATE' },
      params: pairParams,
      body: mappingPut,
      responses: {
        200: { description: 'The saved mappings', schema: mappingSet },
        400: {
          description:
            'Same environment twice, a source database listed twice, or a database id unknown to its Superset (`errors` names each)',
        },
        404: { description: 'Either environment is unknown' },
        503: { description: 'Either Superset is unavailable (code `upstream_unavailable`)' },
      },
      async handler(_ctx, { params, body, principal }) {
        const [source, target] = await pair(params.env_id, params.target_env_id);
        if (source.id === target.id) {
          throw new ValidationError('source and target environments must differ', [
            { field: 'path.target_env_id', message: 'must differ from env_id' },
          ]);
        }
        const errors: Array<{ field: string; message: string }> = [];
        const seen = new Set<number>();
        body.mappings.forEach((m, i) => {
          if (seen.has(m.source_database_id))
            errors.push({ field: `body.mappings.${i}.source_database_id`, message: `database ${m.source_database_id} is mapped twice` });
          seen.add(m.source_database_id);
        });
        if (errors.length) throw new ValidationError(errors.map((e) => `${e.field}: ${e.message}`).join('; '), errors);
        const [sourceDbs, targetDbs] = body.mappings.length ? await Promise.all([databases(source), databases(target)]) : [[], []];
        const src = new Map(sourceDbs.map((d) => [d.id, d]));
        const tgt = new Map(targetDbs.map((d) => [d.id, d]));
        body.mappings.forEach((m, i) => {
          if (!src.has(m.source_database_id))
            errors.push({
              field: `body.mappings.${i}.source_database_id`,
              message: `no database ${m.source_database_id} in environment '${source.name}'`,
            });
          if (!tgt.has(m.target_database_id))
            errors.push({
              field: `body.mappings.${i}.target_database_id`,
              message: `no database ${m.target_database_id} in environment '${target.name}'`,
            });
        });
        if (errors.length) throw new ValidationError(errors.map((e) => `${e.field}: ${e.message}`).join('; '), errors);
        const rows = await app.stores.databaseMappings.replace(
          source.id,
          target.id,
          body.mappings.map((m) => {
            const s = src.get(m.source_database_id)!;
            const t = tgt.get(m.target_database_id)!;
            return {
              source_database_id: s.id,
              source_database_name: s.database_name,
              source_database_uuid: s.uuid ?? null,
              target_database_id: t.id,
              target_database_name: t.database_name,
              target_database_uuid: t.uuid ?? null,
            };
          }),
          principal.userId,
        );
        return { source_env_id: source.id, target_env_id: target.id, items: rows.map(toMappingView) };
      },
    }),
  ];
}
