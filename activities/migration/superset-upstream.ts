import { Bundle } from '../../lib/bundles/bundle.ts';
import type { SupersetClient } from '../../lib/superset/client.ts';
import { SupersetApiError, SupersetNotFoundError } from '../../lib/superset/errors.ts';
import type { MigrationUpstream, UpstreamDatabase } from './upstream.ts';

async function orNull<T>(p: Promise<T>): Promise<T | null> {
  try {
    return await p;
  } catch (err) {
    if (err instanceof SupersetNotFoundError) return null;
    throw err;
  }
}

/** The migration's view of one environment, over the project's Superset client. */
export function supersetUpstream(client: SupersetClient): MigrationUpstream {
  return {
    version: () => client.version(),
    exportDashboards: async (ids) => new Uint8Array(await client.exportDashboards(ids)),

    async exportObject(kind, id) {
      const zip = await orNull(client.exportBundle(kind === 'charts' ? 'chart' : 'dataset', [id]));
      if (!zip) return null;
      const bundle = Bundle.fromZip(new Uint8Array(zip));
      return bundle.of(kind).find((f) => f.content && typeof f.content.uuid === 'string')?.content ?? null;
    },

    importBundle: (kind, zip, overwrite) => client.importBundle(kind, zip, { overwrite }),

    async listDatabases(): Promise<UpstreamDatabase[]> {
      const dbs = await client.listDatabases();
      return dbs.map((d) => ({ id: d.id, uuid: String(d.uuid ?? ''), database_name: d.database_name, backend: d.backend ?? null }));
    },

    async findDashboard(idOrSlug) {
      const d = await orNull(client.getDashboard(idOrSlug));
      return d
        ? { id: d.id, uuid: (d.uuid as string | undefined) ?? null, slug: d.slug ?? null, dashboard_title: d.dashboard_title ?? null }
        : null;
    },

    async findChart(uuid) {
      const r = await client.listCharts({ filters: [{ col: 'uuid', opr: 'eq', value: uuid }], columns: ['id', 'uuid'], pageSize: 1 });
      const c = r.result[0];
      return c ? { id: c.id, uuid: String(c.uuid) } : null;
    },

    async findDataset(q) {
      const filters =
        'uuid' in q
          ? [{ col: 'uuid', opr: 'eq', value: q.uuid }]
          : [
              { col: 'table_name', opr: 'eq', value: q.tableName },
              { col: 'database', opr: 'rel_o_m', value: q.databaseId },
            ];
      const r = await client.listDatasets({ filters, pageSize: 25 });
      const match = 'uuid' in q ? r.result[0] : r.result.find((d) => (d.schema ?? null) === (q.schema ?? null) || (!d.schema && !q.schema));
      return match ? { id: match.id, uuid: (match.uuid as string | undefined) ?? null } : null;
    },

    async findDatasetsByTable(tableName) {
      const r = await client.listDatasets({ filters: [{ col: 'table_name', opr: 'eq', value: tableName }], pageSize: 100 });
      return r.result.map((d) => ({
        id: d.id,
        uuid: (d.uuid as string | undefined) ?? null,
        schema: d.schema ?? null,
        database: d.database ? { id: d.database.id, name: d.database.database_name } : null,
      }));
    },

    async dashboardCharts(id) {
      const charts = await client.getDashboardCharts(id);
      return charts.map((c) => ({ id: c.id, slice_name: c.slice_name ?? null, form_data: (c.form_data ?? {}) as Record<string, unknown> }));
    },

    /** A minimal query context from the chart's own params: charts saved through the API often have no saved one. */
    async runChartQuery(chart) {
      const fd = chart.form_data;
      const datasetId = Number(String(fd.datasource ?? '').split('__')[0]);
      if (!Number.isFinite(datasetId) || datasetId <= 0)
        return { ok: false, error: `chart has no dataset (datasource '${String(fd.datasource ?? '')}')` };
      const metrics = [...asArray(fd.metrics), ...asArray(fd.metric)];
      const columns = [...asArray(fd.groupby), ...asArray(fd.all_columns), ...asArray(fd.columns)];
      const query: Record<string, unknown> = { columns, row_limit: 5 };
      if (metrics.length) query.metrics = metrics;
      try {
        const res = await client.chartData({ datasource: { id: datasetId, type: 'table' }, queries: [query] } as never);
        const first = res.result[0];
        if (!first || (first.status && first.status !== 'success') || first.error)
          return { ok: false, error: String(first?.error ?? first?.status ?? 'no result') };
        return { ok: true, rows: Number(first.rowcount ?? first.data?.length ?? 0) };
      } catch (err) {
        if (err instanceof SupersetApiError) return { ok: false, error: err.upstreamMessage };
        throw err;
      }
    },
  };
}

function asArray(v: unknown): unknown[] {
  if (v === undefined || v === null || v === '') return [];
  return Array.isArray(v) ? v : [v];
}
