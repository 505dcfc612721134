/**
 * The preview: Superset compiles the dataset's query with the snapshot (chart data API,
 * `result_type: query`: Jinja rendered with the filters and url params, the filter context as
 * WHERE clauses), then SQL Lab runs that SQL with a row limit and counts its rows, so the answer
 * is what the same SQL gives in SQL Lab.
 */
import type { SessionDataset } from '../../db/dataset-review/sessions.ts';
import type { ExecutionSnapshot } from '../../lib/dataset-review/snapshot.ts';
import type { SupersetClient } from '../../lib/superset/client.ts';
import { SupersetApiError, SupersetNotFoundError, SupersetUnavailableError } from '../../lib/superset/errors.ts';

export const PREVIEW_ROWS = 20;

export interface Preview {
  status: 'succeeded' | 'failed';
  compiled_sql: string | null;
  columns: string[];
  rows: Array<Record<string, unknown>>;
  row_count: number | null;
  snapshot: ExecutionSnapshot;
  /** On failure: what failed (compile, run, count), Superset's reason, and which object was missing. */
  step?: string;
  error?: string | null;
  missing?: 'dataset' | 'database' | null;
  generated_at: string;
  at_version?: number;
}

export async function runPreview(client: SupersetClient, dataset: SessionDataset, columns: string[], snapshot: ExecutionSnapshot): Promise<Preview> {
  const base = { snapshot, generated_at: new Date().toISOString() };
  let step = 'compile';
  try {
    const compiled = await client.chartData({
      datasource: { id: dataset.id, type: 'table' },
      queries: [{ columns, filters: snapshot.filters, url_params: snapshot.template_params, extras: { where: '', having: '' }, orderby: [], row_limit: 100_000 }],
      result_type: 'query',
      force: true,
    });
    const sql = compiled.result?.[0]?.query;
    if (typeof sql !== 'string' || !sql.trim()) throw new Error('Superset compiled no SQL for the dataset');
    const clean = sql.trim().replace(/;+\s*$/, '');
    if (dataset.database_id === null) throw new Error('the dataset names no database');
    step = 'run';
    const rows = await client.executeSql({ databaseId: dataset.database_id, sql: clean, schema: dataset.schema, catalog: dataset.catalog, limit: PREVIEW_ROWS });
    step = 'count';
    const counted = await client.executeSql({
      databaseId: dataset.database_id,
      sql: `SELECT COUNT(*) AS row_count FROM (${clean}) AS review_preview`,
      schema: dataset.schema,
      catalog: dataset.catalog,
      limit: 1,
    });
    const n = Number(Object.values(counted.rows[0] ?? {})[0]);
    return { ...base, status: 'succeeded', compiled_sql: clean, columns: rows.columns, rows: rows.rows, row_count: Number.isFinite(n) ? n : null, error: null, missing: null };
  } catch (err) {
    if (err instanceof SupersetUnavailableError && err.reason !== 'server_error') throw err;
    const missing = err instanceof SupersetNotFoundError ? (step === 'compile' ? 'dataset' : 'database') : null;
    const reason =
      err instanceof SupersetApiError
        ? err.upstreamMessage
        : err instanceof SupersetUnavailableError
          ? (err.upstreamMessage ?? err.message)
          : err instanceof Error
            ? err.message
            : String(err);
    return {
      ...base,
      status: 'failed',
      compiled_sql: null,
      columns: [],
      rows: [],
      row_count: null,
      step,
      missing,
      error: missing === 'dataset' ? `dataset ${dataset.id} not found in Superset (${reason})` : reason,
    };
  }
}
