import { randomUUID } from 'node:crypto';
import { Bundle, type BundleFile } from '../lib/bundles/bundle.ts';
import type { SupersetClient } from '../lib/superset/client.ts';

/**
 * Many dashboards for bench:validate without thousands of API calls: the model dashboard (made
 * through the API, its C charts numbered 0..C-1, chart c asking row limit 100 + c or the metric
 * `SUM(units) + c` labelled `units c`) exported once, and copies of it imported in parts, copy d's
 * charts numbered d × C + c (each its own query, as the model's). Creating 10,000 charts one API
 * call each took most of an hour on the 2-core machine; an import of 500 takes seconds.
 */
const PART = 50; // dashboards an import call holds

/** Chart c of the model as chart k: its name, uuid and the numbers that make its query its own. */
function chartCopy(f: BundleFile, c: number, k: number): BundleFile {
  let text = JSON.stringify(f.content);
  text = text
    .replace(new RegExp(`(row_limit\\\\*"\\s*:\\s*)${100 + c}\\b`, 'g'), `$1${100 + k}`)
    .replace(new RegExp(`SUM\\(units\\) \\+ ${c}\\b`, 'g'), `SUM(units) + ${k}`)
    .replace(new RegExp(`units ${c}(?=\\\\*")`, 'g'), `units ${k}`)
    .replace(new RegExp(`bench (rows|total) ${c}(?=\\\\*")`, 'g'), `bench $1 ${k}`);
  const content = JSON.parse(text) as Record<string, unknown>;
  return { ...f, path: `charts/copy_${k}.yaml`, content: { ...content, uuid: randomUUID() } };
}

/** One copy of the model dashboard (number d) with its charts; the dashboard's layout names the copies' uuids. */
function dashboardCopy(model: Bundle, d: number, charts: number): BundleFile[] {
  const dash = model.of('dashboards')[0]!;
  const modelCharts = model.of('charts');
  const out: BundleFile[] = [];
  let layout = JSON.stringify(dash.content);
  for (const f of modelCharts) {
    const c = Number(/bench (?:rows|total) (\d+)/.exec(String(f.content.slice_name))![1]);
    const copy = chartCopy(f, c, d * charts + c);
    layout = layout.replaceAll(String(f.content.uuid), String(copy.content.uuid));
    out.push(copy);
  }
  const content = {
    ...(JSON.parse(layout) as Record<string, unknown>),
    uuid: randomUUID(),
    dashboard_title: `bench ${d}`,
    slug: `bench-${d}`,
  };
  return [{ ...dash, path: `dashboards/copy_${d}.yaml`, content }, ...out];
}

/** Copies 1..count-1 of the model dashboard imported; answers every dashboard's id (the model's first) and its charts' ids, in order. */
export async function copyModelDashboard(
  client: SupersetClient,
  modelId: number,
  count: number,
  charts: number,
): Promise<Array<{ id: number; charts: number[] }>> {
  const model = Bundle.fromZip(await client.exportDashboards([modelId]));
  const shared = [...model.files.values()].filter((f) => f.kind !== 'dashboards' && f.kind !== 'charts');
  for (let from = 1; from < count; from += PART) {
    const files = new Map(shared.map((f) => [f.path, f]));
    for (let d = from; d < Math.min(count, from + PART); d++) for (const f of dashboardCopy(model, d, charts)) files.set(f.path, f);
    await client.importBundle('dashboard', new Bundle(model.root, files).toZip(), { overwrite: true });
  }
  const all = await client.listAll<{ id: number; dashboard_title: string }>('dashboard', { columns: ['id', 'dashboard_title'] });
  const byTitle = new Map(all.map((x) => [x.dashboard_title, x.id]));
  const out: Array<{ id: number; charts: number[] }> = [];
  for (let d = 0; d < count; d++) {
    const id = byTitle.get(`bench ${d}`);
    if (id === undefined) throw new Error(`dashboard "bench ${d}" is not in Superset after the import`);
    out.push({ id, charts: (await client.dashboards.charts(id)).map((c) => c.id).sort((a, b) => a - b) });
  }
  return out;
}
