import { defaultCatalogOfUri } from '../../lib/bundles/catalogs.ts';
import { Bundle } from '../../lib/bundles/bundle.ts';
import type { SupersetClient } from '../../lib/superset/client.ts';
import { SupersetNotFoundError } from '../../lib/superset/errors.ts';
import { maxBundleBytes, type MigrationDeps } from './deps.ts';
import { chartsForCheck, runLegacyChart, runQueryContext, runQueryContexts } from './chart-check/superset.ts';
import type { IndexedResource, MigrationUpstream, UpstreamDatabase } from './upstream.ts';

/** Ids per export call: the ids travel in the URL, and gunicorn refuses request lines over 4 KiB. */
const EXPORT_CHUNK = 200;

/** Two orders per list (FAB cannot order by id): the second completes what ties in the first hid. */
const LIST_ORDERS = {
  dashboard: [
    { orderColumn: 'changed_on', orderDirection: 'asc' },
    { orderColumn: 'dashboard_title', orderDirection: 'desc' },
  ],
  chart: [
    { orderColumn: 'changed_on_delta_humanized', orderDirection: 'asc' },
    { orderColumn: 'slice_name', orderDirection: 'desc' },
  ],
  dataset: [
    { orderColumn: 'table_name', orderDirection: 'asc' },
    { orderColumn: 'changed_on_delta_humanized', orderDirection: 'desc' },
  ],
} as const;

async function orNull<T>(p: Promise<T>): Promise<T | null> {
  try {
    return await p;
  } catch (err) {
    if (err instanceof SupersetNotFoundError) return null;
    throw err;
  }
}

/** The migration's view of an environment, over the activities' one Superset accessor. */
export async function upstreamFor(deps: Pick<MigrationDeps, 'superset' | 'config'>, envId: string): Promise<MigrationUpstream> {
  return supersetUpstream(await deps.superset(envId), { maxBundleBytes: maxBundleBytes(deps) });
}

/** The migration's view of one environment, over the project's Superset client. */
export function supersetUpstream(client: SupersetClient, opts: { maxBundleBytes?: number } = {}): MigrationUpstream {
  return {
    version: () => client.instance.version(),
    prepareWrites: () => client.prepareWrites(),
    exportDashboards: async (ids) => new Uint8Array(await client.dashboards.export(ids)),

    exportObjects: (kind, ids) => exportInChunks(client, kind, ids, opts.maxBundleBytes),
    importBundle: (kind, zip, overwrite) => client.assets.import(kind, zip, { overwrite }),
    rlsRules: () => client.rls.list(),
    rlsRule: (id) => client.rls.get(id),
    rlsRoles: () => client.rls.roles(),
    createRlsRule: (rule) => client.rls.create(rule),
    updateRlsRule: (id, rule) => client.rls.update(id, rule),

    async databaseCatalogs(id, names) {
      const def = defaultCatalogOfUri(await client.databases.connectionUri(id));
      if (def === undefined) return undefined;
      return names ? { default: def, names: await client.databases.catalogs(id) } : { default: def };
    },

    async listDatabases(): Promise<UpstreamDatabase[]> {
      const dbs = await client.databases.list();
      return dbs.map((d) => ({ id: d.id, uuid: String(d.uuid ?? ''), database_name: d.database_name, backend: d.backend ?? null }));
    },

    listRows: (resource, columns, afterId) => listInTwoOrders(client, resource, columns, afterId),
    recentDashboards: (page, pageSize) => recentDashboards(client, page, pageSize),

    async findDashboard(idOrSlug) {
      const d = await orNull(client.dashboards.get(idOrSlug));
      return d
        ? { id: d.id, uuid: (d.uuid as string | undefined) ?? null, slug: d.slug ?? null, dashboard_title: d.dashboard_title ?? null }
        : null;
    },

    async dashboardCharts(id) {
      const charts = await client.dashboards.charts(id);
      return charts.map((c) => ({ id: c.id, slice_name: c.slice_name ?? null, form_data: (c.form_data ?? {}) as Record<string, unknown> }));
    },

    chartsForCheck: (id, listed, exported) => chartsForCheck(client, id, listed, exported),
    runQueryContext: (queryContext) => runQueryContext(client, queryContext),
    chartUuids: async (ids) => new Map((await client.meta.listed('chart', ids)).map((c) => [c.id, c.uuid])),
    runQueryContexts: (queryContexts) => runQueryContexts(client, queryContexts),
    runLegacyChart: (chartId) => runLegacyChart(client, chartId),
  };
}

/** The export of many charts or datasets, EXPORT_CHUNK ids a call, each bundle read (and held to the size cap). */
async function exportInChunks(
  client: SupersetClient,
  kind: 'chart' | 'dataset',
  ids: number[],
  maxBundleBytes?: number,
): Promise<Bundle[]> {
  const bundles: Bundle[] = [];
  for (let i = 0; i < ids.length; i += EXPORT_CHUNK) {
    const zip = await client.assets.export(kind, ids.slice(i, i + EXPORT_CHUNK));
    bundles.push(Bundle.fromZip(new Uint8Array(zip), maxBundleBytes));
  }
  return bundles;
}

type Row = Record<string, unknown> & { id: number };

/** Every row of a list, read in LIST_ORDERS' first order and, when that missed some, completed in the second. */
async function listInTwoOrders(client: SupersetClient, resource: IndexedResource, columns: string[], afterId?: number): Promise<Row[]> {
  const filters = afterId !== undefined ? [{ col: 'id', opr: 'gt', value: afterId }] : undefined;
  const [firstOrder, secondOrder] = LIST_ORDERS[resource];
  const first = await client.lists.allCounted<Row>(resource, { columns, filters, ...firstOrder });
  if (first.rows.length >= first.count) return first.rows;
  // Rows moved between pages (ties in the order, or changes meanwhile): complete in another order.
  const again = await client.lists.allCounted<Row>(resource, { columns, filters, ...secondOrder });
  const byId = new Map(first.rows.map((r) => [r.id, r]));
  for (const r of again.rows) if (!byId.has(r.id)) byId.set(r.id, r);
  return [...byId.values()];
}

/** One page of dashboards, the most recently changed first. */
async function recentDashboards(client: SupersetClient, page: number, pageSize: number): Promise<Row[]> {
  const body = await client.lists.page<Row>('dashboard', {
    columns: ['id', 'uuid', 'slug', 'dashboard_title', 'changed_on_utc'],
    orderColumn: 'changed_on_delta_humanized',
    orderDirection: 'desc',
    page,
    pageSize,
  });
  return body.result;
}
