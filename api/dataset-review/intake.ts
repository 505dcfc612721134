/**
 * Intake: from a pasted link to what the dashboard shows. Every piece that cannot be recovered
 * (an unreadable permalink, a deleted chart or dataset, a filter on a column the dataset lacks)
 * becomes a marker beside what was recovered; only an unreachable Superset fails the request.
 */
import type { SessionDataset, RecoveryMarker, SessionRow } from '../../db/dataset-review/sessions.ts';
import { chartIdsInLayout, importFilters, parseJsonMetadata, type ImportedFilter } from '../../lib/dataset-review/filters.ts';
import { parseTemplateParams, templateVariables, type TemplateVariable } from '../../lib/dataset-review/jinja.ts';
import type { DashboardLink } from '../../lib/dataset-review/link.ts';
import type { SupersetClient } from '../../lib/superset/client.ts';
import { SupersetApiError, SupersetUnavailableError } from '../../lib/superset/errors.ts';
import type { DatasetDetail } from '../../lib/superset/types.ts';

export interface Recovered {
  title: string | null;
  dashboard: SessionRow['dashboard'];
  dataset: SessionDataset | null;
  detail: DatasetDetail | null;
  candidate_datasets: SessionRow['candidate_datasets'];
  charts: SessionRow['charts'];
  imported_filters: ImportedFilter[];
  template_variables: TemplateVariable[];
  markers: RecoveryMarker[];
}

/** Superset refused (4xx), or could not decode what it was asked for (its 500 "Fatal error"): a gap to mark, not an outage. */
function refusal(err: unknown): string | undefined {
  if (err instanceof SupersetApiError) return err.upstreamMessage;
  if (err instanceof SupersetUnavailableError && err.reason === 'server_error') return err.upstreamMessage ?? err.message;
  return undefined;
}

export function datasetOf(detail: DatasetDetail, baseUrl: string): SessionDataset {
  const d = detail as DatasetDetail & Record<string, unknown>;
  const db = d.database as { id?: number } | undefined;
  return {
    id: detail.id,
    table_name: detail.table_name,
    database_id: typeof db?.id === 'number' ? db.id : null,
    schema: (d.schema as string | null) ?? null,
    catalog: (d.catalog as string | null) ?? null,
    sql: (d.sql as string | null) ?? null,
    template_params: parseTemplateParams(d.template_params),
    kind: d.sql ? 'virtual' : 'physical',
    url: `${baseUrl}/explore/?datasource_type=table&datasource_id=${detail.id}`,
  };
}

/** Reads the dataset and checks the filters against its columns; markers for what is missing. */
export async function recoverDataset(
  client: SupersetClient,
  datasetId: number,
  baseUrl: string,
  filters: ImportedFilter[],
  markers: RecoveryMarker[],
): Promise<{ dataset: SessionDataset | null; detail: DatasetDetail | null; filters: ImportedFilter[]; variables: TemplateVariable[] }> {
  let detail: DatasetDetail;
  try {
    detail = await client.datasets.get(datasetId);
  } catch (err) {
    const why = refusal(err);
    if (why === undefined) throw err;
    markers.push({
      kind: 'dataset',
      ref: String(datasetId),
      detail: `dataset ${datasetId} could not be read from Superset (not found or not accessible)`,
      upstream_error: why,
    });
    return { dataset: null, detail: null, filters, variables: [] };
  }
  const dataset = datasetOf(detail, baseUrl);
  const columns = new Set(detail.columns.map((c) => c.column_name));
  const checked = filters.map((f) => ({ ...f, column_in_dataset: f.column === null ? null : columns.has(f.column) }));
  for (const f of checked) {
    if (f.column_in_dataset === false) {
      markers.push({
        kind: 'filter_column',
        ref: f.id,
        detail: `filter '${f.name}' is on column '${f.column}', which dataset '${detail.table_name}' does not have`,
      });
    }
  }
  return { dataset, detail, filters: checked, variables: templateVariables(dataset.sql, dataset.template_params) };
}

export async function recover(client: SupersetClient, link: DashboardLink, baseUrl: string): Promise<Recovered> {
  const markers: RecoveryMarker[] = [];
  const empty: Recovered = {
    title: null,
    dashboard: null,
    dataset: null,
    detail: null,
    candidate_datasets: [],
    charts: [],
    imported_filters: [],
    template_variables: [],
    markers,
  };

  const { ref, dataMask, anchor } = await dashboardRefOf(client, link, markers);
  if (ref === null) return empty;
  const dash = await readDashboard(client, ref, markers);
  if (!dash) return empty;
  const meta = parseJsonMetadata(dash.json_metadata);
  const title = (dash as { dashboard_title?: string }).dashboard_title ?? null;
  const slug = (dash as { slug?: string | null }).slug ?? null;
  const dashboard = { id: dash.id, title, slug, url: `${baseUrl}/superset/dashboard/${slug || dash.id}/` };

  const charts = chartsOf(await client.dashboards.charts(dash.id), chartIdsInLayout(dash.position_json), markers);
  const candidates = await candidateDatasets(client, dash.id, charts);
  const chosen = chosenDataset(dash, anchor, charts, candidates, markers);

  let filters = importFilters(meta, dataMask);
  let dataset: SessionDataset | null = null;
  let detail: DatasetDetail | null = null;
  let variables: TemplateVariable[] = [];
  if (chosen !== null) ({ dataset, detail, filters, variables } = await recoverDataset(client, chosen, baseUrl, filters, markers));

  return {
    title: dataset ? `${title ?? `Dashboard ${dash.id}`} · ${dataset.table_name}` : title,
    dashboard,
    dataset,
    detail,
    candidate_datasets: candidates.length > 1 ? candidates : [],
    charts,
    imported_filters: filters,
    template_variables: variables,
    markers,
  };
}

