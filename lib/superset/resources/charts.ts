/** Charts: the list, one chart, and the chart-data API (a chart's queries, run by Superset). */
import type { Pager } from '../transport/paging.ts';
import { seg } from '../transport/paths.ts';
import type { SupersetTransport } from '../transport/transport.ts';
import { ChartData } from './chart-data.ts';
import type { ChartDataQueryContext, ChartDataResponse, ChartListItem, ListQuery, ListResponse } from '../types.ts';

export interface ChartDetail {
  id: number;
  slice_name?: string | null;
  datasource_id?: number | null;
  datasource_type?: string | null;
  [key: string]: unknown;
}

/** What the legacy explore endpoint answers for a chart (superset/viz.py's payload). */
export interface LegacyChartPayload {
  status?: string;
  error?: string | null;
  colnames?: unknown;
  coltypes?: unknown;
  rowcount?: number;
  job_id?: string;
  [key: string]: unknown;
}

export class Charts {
  private readonly http: SupersetTransport;
  private readonly pager: Pager;
  private readonly chartData: ChartData;

  constructor(http: SupersetTransport, pager: Pager, chartData: ChartData = new ChartData(http)) {
    this.http = http;
    this.pager = pager;
    this.chartData = chartData;
  }

  list(query: ListQuery = {}): Promise<ListResponse<ChartListItem>> {
    return this.pager.page<ChartListItem>('chart', query);
  }

  /** `GET /api/v1/chart/{id}`: the chart with its datasource (`datasource_id`, `datasource_type`). */
  async get(id: number): Promise<ChartDetail> {
    return (await this.http.getJson<{ result: ChartDetail }>(`/api/v1/chart/${seg(id)}`)).result;
  }

  /**
   * `GET /superset/explore_json/?form_data={"slice_id":…}`: the chart run the way a legacy-API
   * visualisation renders (deck.gl layers, the legacy charts), from the form_data Superset has
   * saved for it. The payload's `status`, `error`, `colnames` and `rowcount` tell how it went.
   * The endpoint takes only a session from Superset's login form, not the API's token: the
   * transport signs in through it on the first call (../transport/legacy-session.ts), and a
   * Superset without that form fails this with SupersetLegacySignInError. With
   * GLOBAL_ASYNC_QUERIES an uncached chart is answered 202 with a job (`job_id`), not followed.
   */
  async legacyData(id: number): Promise<LegacyChartPayload> {
    const spec = {
      method: 'GET' as const,
      path: '/superset/explore_json/',
      query: { form_data: JSON.stringify({ slice_id: id }) },
      legacy: true,
    };
    return this.http.call(spec, (res) => this.http.parseJson<LegacyChartPayload>(res, spec));
  }

  /**
   * `POST /api/v1/chart/data` with a query context (CSRF-exempt in Superset). Charts saved through
   * the API often have no saved query context, so callers build one from the chart's params.
   * Answered at once or, with GLOBAL_ASYNC_QUERIES, through its job (./chart-data.ts): either way
   * the caller gets `result`, one answer per query.
   */
  data(queryContext: ChartDataQueryContext): Promise<ChartDataResponse> {
    return this.chartData.run(queryContext);
  }
}
