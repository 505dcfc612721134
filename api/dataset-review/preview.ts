/**
 * The preview: Superset compiles the dataset's query with the snapshot (chart data API,
 * `result_type: query`: Jinja rendered with the filters and url params, the filter context as
 * WHERE clauses), then SQL Lab runs that SQL with a row limit and counts its rows, so the answer
 * is what the same SQL gives in SQL Lab.
 *
 * The values a person typed reach Superset as filter clauses (bound by Superset in the dialect's
 * rules) and as url params (Superset's url_param() quotes a string by the dialect's rules; a
 * number or boolean is sent as its string so it is quoted too). A template can still paste a value
 * (`filter_values()` joined by hand, `url_param(..., escape_result=False)`), so the query is also
 * compiled with neutral stand-ins for every typed value: unless both compilations have the same
 * shape (the parse tree with constants left out, lib/sql), a value changed the query itself and
 * nothing runs. What runs is only what lib/sql accepts as one read-only SELECT for the database's
 * dialect (its rendering, which also keeps Superset's second Jinja pass in SQL Lab from reading a
 * typed `{{ … }}`), and the row count wraps only that.
 */
import type { SessionDataset } from '../../db/dataset-review/sessions.ts';
import { ForbiddenError } from '../../lib/errors.ts';
import type { FilterClause } from '../../lib/dataset-review/filters.ts';
import type { ExecutionSnapshot } from '../../lib/dataset-review/snapshot.ts';
import { checkReadOnlyQuery, queryShape } from '../../lib/sql/read-only.ts';
import type { SupersetClient } from '../../lib/superset/client.ts';
import { SupersetApiError, SupersetNotFoundError, SupersetUnavailableError } from '../../lib/superset/errors.ts';
import type { Principal } from '../auth/principal.ts';
import { maySeeDatasetRows } from '../datasets/data-access.ts';

export const PREVIEW_ROWS = 20;

export interface Preview {
  status: 'succeeded' | 'failed';
  compiled_sql: string | null;
  columns: string[];
  rows: Array<Record<string, unknown>>;
  row_count: number | null;
  snapshot: ExecutionSnapshot;
  /** On failure: what failed (compile, check, run, count), Superset's or the check's reason, and which object was missing. */
  step?: string;
  error?: string | null;
  missing?: 'dataset' | 'database' | null;
  generated_at: string;
  at_version?: number;
  /** Set when the rows are left out for a reader who may not see the dataset's data. */
  rows_hidden?: boolean;
}

/** Filter operators whose values a template can read back (filter_values, get_filters); the rest Superset parses itself. */
const READABLE_OPS = new Set(['==', '!=', 'IN', 'NOT IN', 'LIKE', 'ILIKE', 'NOT LIKE', '>', '<', '>=', '<=']);
const NUMERIC = /^-?\d+(\.\d+)?$/;

/** A neutral value of the same kind: no quote, comment or operator a template could paste. */
function standIn(v: unknown, n: { i: number }): unknown {
  if (Array.isArray(v)) return v.map((x) => standIn(x, n));
  if (typeof v === 'number') return v < 0 ? -1 : 1;
  if (typeof v === 'string') return v === '' ? '' : NUMERIC.test(v) ? v.replace(/\d/g, '1') : `sy${n.i++}`;
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, standIn(x, n)]));
  return v;
}

/** Url params as url_param() reads them: scalars as strings, which it quotes by the dialect's rules. */
function urlParams(params: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(params).map(([k, v]) => [k, typeof v === 'number' || typeof v === 'boolean' ? String(v) : v]));
}

function neutral(snapshot: ExecutionSnapshot): ExecutionSnapshot {
  const n = { i: 0 };
  return {
    ...snapshot,
    filters: snapshot.filters.map((f: FilterClause) =>
      READABLE_OPS.has(String(f.op).toUpperCase()) ? { ...f, val: standIn(f.val, n) } : f,
    ),
    template_params: Object.fromEntries(Object.entries(urlParams(snapshot.template_params)).map(([k, v]) => [k, standIn(v, n)])),
  };
}

async function compile(client: SupersetClient, dataset: SessionDataset, columns: string[], snapshot: ExecutionSnapshot): Promise<string> {
  const compiled = await client.charts.data({
    datasource: { id: dataset.id, type: 'table' },
    queries: [
      {
        columns,
        filters: snapshot.filters,
        url_params: urlParams(snapshot.template_params),
        extras: { where: '', having: '' },
        orderby: [],
        row_limit: 100_000,
      },
    ],
    result_type: 'query',
    force: true,
  });
  const sql = compiled.result?.[0]?.query;
  if (typeof sql !== 'string' || !sql.trim()) throw new Error('Superset compiled no SQL for the dataset');
  return sql;
}

