/**
 * The chart check over the project's Superset client: a dashboard's charts as the check reads
 * them, a query context run through the chart-data API, a chart run through the legacy explore
 * endpoint. Superset's refusal is the chart's failure; no answer (an outage or a gateway error the
 * transport's retries did not get past, an asynchronous answer) leaves it not verifiable.
 */
import type { SupersetClient } from '../../../lib/superset/client.ts';
import { formDataDatasource, type DashboardChart } from '../../../lib/superset/types.ts';
import {
  SupersetApiError,
  SupersetLegacySignInError,
  SupersetNotFoundError,
  SupersetUnavailableError,
} from '../../../lib/superset/errors.ts';
import { parseSaved, type ExportedChart } from './exported.ts';
import type { ChartAnswer, ChartForCheck } from './types.ts';

/** Charts whose details are read at once. */
const DETAIL_PARALLELISM = 4;

/**
 * A dashboard's charts with their uuids and saved query contexts (404 when the dashboard is not
 * there). A chart the caller already knows from this environment's own export (`exported`: its
 * uuid, viz type and saved query context as the export wrote them) is not read again; every other
 * chart's detail is read. From 6.0 a detail carries the uuid, so the list of the dashboard's chart
 * uuids (one of the slowest reads Superset answers) is asked only of a release whose details lack
 * it (4.1, 5.0).
 */
export async function chartsForCheck(
  client: SupersetClient,
  dashboardId: number,
  /** The dashboard's chart list (`/dashboard/{id}/charts`) as the caller already read it in this environment. */
  listed?: Promise<DashboardChart[]>,
  exported?: ReadonlyMap<number, ExportedChart>,
): Promise<ChartForCheck[]> {
  const charts = await (listed ?? client.dashboards.charts(dashboardId));
  const toRead = charts.filter((c) => !exported?.has(c.id));
  const details = new Map<number, Awaited<ReturnType<SupersetClient['charts']['get']>> | null>();
  let next = 0;
  const lane = async () => {
    while (next < toRead.length) {
      const id = toRead[next++]!.id;
      details.set(
        id,
        await client.charts.get(id).catch((err: unknown) => {
          if (err instanceof SupersetNotFoundError) return null;
          throw err;
        }),
      );
    }
  };
  await Promise.all(Array.from({ length: Math.min(DETAIL_PARALLELISM, toRead.length) }, lane));
  const uuidOf = (id: number) => exported?.get(id)?.uuid ?? details.get(id)?.uuid;
  const uuids = charts.every((c) => typeof uuidOf(c.id) === 'string' && uuidOf(c.id)) ? null : await listedUuids(client, dashboardId);
  return charts.map((c) => {
    const fd = (c.form_data ?? {}) as Record<string, unknown>;
    const known = exported?.get(c.id);
    if (known)
      return {
        id: c.id,
        uuid: known.uuid,
        name: c.slice_name ?? String(c.id),
        viz_type: known.viz_type,
        form_data: fd,
        datasource: formDataDatasource(fd),
        query_context: known.query_context,
      };
    const detail = details.get(c.id);
    const dsId = Number(detail?.datasource_id ?? formDataDatasource(fd)?.id);
    return {
      id: c.id,
      uuid: uuids ? (uuids.get(c.id) ?? null) : String(detail!.uuid),
      name: c.slice_name ?? String(c.id),
      viz_type: String(detail?.viz_type ?? fd.viz_type ?? ''),
      form_data: fd,
      datasource: Number.isInteger(dsId) && dsId > 0 ? { id: dsId, type: String(detail?.datasource_type ?? 'table') } : null,
      query_context: parseSaved(detail?.query_context),
    };
  });
}

/** The dashboard's charts' uuids by id, from the chart list (where a release's chart details carry none). */
async function listedUuids(client: SupersetClient, dashboardId: number): Promise<Map<number, string | null>> {
  const listed = await client.lists.all<{ id: number; uuid?: string }>('chart', {
    columns: ['id', 'uuid'],
    filters: [{ col: 'dashboards', opr: 'rel_m_m', value: dashboardId }],
  });
  return new Map(listed.map((c) => [c.id, c.uuid ? String(c.uuid) : null]));
}

/** `POST /api/v1/chart/data` with a chart's query context: every query's answer must be a success. */
export async function runQueryContext(client: SupersetClient, queryContext: Record<string, unknown>): Promise<ChartAnswer> {
  try {
    const res = await client.charts.data({ ...queryContext, result_format: 'json', result_type: 'full' } as never);
    if (!Array.isArray(res?.result)) return { unverifiable: 'Superset answered the chart-data request asynchronously (no result to read)' };
    return answerOfResults(res.result);
  } catch (err) {
    return answerOfError(err, 'chart-data');
  }
}

/**
 * Charts' query contexts on one dataset in one chart-data call, their queries in order: each
 * chart's answer from its own queries' results, exactly as runQueryContext reads them. Superset
 * answers a call with a failing query by refusing all of it, and any other surprise is not read
 * either: null, and each chart is asked alone (so a failure keeps its own message).
 */
