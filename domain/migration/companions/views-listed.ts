/**
 * Dashboards' heads (each one's own meta and chart list: what `/dashboard/{id}` and
 * `/dashboard/{id}/charts` give) for many dashboards at once, from the environment's own export
 * of them and two list reads, instead of two reads per dashboard:
 *
 * - the export gives each dashboard's CSS and theme (not list columns from 5.0) and its charts:
 *   Superset's export puts every chart of the dashboard into its layout (those the layout lacks
 *   are appended), and names each chart's file `<name>_<id>.yaml`;
 * - the dashboard list (`id in`) gives owners, roles, tags and certification, as the detail does;
 * - the chart list (`id in`) gives each chart's meta, Superset's own `form_data` (what the chart
 *   list of a dashboard gives) and the dashboards it is on, which must name this one.
 *
 * A dashboard any of this does not answer (no export, a file name that is not Superset's, a row
 * missing) is left out: its head is read the usual way (./views.ts).
 */
import type { Bundle, BundleFile } from '../../../lib/bundles/bundle.ts';
import { chartUuidsOf } from '../../../lib/bundles/rewrite.ts';
import { idOfNamedFile } from '../../../lib/bundles/split.ts';
import type { SupersetClient } from '../../../lib/superset/client.ts';
import { plainMeta, type ListedMeta, type ObjectMeta } from '../../../lib/superset/resources/object-meta.ts';
import type { DashboardChart } from '../../../lib/superset/types.ts';

/**
 * Chart and dataset reads kept for more than one dashboard's view (a source's, during one
 * activity: a dataset several dashboards use is read once), by `<kind> <id>`.
 */
export type ObjectReads = Map<string, Promise<ObjectMeta>>;

export interface DashboardHead {
  dashboard: ObjectMeta;
  charts: DashboardChart[];
}

/** A dashboard's file in its export, with the ids of its charts there; null when a name or chart is not as Superset writes them. */
function exported(bundle: Bundle | undefined, dashboardId: number): { file: BundleFile; chartIds: number[] } | null {
  if (!bundle) return null;
  const file = bundle.of('dashboards').find((f) => idOfNamedFile(f.path, String(f.content.dashboard_title ?? '')) === dashboardId);
  if (!file) return null;
  const charts = new Map(bundle.of('charts').map((f) => [String(f.content.uuid ?? ''), f]));
  const chartIds: number[] = [];
  for (const uuid of new Set(chartUuidsOf(file))) {
    const chart = charts.get(uuid);
    const id = chart ? idOfNamedFile(chart.path, String(chart.content.slice_name ?? '')) : null;
    if (id === null) return null;
    chartIds.push(id);
  }
  return { file, chartIds };
}

/**
 * The heads of these dashboards that their exports (`exportOf`) and the two lists answer, by
 * dashboard id; each chart's meta is kept in `kept` for the views' later chart reads.
 */
export async function headsFromExport(
  client: SupersetClient,
  dashboardIds: number[],
  exportOf: (dashboardId: number) => Bundle | undefined,
  kept: ObjectReads,
): Promise<Map<number, DashboardHead>> {
  const found = new Map<number, { file: BundleFile; chartIds: number[] }>();
  for (const id of dashboardIds) {
    const e = exported(exportOf(id), id);
    if (e) found.set(id, e);
  }
  const out = new Map<number, DashboardHead>();
  if (!found.size) return out;
  const [dashboards, charts] = await Promise.all([
    client.meta.listed('dashboard', [...found.keys()]),
    client.meta.listed('chart', [...new Set([...found.values()].flatMap((e) => e.chartIds))]),
  ]);
  const chartRows = new Map(charts.map((c) => [c.id, c]));
  // A row without its uuid (which pairs the chart with its copy) is not kept: the views read its detail (./views.ts objectsListed).
  for (const row of charts) if (row.uuid && !kept.has(`chart ${row.id}`)) kept.set(`chart ${row.id}`, Promise.resolve(plainMeta(row)));
  for (const row of dashboards) {
    const e = found.get(row.id);
    const rows = e?.chartIds.map((id) => chartRows.get(id));
    // Superset's own answer links each chart to the dashboard, with the form_data its chart list gives.
    const linked = rows?.every((c) => c?.form_data && c.uuid && c.dashboard_ids?.includes(row.id));
    if (!e || !row.uuid || !linked) continue;
    const content = e.file.content;
    // The list has no theme column: the row's theme_id says nothing, the export does.
    const { theme_id: _unlisted, ...meta } = plainMeta(row);
    const dashboard: ObjectMeta = { ...meta, css: typeof content.css === 'string' ? content.css : null };
    // 6.0+ exports name the theme (null for none); an export without the field is a release without themes.
    if ('theme_uuid' in content) dashboard.theme_uuid = typeof content.theme_uuid === 'string' ? content.theme_uuid : null;
    else dashboard.theme_id = null;
    out.set(row.id, {
      dashboard,
      charts: rows!.map((c) => ({ id: c!.id, slice_name: c!.name, form_data: c!.form_data })),
    });
  }
  return out;
}

/**
 * The client whose dashboard list reads (`meta.listed('dashboard', ids)`) take the rows the caller
 * already holds (read ahead, or by another list read), asking Superset only for the others. A row
 * that turns out missing (its read failed, or gave none) is left out, for the views to read that
 * dashboard the usual way.
 */
export function withDashboardRows(client: SupersetClient, rows: ReadonlyMap<number, Promise<ListedMeta | undefined>>): SupersetClient {
  if (!rows.size) return client;
  const listed: SupersetClient['meta']['listed'] = async (kind, ids) => {
    if (kind !== 'dashboard') return client.meta.listed(kind, ids);
    const have = ids.filter((id) => rows.has(id));
    const rest = ids.filter((id) => !rows.has(id));
    const [kept, more] = await Promise.all([
      // expected: a row the caller failed to read is not given: the dashboard is then read by its own detail read, which meets its own failure.
      Promise.all(have.map((id) => rows.get(id)!.catch(() => undefined))),
      rest.length ? client.meta.listed(kind, rest) : Promise.resolve([]),
    ]);
    return [...kept.filter((r): r is ListedMeta => r !== undefined), ...more];
  };
  const meta = new Proxy(client.meta, { get: (t, key) => (key === 'listed' ? listed : Reflect.get(t, key)) });
  return new Proxy(client, { get: (t, key) => (key === 'meta' ? meta : Reflect.get(t, key)) });
}
