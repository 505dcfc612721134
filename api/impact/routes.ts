import type { ImpactTarget } from '../../lib/impact/types.ts';
import type { AppContext } from '../context.ts';
import { envIdParams } from '../environments/schemas.ts';
import { defineRoute, type AnyRoute } from '../http/routes.ts';
import { impactQuery, impactResponse } from './schemas.ts';

/** The query's target without the keys it left out. */
export function targetOf(q: {
  table?: string;
  schema?: string;
  database?: string;
  dataset?: number;
  column?: string;
  metric?: string;
}): ImpactTarget {
  return Object.fromEntries(Object.entries(q).filter(([, v]) => v !== undefined)) as ImpactTarget;
}

export function impactRoutes(app: AppContext): AnyRoute[] {
  const service = app.impact;
  return [
    defineRoute({
      method: 'get',
      path: '/api/environments/:env_id/impact',
      tag: 'Environments',
      summary: 'What uses a database, table, dataset, column or metric',
      description:
        'The charts, dashboards, alerts and reports, saved queries and virtual datasets that use the target, here and in every environment this one maps into. Details: docs/environments.md#get-apienvironmentsenv_idimpact.',
      access: { permission: 'datasets:READ' },
      params: envIdParams,
      query: impactQuery,
      responses: {
        200: { description: 'The impact here and in the environments migrated to (ImpactResponse)', schema: impactResponse },
        400: { description: 'No target, or a column or metric without its table or dataset' },
        404: { description: 'Unknown environment, or no such dataset in it' },
        503: { description: 'Superset unreachable, timed out, failed or refused the service account (code `upstream_unavailable`)' },
      },
      async handler(_ctx, { params, query }) {
        return service.impact(params.env_id, targetOf(query));
      },
    }),
  ];
}