export async function runQueryContexts(
  client: SupersetClient,
  queryContexts: Array<Record<string, unknown>>,
): Promise<ChartAnswer[] | null> {
  const counts = queryContexts.map((q) => (Array.isArray(q.queries) ? q.queries.length : 0));
  if (!queryContexts.length || counts.includes(0)) return null;
  const combined = {
    ...queryContexts[0],
    queries: queryContexts.flatMap((q) => q.queries as unknown[]),
    result_format: 'json',
    result_type: 'full',
  };
  let results: ChartDataResult[];
  try {
    const res = await client.charts.data(combined as never);
    if (!Array.isArray(res?.result) || res.result.length !== counts.reduce((a, b) => a + b, 0)) return null;
    results = res.result;
  } catch {
    // expected: a joint call that fails is not read: each chart is asked alone and keeps its own message (see the doc above).
    return null;
  }
  if (results.some(failedResult)) return null;
  let at = 0;
  return counts.map((n) => answerOfResults(results.slice(at, (at += n))));
}

type ChartDataResult = { error?: unknown; status?: unknown; colnames?: string[]; coltypes?: number[]; rowcount?: number; data?: unknown[] };

const failedResult = (r: ChartDataResult) => Boolean(r.error || (r.status && r.status !== 'success'));

/** A chart's answer from its queries' results: the first failure, or the first query's columns. */
function answerOfResults(results: ChartDataResult[]): ChartAnswer {
  const failed = results.find(failedResult);
  if (failed) return { ok: false, error: String(failed.error ?? failed.status) };
  const first = results[0];
  const colnames = first?.colnames ?? [];
  return {
    ok: true,
    rows: Number(first?.rowcount ?? first?.data?.length ?? 0),
    columns: colnames.map((name, i) => ({ name, type: first?.coltypes?.[i] ?? null })),
  };
}

/** `GET /superset/explore_json/` with the chart's saved form_data (Superset reads it by slice_id), as a legacy-API plugin renders. */
export async function runLegacyChart(client: SupersetClient, chartId: number): Promise<ChartAnswer> {
  try {
    const payload = await client.charts.legacyData(chartId);
    if (payload.status === 'failed' || payload.error) return { ok: false, error: String(payload.error ?? 'failed') };
    if (payload.job_id && !('data' in payload))
      return {
        unverifiable:
          'Superset answered the legacy explore request asynchronously (GLOBAL_ASYNC_QUERIES started a job; its result is not followed)',
      };
    const colnames = Array.isArray(payload.colnames) ? (payload.colnames as unknown[]).map(String) : [];
    const coltypes = Array.isArray(payload.coltypes) ? (payload.coltypes as unknown[]) : [];
    return {
      ok: true,
      rows: Number(payload.rowcount ?? 0),
      columns: colnames.map((name, i) => ({ name, type: typeof coltypes[i] === 'number' ? (coltypes[i] as number) : null })),
    };
  } catch (err) {
    // The endpoint needs a sign-in through Superset's login form, which this Superset does not offer (SSO only) or refused.
    if (err instanceof SupersetLegacySignInError)
      return { unverifiable: `the legacy explore endpoint needs a sign-in through Superset's login form: ${err.upstreamMessage}` };
    // The client sends only the paths its transport allows (lib/superset/transport/paths.ts); until that admits the legacy endpoint, no answer.
    if (err instanceof TypeError && /not a Superset API path/.test(err.message))
      return {
        unverifiable: "the legacy explore endpoint (/superset/explore_json/) is outside the paths Switchyard's Superset client may call",
      };
    if (err instanceof SupersetNotFoundError)
      return { unverifiable: 'this Superset release has no legacy explore endpoint (/superset/explore_json/ answered 404)' };
    if (err instanceof SupersetApiError && err.upstreamStatus !== 400 && err.upstreamStatus !== 422)
      return { unverifiable: `the legacy explore endpoint refused the request (${err.upstreamStatus}): ${err.upstreamMessage}` };
    return answerOfError(err, 'legacy explore');
  }
}

/** A refusal is the chart's failure; no answer leaves it not verifiable; anything else (a login refused) is thrown. */
function answerOfError(err: unknown, what: string): ChartAnswer {
  if (err instanceof SupersetUnavailableError)
    return {
      unverifiable: `Superset did not answer the ${what} request (${err.reason}${err.upstreamStatus ? ` ${err.upstreamStatus}` : ''}): ${err.message}`,
    };
  if (err instanceof SupersetApiError && !isAccessError(err)) return { ok: false, error: err.upstreamMessage };
  throw err;
}

function isAccessError(err: SupersetApiError): boolean {
  return err.upstreamStatus === 401 || err.name === 'SupersetAuthError' || err.name === 'SupersetForbiddenError';
}
