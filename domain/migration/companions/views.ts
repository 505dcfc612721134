/**
 * A dashboard as the companion kinds read it in one environment: its own owners, roles, tags,
 * certification and CSS, and the same of its charts and datasets, each found by uuid (ids differ
 * between environments). Read once per dashboard and phase, shared by every kind.
 */
import { plainMeta, type ObjectMeta } from '../../../lib/superset/resources/object-meta.ts';
import type { SupersetClient } from '../../../lib/superset/client.ts';
import { formDataDatasource, type DashboardChart } from '../../../lib/superset/types.ts';
import { SupersetNotFoundError } from '../../../lib/superset/errors.ts';
import type { Bundle } from '../../../lib/bundles/bundle.ts';
import { headsFromExport, type DashboardHead, type ObjectReads } from './views-listed.ts';

export interface DashboardView {
  dashboard: ObjectMeta;
  charts: ObjectMeta[];
  datasets: ObjectMeta[];
}

/** Most objects of one dashboard read at a time. */
const READS_AT_ONCE = 4;

export type { ObjectReads };

/** The object's meta, read once per `kept` (each caller gets its own copy). */
function metaOf(client: SupersetClient, kind: 'chart' | 'dataset', id: number, kept?: ObjectReads): Promise<ObjectMeta> {
  if (!kept) return client.meta.get(kind, id);
  const key = `${kind} ${id}`;
  let hit = kept.get(key);
  if (!hit) {
    hit = client.meta.get(kind, id);
    // expected: a failed read is only forgotten here (asked again later); whoever awaits it meets the error.
    hit.catch(() => kept.delete(key));
    kept.set(key, hit);
  }
  return hit.then((m) => structuredClone(m));
}

/** The dashboard (by id, slug or uuid) with its charts and datasets; null when the environment does not have it. */
export async function readView(
  client: SupersetClient,
  idOrUuid: number | string,
  kept?: ObjectReads,
  /** Where the dashboard's chart list is kept for a later reader (../source-checks-ahead.ts). */
  chartLists?: ChartLists,
): Promise<DashboardView | null> {
  let dashboard: ObjectMeta;
  try {
    const found = typeof idOrUuid === 'number' ? idOrUuid : (await client.dashboards.get(idOrUuid)).id;
    dashboard = await client.meta.get('dashboard', found);
  } catch (err) {
    if (err instanceof SupersetNotFoundError) return null;
    throw err;
  }
  const [charts, datasets] = await Promise.all([chartListOf(client, dashboard.id, chartLists), client.dashboards.datasets(dashboard.id)]);
  return {
    dashboard,
    charts: await inParallel(
      charts.map((c) => () => metaOf(client, 'chart', c.id, kept)),
      READS_AT_ONCE,
    ),
    datasets: await inParallel(
      datasets.map((d) => () => metaOf(client, 'dataset', d.id, kept)),
      READS_AT_ONCE,
    ),
  };
}

/** A dashboard's own meta and its charts as `/dashboard/{id}/charts` lists them; null when the environment does not have it. */
async function dashboardWithCharts(client: SupersetClient, id: number, chartLists?: ChartLists): Promise<DashboardHead | null> {
  try {
    const [dashboard, charts] = await Promise.all([client.meta.get('dashboard', id), chartListOf(client, id, chartLists)]);
    return { dashboard, charts };
  } catch (err) {
    if (err instanceof SupersetNotFoundError) return null;
    throw err;
  }
}

/**
 * Dashboards' chart lists (`/dashboard/{id}/charts`) kept for a later reader in the same
 * environment (the source's chart checks, ../source-checks-ahead.ts), by dashboard id.
 */
export type ChartLists = Map<number, Promise<DashboardChart[]>>;

/** The dashboard's chart list, read once per `kept` (a failed read is asked again). */
function chartListOf(client: SupersetClient, id: number, kept?: ChartLists): Promise<DashboardChart[]> {
  if (!kept) return client.dashboards.charts(id);
  let hit = kept.get(id);
  if (!hit) {
    const read = client.dashboards.charts(id);
    read.catch(() => {
      // expected: a failed read is only forgotten here (asked again later); whoever awaits it meets the error.
      if (kept.get(id) === read) kept.delete(id);
    });
    kept.set(id, (hit = read));
  }
  return hit;
}

/** The dataset ids a dashboard's charts read (Superset's `/dashboard/{id}/datasets` is theirs too); null when a chart does not say. */
function datasetIdsOf(charts: DashboardChart[]): number[] | null {
  const ids = new Set<number>();
  for (const c of charts) {
    const ds = formDataDatasource(c.form_data);
    if (!ds) return null;
    if (ds.type === 'table') ids.add(ds.id);
  }
  return [...ids];
}

