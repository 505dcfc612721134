/**
 * A dashboard as the companion kinds read it in one environment: its own owners, roles, tags,
 * certification and CSS, and the same of its charts and datasets, each found by uuid (ids differ
 * between environments). Read once per dashboard and phase, shared by every kind.
 */
import type { ObjectMeta } from '../../../lib/superset/resources/object-meta.ts';
import type { SupersetClient } from '../../../lib/superset/client.ts';
import { SupersetNotFoundError } from '../../../lib/superset/errors.ts';

export interface DashboardView {
  dashboard: ObjectMeta;
  charts: ObjectMeta[];
  datasets: ObjectMeta[];
}

/** Most objects of one dashboard read at a time. */
const READS_AT_ONCE = 4;

/**
 * Chart and dataset reads kept for more than one dashboard's view (a source's, during one
 * activity: a dataset several dashboards use is read once), by `<kind> <id>`.
 */
export type ObjectReads = Map<string, Promise<ObjectMeta>>;

/** The object's meta, read once per `kept` (each caller gets its own copy). */
function metaOf(client: SupersetClient, kind: 'chart' | 'dataset', id: number, kept?: ObjectReads): Promise<ObjectMeta> {
  if (!kept) return client.meta.get(kind, id);
  const key = `${kind} ${id}`;
  let hit = kept.get(key);
  if (!hit) {
    hit = client.meta.get(kind, id);
    hit.catch(() => kept.delete(key));
    kept.set(key, hit);
  }
  return hit.then((m) => structuredClone(m));
}

/** The dashboard (by id, slug or uuid) with its charts and datasets; null when the environment does not have it. */
export async function readView(client: SupersetClient, idOrUuid: number | string, kept?: ObjectReads): Promise<DashboardView | null> {
  let dashboard: ObjectMeta;
  try {
    const found = typeof idOrUuid === 'number' ? idOrUuid : (await client.dashboards.get(idOrUuid)).id;
    dashboard = await client.meta.get('dashboard', found);
  } catch (err) {
    if (err instanceof SupersetNotFoundError) return null;
    throw err;
  }
  const [charts, datasets] = await Promise.all([client.dashboards.charts(dashboard.id), client.dashboards.datasets(dashboard.id)]);
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