type Dashboard = Awaited<ReturnType<SupersetClient['dashboards']['get']>>;
type Candidate = SessionRow['candidate_datasets'][number];

/** The dashboard the link names; a permalink also gives its filter state and the chart it points at (marked when unreadable). */
async function dashboardRefOf(
  client: SupersetClient,
  link: DashboardLink,
  markers: RecoveryMarker[],
): Promise<{ ref: string | number | null; dataMask: Record<string, unknown> | null; anchor: string | null }> {
  let ref: string | number | null =
    link.kind === 'dashboard_id' ? link.dashboardId : link.kind === 'dashboard_slug' ? link.slug : link.dashboardRef;
  let dataMask: Record<string, unknown> | null = null;
  let anchor: string | null = null;
  if (link.kind === 'permalink') {
    try {
      const p = await client.dashboards.permalink(link.key);
      ref = p.dashboardId || ref;
      const mask = p.state.dataMask;
      dataMask = mask && typeof mask === 'object' && !Array.isArray(mask) ? (mask as Record<string, unknown>) : {};
      anchor = typeof p.state.anchor === 'string' ? p.state.anchor : null;
    } catch (err) {
      const why = refusal(err);
      if (why === undefined) throw err;
      markers.push({
        kind: 'permalink',
        ref: link.key,
        detail: 'the permalink could not be read: its filter values are lost',
        upstream_error: why,
      });
    }
  }
  return { ref, dataMask, anchor };
}

/** The dashboard, or undefined (marked) when Superset refuses it. */
async function readDashboard(client: SupersetClient, ref: string | number, markers: RecoveryMarker[]): Promise<Dashboard | undefined> {
  try {
    return await client.dashboards.get(ref);
  } catch (err) {
    const why = refusal(err);
    if (why === undefined) throw err;
    markers.push({
      kind: 'dashboard',
      ref: String(ref),
      detail: `dashboard ${ref} could not be read from Superset (not found or not accessible)`,
      upstream_error: why,
    });
    return undefined;
  }
}

/** The dashboard's charts with their datasets, and (marked missing) those its layout names that no longer exist. */
function chartsOf(
  existing: Awaited<ReturnType<SupersetClient['dashboards']['charts']>>,
  laidOut: number[],
  markers: RecoveryMarker[],
): SessionRow['charts'] {
  const charts: SessionRow['charts'] = existing.map((c) => {
    const ds = typeof c.form_data?.datasource === 'string' ? Number(c.form_data.datasource.split('__')[0]) : NaN;
    return { id: c.id, name: c.slice_name ?? null, dataset_id: Number.isFinite(ds) ? ds : null, missing: false };
  });
  for (const id of laidOut) {
    if (charts.some((c) => c.id === id)) continue;
    charts.push({ id, name: null, dataset_id: null, missing: true });
    markers.push({ kind: 'chart', ref: String(id), detail: `chart ${id} is in the dashboard's layout but no longer exists in Superset` });
  }
  return charts;
}

/** Each dataset the charts use, with its charts and (when Superset names it) its table name. */
async function candidateDatasets(client: SupersetClient, dashboardId: number, charts: SessionRow['charts']): Promise<Candidate[]> {
  const byDataset = new Map<number, number[]>();
  for (const c of charts) if (c.dataset_id !== null) byDataset.set(c.dataset_id, [...(byDataset.get(c.dataset_id) ?? []), c.id]);
  const names = new Map<number, string>();
  try {
    for (const d of await client.dashboards.datasets(dashboardId)) names.set(d.id, d.table_name ?? d.name ?? String(d.id));
  } catch (err) {
    if (refusal(err) === undefined) throw err; // names are a nicety; a refusal leaves them out
  }
  return [...byDataset.entries()].map(([id, ids]) => ({ id, table_name: names.get(id) ?? null, charts: ids }));
}

/** The chart the link points at (a permalink's anchor), else the only dataset; none (marked when no chart names one) otherwise. */
function chosenDataset(
  dash: Dashboard,
  anchor: string | null,
  charts: SessionRow['charts'],
  candidates: Candidate[],
  markers: RecoveryMarker[],
): number | null {
  const anchored = anchor
    ? (parseJsonMetadata(dash.position_json)[anchor] as { meta?: { chartId?: number } } | undefined)?.meta?.chartId
    : undefined;
  const anchoredChart = anchored !== undefined ? charts.find((c) => c.id === anchored) : undefined;
  if (anchoredChart?.dataset_id) return anchoredChart.dataset_id;
  if (candidates.length === 1) return candidates[0]!.id;
  if (!candidates.length) markers.push({ kind: 'dataset', ref: null, detail: 'no chart of the dashboard names a dataset' });
  return null;
}