/**
 * The objects of these ids, from one list read per hundred (`kept`: those read before are taken
 * from it, those read now are kept); an id the list leaves out is read on its own, which meets
 * Superset's own answer for it (a 404 fails the views as readView's would).
 */
async function objectsListed(
  client: SupersetClient,
  kind: 'chart' | 'dataset',
  ids: number[],
  kept: ObjectReads,
): Promise<Map<number, ObjectMeta>> {
  const fresh = [...new Set(ids)].filter((id) => !kept.has(`${kind} ${id}`));
  if (fresh.length) {
    const listing = client.meta.listed(kind, fresh);
    for (const id of fresh) {
      const read = listing.then((rows) => {
        const row = rows.find((r) => r.id === id);
        // Not listed, or listed without its uuid (which pairs it with its copy): its detail read decides.
        if (!row?.uuid) return client.meta.get(kind, id);
        return plainMeta(row);
      });
      // expected: a failed read is only forgotten here (asked again later); whoever awaits it meets the error.
      read.catch(() => kept.delete(`${kind} ${id}`));
      kept.set(`${kind} ${id}`, read);
    }
  }
  const out = new Map<number, ObjectMeta>();
  for (const id of new Set(ids)) out.set(id, await metaOf(client, kind, id, kept));
  return out;
}

/**
 * Several dashboards' views at once, as readView reads one: each dashboard's meta and chart list
 * (a few dashboards at a time), then all their charts in one list read and all their datasets in
 * another, instead of one detail read per chart and dataset. Null for a dashboard the environment
 * does not have.
 */
export async function readViews(
  client: SupersetClient,
  dashboardIds: number[],
  kept: ObjectReads = new Map(),
  chartLists?: ChartLists,
  /** The environment's export of a dashboard, when the caller holds it: the heads are then read from it and two lists (./views-listed.ts). */
  exportOf?: (dashboardId: number) => Bundle | undefined,
): Promise<Map<number, DashboardView | null>> {
  // A failed list read leaves every dashboard to its own reads, which meet their own failure.
  const listed = exportOf
    ? // expected: a failed list read leaves every dashboard to its own reads, which meet their own failure.
      await headsFromExport(client, dashboardIds, exportOf, kept).catch(() => new Map<number, DashboardHead>())
    : null;
  for (const [id, head] of listed ?? []) if (chartLists && !chartLists.has(id)) chartLists.set(id, Promise.resolve(head.charts));
  const heads = await inParallel(
    dashboardIds.map((id) => () => (listed?.has(id) ? Promise.resolve(listed.get(id)!) : dashboardWithCharts(client, id, chartLists))),
    READS_AT_ONCE,
  );
  const datasetIds = await inParallel(
    heads.map(
      (h) => async () => (h ? (datasetIdsOf(h.charts) ?? (await client.dashboards.datasets(h.dashboard.id)).map((d) => d.id)) : []),
    ),
    READS_AT_ONCE,
  );
  const [charts, datasets] = await Promise.all([
    objectsListed(
      client,
      'chart',
      heads.flatMap((h) => h?.charts.map((c) => c.id) ?? []),
      kept,
    ),
    objectsListed(client, 'dataset', datasetIds.flat(), kept),
  ]);
  const views = new Map<number, DashboardView | null>();
  for (const [at, id] of dashboardIds.entries()) {
    const h = heads[at];
    views.set(
      id,
      h && {
        dashboard: h.dashboard,
        charts: h.charts.map((c) => structuredClone(charts.get(c.id)!)),
        datasets: datasetIds[at]!.map((d) => structuredClone(datasets.get(d)!)),
      },
    );
  }
  return views;
}

/** Each piece of work run with at most `limit` at a time; the answers in the work's order. */
export async function inParallel<T>(work: Array<() => Promise<T>>, limit: number): Promise<T[]> {
  const out: T[] = new Array(work.length);
  let next = 0;
  const worker = async () => {
    while (next < work.length) {
      const at = next++;
      out[at] = await work[at]!();
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, work.length) }, worker));
  return out;
}

/** The target object that is the source's `meta`: the same uuid (a dataset: the uuid it has in the target). */
export function counterpart(view: DashboardView | null, kind: 'chart' | 'dataset', uuid: string | null): ObjectMeta | null {
  if (!view || !uuid) return null;
  return (kind === 'chart' ? view.charts : view.datasets).find((o) => o.uuid === uuid) ?? null;
}
