/**
 * The impact a write shows before it is confirmed (a dataset change waiting for approval, a
 * column-mapping task, a dataset review's preview before its launch): what uses the dataset here,
 * in short. A Superset that cannot answer leaves the preview with its reason, never without a word:
 * the write itself is still decided by its own route.
 */
import { AppError } from '../../lib/errors.ts';
import type { AppContext } from '../context.ts';
import type { EnvironmentImpact } from './service.ts';

type Named = { id: number; name: string };

export interface ImpactPreview {
  env_id: string;
  dataset_id: number;
  checked_at: string;
  charts: Named[];
  dashboards: Named[];
  reports: Named[];
  saved_queries: Named[];
  virtual_datasets: Named[];
  /** Kinds Superset did not list and SQL no parser read: the lists above may miss some. */
  incomplete: string[];
  /** Set when the impact could not be read at all (the Superset's reason). */
  error: string | null;
  /** The full answer, here and in the environments migrated to. */
  request: { method: 'GET'; path: string };
}

const named = (xs: Named[]) => xs.map((x) => ({ id: x.id, name: x.name }));

function short(envId: string, datasetId: number, a: EnvironmentImpact, path: string): ImpactPreview {
  return {
    env_id: envId,
    dataset_id: datasetId,
    request: { method: 'GET', path },
    checked_at: a.checked_at,
    charts: named(a.charts),
    dashboards: named(a.dashboards),
    reports: named(a.reports),
    saved_queries: named(a.saved_queries),
    virtual_datasets: named(a.datasets.filter((d) => d.kind === 'virtual' && d.id !== datasetId)),
    incomplete: [
      ...a.unreadable.map((u) => `${u.kind} not read: ${u.message}`),
      ...a.unparsed.map((u) => `${u.kind} ${u.id} not parsed: ${u.reason}`),
    ],
    error: null,
  };
}

function failed(envId: string, datasetId: number, path: string, err: unknown): ImpactPreview {
  // The environment's Superset is unavailable (503) or the dataset is gone (404): said, not thrown; the write decides on its own.
  if (!(err instanceof AppError) || err.status < 404) throw err;
  const empty = { charts: [], dashboards: [], reports: [], saved_queries: [], virtual_datasets: [], incomplete: [] };
  return {
    env_id: envId,
    dataset_id: datasetId,
    request: { method: 'GET', path },
    checked_at: new Date().toISOString(),
    ...empty,
    error: err.message,
  };
}

const pathOf = (envId: string, datasetId: number, column?: string) =>
  `/api/environments/${encodeURIComponent(envId)}/impact?dataset=${datasetId}${column ? `&column=${encodeURIComponent(column)}` : ''}`;

/** What uses each dataset in `envId`, in short, from one read of the environment. */
export async function impactPreviews(app: Pick<AppContext, 'impact'>, envId: string, datasetIds: number[]): Promise<ImpactPreview[]> {
  try {
    const all = await app.impact.hereEach(envId, datasetIds);
    return all.map((a, i) => short(envId, datasetIds[i]!, a, pathOf(envId, datasetIds[i]!)));
  } catch (err) {
    return datasetIds.map((id) => failed(envId, id, pathOf(envId, id), err));
  }
}

/** What uses the dataset (and its `column`, when given) in `envId`, in short. */
export async function impactPreview(
  app: Pick<AppContext, 'impact'>,
  envId: string,
  datasetId: number,
  column?: string,
): Promise<ImpactPreview> {
  const path = pathOf(envId, datasetId, column);
  try {
    const a = await app.impact.here(envId, column ? { dataset: datasetId, column } : { dataset: datasetId });
    return short(envId, datasetId, a, path);
  } catch (err) {
    return failed(envId, datasetId, path, err);
  }
}
