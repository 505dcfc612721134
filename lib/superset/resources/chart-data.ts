/**
 * The one chart-data path: `POST /api/v1/chart/data`, answered at once (200) or, on an instance
 * with GLOBAL_ASYNC_QUERIES, with 202 and a job (`job_id`, `channel_id`, `result_url`). A job is
 * followed through Superset's async event API (`GET /api/v1/async_event/?last_id=`, the polling
 * transport) until its event says `done` (then its result is read from the event's `result_url`)
 * or `error` (the job's own error becomes the failure, a SupersetQueryError). Waits are bounded
 * (the sum of the pauses between polls, on the transport's injected clock). Every answer is
 * checked for the shape callers read (`result`: a list): anything else is an "unexpected answer"
 * naming the endpoint and status, never a TypeError in a caller.
 */
import { normaliseErrorBody, SupersetNotFoundError, SupersetQueryError, SupersetUnavailableError } from '../errors.ts';
import { DEFAULT_ASYNC_WAIT, type AsyncQueryWait } from '../transport/options.ts';
import type { SupersetTransport } from '../transport/transport.ts';
import type { CallSpec, WireResponse } from '../transport/wire.ts';
import type { ChartDataQueryContext, ChartDataResponse } from '../types.ts';

const DATA = '/api/v1/chart/data';
const EVENTS = '/api/v1/async_event/';
const RESULT_PATH = /^\/api\/v1\/chart\/data\/[A-Za-z0-9_-]{1,255}$/;

/** A job as Superset's 202 and its events describe it (async_query_manager.build_job_metadata). */
interface AsyncJob {
  id?: string;
  job_id: string;
  channel_id: string;
  status?: string;
  errors?: Array<{ message?: string; error_type?: string }>;
  result_url?: string | null;
}

/** A job is re-submitted at most this often when its events went to a channel this client cannot read. */
const MAX_RESUBMITS = 2;

export class ChartData {
  private readonly http: SupersetTransport;
  private readonly wait: AsyncQueryWait;
  /** The newest event id any poll of this client saw: a new job's events all come after it. */
  private cursor?: string;

  constructor(http: SupersetTransport, wait: Partial<AsyncQueryWait> = {}) {
    this.http = http;
    this.wait = { ...DEFAULT_ASYNC_WAIT, ...wait };
  }

  async run(queryContext: ChartDataQueryContext): Promise<ChartDataResponse> {
    const spec: CallSpec = {
      method: 'POST',
      path: DATA,
      json: { result_format: 'json', result_type: 'full', ...queryContext },
      // A POST that only reads: asked again, like a GET, when a gateway answers instead of Superset.
      idempotent: true,
      pass: [202],
    };
    for (let submit = 0; ; submit++) {
      const from = this.cursor; // captured before the job exists: its events all come later
      const answer = await this.http.call(spec, (res) => this.answerOf(res, spec));
      if ('result' in answer) return answer;
      // The job's events go to the channel of the async token Superset set; a token renewed since
      // (the first call of a new session) points elsewhere: submit again on the settled channel.
      const channel = this.http.session.asyncChannel();
      if (channel && channel !== answer.channel_id && submit < MAX_RESUBMITS) continue;
      return this.follow(answer, from);
    }
  }

  /** A 200's result list, or a 202's job; anything else is an unexpected answer. */
  private answerOf(res: WireResponse, spec: CallSpec): ChartDataResponse | AsyncJob {
    const body = this.http.parseJson<Record<string, unknown>>(res, spec);
    if (res.status === 202) {
      if (typeof body.job_id === 'string' && typeof body.channel_id === 'string') return body as unknown as AsyncJob;
      throw unexpected(res.status, DATA, 'a 202 without a job_id and channel_id');
    }
    return checkedResult(body, res.status, DATA);
  }