class PreviewRefused extends Error {
  override name = 'PreviewRefused';
}

/** The SQL to run: the compiled query as lib/sql accepts it, provided the typed values changed only constants. */
async function checkedSql(
  client: SupersetClient,
  dataset: SessionDataset,
  columns: string[],
  snapshot: ExecutionSnapshot,
  backend: string | null,
): Promise<string> {
  const [sql, reference] = await Promise.all([
    compile(client, dataset, columns, snapshot),
    compile(client, dataset, columns, neutral(snapshot)),
  ]);
  const verdict = await checkReadOnlyQuery(sql, backend);
  if (!verdict.ok) throw new PreviewRefused(`the compiled query ${verdict.reason}; nothing was run`);
  const ref = await checkReadOnlyQuery(reference, backend);
  if (!ref.ok || (await queryShape(verdict.sql, verdict.dialect)) !== (await queryShape(ref.sql, ref.dialect))) {
    throw new PreviewRefused(
      "a filter or variable value changes the query itself, not only its constants: the dataset's template pastes it into the SQL instead of quoting it (use url_param() with its escaping, or filter_values(...)|where_in); nothing was run",
    );
  }
  return verdict.sql;
}

export async function runPreview(
  client: SupersetClient,
  dataset: SessionDataset,
  columns: string[],
  snapshot: ExecutionSnapshot,
): Promise<Preview> {
  const base = { snapshot, generated_at: new Date().toISOString() };
  let step = 'compile';
  let databaseMissing = false;
  try {
    if (dataset.database_id === null) throw new Error('the dataset names no database');
    // The database's engine names the dialect the compiled SQL is checked in.
    const database = await client.databases.find(dataset.database_id);
    databaseMissing = !database;
    if (!database) throw new Error(`database ${dataset.database_id} not found in Superset`);
    const backend = database.backend;
    const sql = await checkedSql(client, dataset, columns, snapshot, backend ?? null);
    const target = { databaseId: dataset.database_id, schema: dataset.schema, catalog: dataset.catalog };
    step = 'run';
    const rows = await client.sqlLab.execute({ ...target, sql, limit: PREVIEW_ROWS });
    step = 'count';
    const count = await checkReadOnlyQuery(`SELECT COUNT(*) AS row_count FROM (${sql}) AS review_preview`, backend);
    if (!count.ok) throw new PreviewRefused(`the row count ${count.reason}`);
    const counted = await client.sqlLab.execute({ ...target, sql: count.sql, limit: 1 });
    const n = Number(Object.values(counted.rows[0] ?? {})[0]);
    return {
      ...base,
      status: 'succeeded',
      compiled_sql: sql,
      columns: rows.columns,
      rows: rows.rows,
      row_count: Number.isFinite(n) ? n : null,
      error: null,
      missing: null,
    };
  } catch (err) {
    if (err instanceof SupersetUnavailableError && err.reason !== 'server_error') throw err;
    const missing = databaseMissing
      ? 'database'
      : err instanceof SupersetNotFoundError
        ? step === 'compile'
          ? 'dataset'
          : 'database'
        : null;
    const reason = previewFailureReason(err);
    return {
      ...base,
      status: 'failed',
      compiled_sql: null,
      columns: [],
      rows: [],
      row_count: null,
      step: err instanceof PreviewRefused ? 'check' : step,
      missing,
      error: missing === 'dataset' ? `dataset ${dataset.id} not found in Superset (${reason})` : reason,
    };
  }
}

/** The session, when `p` may preview it: a preview shows the dataset's rows, read as the service account (403 otherwise). */
export function mayPreview<T extends { env_id: string }>(p: Principal, session: T): T {
  if (!maySeeDatasetRows(p, session.env_id))
    throw new ForbiddenError("A preview shows the dataset's rows: it needs the permission datasets:READ");
  return session;
}

/** A session's stored preview as `p` may read it: without the rows for a reader who may not see the dataset's data. */
export function previewForReader(
  p: Principal,
  session: { env_id: string; preview: Record<string, unknown> | null },
): Record<string, unknown> | null {
  const preview = session.preview;
  if (!preview || !Array.isArray(preview.rows) || maySeeDatasetRows(p, session.env_id)) return preview;
  return { ...preview, rows: [], rows_hidden: true };
}

/** Superset's own message for a failed preview step, else the error's. */
function previewFailureReason(err: unknown): string {
  if (err instanceof SupersetApiError) return err.upstreamMessage;
  if (err instanceof SupersetUnavailableError) return err.upstreamMessage ?? err.message;
  return err instanceof Error ? err.message : String(err);
}
