import { displayName } from '../../lib/superset/client.ts';
import type { DatasetListItem } from '../../lib/superset/types.ts';
import type { AppContext } from '../context.ts';
import { datasetListQuery, datasetsResponse } from '../dashboards/schemas.ts';
import { defineRoute, type AnyRoute } from '../http/routes.ts';

function iso(value: string | null | undefined): string | null {
  if (!value) return null;
  const d = new Date(value.replace(/(\.\d{3})\d+/, '$1').replace(/([+-]\d{2})(\d{2})$/, '$1:$2'));
  return Number.isNaN(d.getTime()) ? null : d.toISOString();
}

function toDatasetItem(baseUrl: string, d: DatasetListItem) {
  return {
    id: d.id,
    uuid: d.uuid ?? null,
    table_name: d.table_name,
    schema: d.schema ?? null,
    catalog: d.catalog ?? null,
    kind: d.kind ?? (d.sql ? 'virtual' : 'physical'),
    sql: d.sql ?? null,
    description: d.description ?? null,
    database: d.database ? { id: d.database.id, name: d.database.database_name, uuid: d.database.uuid ?? null } : null,
    owners: (d.owners ?? []).map((o) => ({
      id: typeof o.id === 'number' ? o.id : null,
      first_name: o.first_name ?? null,
      last_name: o.last_name ?? null,
      display_name: displayName(o),
    })),
    changed_by_name: d.changed_by_name ?? null,
    changed_on: iso(d.changed_on_utc),
    explore_url: d.explore_url ? `${baseUrl}${d.explore_url.startsWith('/') ? '' : '/'}${d.explore_url}` : null,
  };
}

export function datasetRoutes(app: AppContext): AnyRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: '/api/datasets',
      tag: 'Datasets',
      summary: 'List the datasets of an environment',
      description: 'Ordered by table name; paging and the optional `search` (table name substring) run in Superset, `total` is exact.',
      access: { permission: 'datasets:READ' },
      query: datasetListQuery,
      responses: {
        200: { description: 'A page of datasets (DatasetsResponse)', schema: datasetsResponse },
        400: { description: 'Bad pagination (`page` < 1, `page_size` outside 1..100, `page` × `page_size` > 10000) or missing `env_id`' },
        404: { description: 'Unknown environment' },
        503: { description: 'Superset unreachable, timed out, failed or refused the service account (code `upstream_unavailable`)' },
      },
      async handler(_ctx, { query }) {
        return app.supersets.use(query.env_id, async (client, env) => {
          const res = await client.listDatasets({
            filters: query.search ? [{ col: 'table_name', opr: 'ct', value: query.search }] : [],
            page: query.page - 1,
            pageSize: query.page_size,
          });
          return {
            items: res.result.map((d) => toDatasetItem(env.base_url, d)),
            total: res.count,
            page: query.page,
            page_size: query.page_size,
            has_next: query.page * query.page_size < res.count,
            env_id: env.id,
          };
        });
      },
    }),
  ];
}