  /** Polls the job's events until it is done (its result read) or failed (its error thrown), within the bound. */
  private async follow(job: AsyncJob, from: string | undefined): Promise<ChartDataResponse> {
    let lastId = from;
    let waited = 0;
    let pause = this.wait.firstPollMs;
    for (;;) {
      const events = await this.events(lastId);
      if (events.length) lastId = events[events.length - 1].id ?? lastId;
      const mine = events.filter((e) => e.job_id === job.job_id && (e.status === 'done' || e.status === 'error')).pop();
      if (mine?.status === 'error') throw queryError(job, mine);
      if (mine) return this.result(job, mine);
      if (events.length >= 100) continue; // a full batch: more are waiting, read them now
      if (waited >= this.wait.maxWaitMs) {
        throw new SupersetUnavailableError(
          'timeout',
          `Superset at ${this.http.host} did not finish asynchronous chart-data job ${job.job_id} within ${Math.round(this.wait.maxWaitMs / 1000)} s (its Celery workers may be busy or stopped)`,
          { method: 'GET', path: EVENTS },
        );
      }
      const step = Math.min(pause, this.wait.maxWaitMs - waited);
      await this.http.pause(step);
      waited += step;
      pause = Math.min(this.wait.maxPollMs, Math.round(pause * 1.5));
    }
  }

  /** `GET /api/v1/async_event/?last_id=`: the channel's events after `lastId` (at most 100 at a time). */
  private async events(lastId: string | undefined): Promise<AsyncJob[]> {
    const body = await this.http.getJson<{ result?: unknown }>(EVENTS, lastId ? { query: { last_id: lastId } } : {});
    if (!Array.isArray(body.result)) throw unexpected(200, EVENTS, 'no result list');
    const events = body.result.filter((e): e is AsyncJob => !!e && typeof e === 'object' && typeof (e as AsyncJob).job_id === 'string');
    const newest = events[events.length - 1]?.id;
    if (newest && (!this.cursor || compareIds(newest, this.cursor) > 0)) this.cursor = newest;
    return events;
  }

  /** The finished job's result, from the event's `result_url` on this instance. */
  private async result(job: AsyncJob, event: AsyncJob): Promise<ChartDataResponse> {
    const url = String(event.result_url ?? '');
    const path = RESULT_PATH.test(url) ? url : this.http.sameOriginPath(url, RESULT_PATH);
    if (!path) throw unexpected(200, EVENTS, `a done event for job ${job.job_id} without a result URL on this instance`);
    try {
      const body = await this.http.getJson<Record<string, unknown>>(path);
      return checkedResult(body, 200, '/api/v1/chart/data/{cache_key}');
    } catch (err) {
      if (!(err instanceof SupersetNotFoundError)) throw err;
      throw new SupersetUnavailableError(
        'bad_response',
        `Superset at ${this.http.host} finished asynchronous chart-data job ${job.job_id}, but its result was no longer in the cache (${path} answered 404)`,
        { method: 'GET', path: '/api/v1/chart/data/{cache_key}', upstreamStatus: 404 },
      );
    }
  }
}

/** The answer callers read (`result`: a list of one answer per query), or an unexpected answer. */
function checkedResult(body: Record<string, unknown>, status: number, path: string): ChartDataResponse {
  if (!Array.isArray(body.result)) throw unexpected(status, path, 'no result list');
  return body as unknown as ChartDataResponse;
}

function unexpected(status: number, path: string, what: string): SupersetUnavailableError {
  return new SupersetUnavailableError('bad_response', `Superset gave an unexpected answer to ${path}: ${status} with ${what}`, {
    method: path === DATA ? 'POST' : 'GET',
    path,
    upstreamStatus: status,
  });
}

function queryError(job: AsyncJob, event: AsyncJob): SupersetQueryError {
  const { message, errorType } = normaliseErrorBody({ errors: event.errors ?? [] }, 'the job failed without a message');
  return new SupersetQueryError(job.job_id, message, event, errorType);
}

/** Redis stream ids ("1607477697866-0"): by time, then sequence. */
function compareIds(a: string, b: string): number {
  const [ta, sa] = a.split('-').map(Number);
  const [tb, sb] = b.split('-').map(Number);
  return ta !== tb ? ta - tb : (sa ?? 0) - (sb ?? 0);
}
