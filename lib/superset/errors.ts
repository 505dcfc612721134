/**
 * What can go wrong when talking to a Superset, as typed errors, and the one classification of
 * them (`classifySupersetFailure`) that every caller follows: the client's own GET retries, the
 * API's 503 `reason`, and whether an activity lets Temporal retry or records the item as failed.
 * The errors extend the domain errors of lib/errors.ts, so the API's problem mapper renders them
 * without special cases.
 *
 *   SupersetUnavailableError  503 upstream_unavailable   network failure, timeout, 5xx, garbage body
 *   SupersetGatewayError      503 upstream_unavailable   a gateway's 502/503/504 or HTML page (transient)
 *   SupersetCircuitOpenError  503 upstream_unavailable   not sent: the environment's circuit is open
 *   SupersetNotFoundError     404 not_found              Superset answered 404
 *   SupersetAuthError         502 upstream_auth_failed   login refused, 401 after a fresh login, CSRF
 *   SupersetLegacySignInError 502 upstream_auth_failed   no sign-in through the /login/ form (SSO only,
 *                                                        no form, refused): legacy endpoint unusable
 *   SupersetForbiddenError    502 upstream_forbidden     the service account lacks a permission
 *   SupersetImportError       422 upstream_import_failed an import was refused; `files` maps each
 *                                                        bundle file to Superset's messages
 *   SupersetApiError          502 upstream_error         any other 4xx, with Superset's own message
 */
import { AppError, UpstreamUnavailableError, type FieldError } from '../errors.ts';

export type UnavailableReason = 'network' | 'timeout' | 'server_error' | 'bad_response' | 'too_large';

/** Statuses that mean "a proxy or the server is overloaded or restarting": worth asking again. */
const GATEWAY_STATUSES = new Set([502, 503, 504]);

export interface UpstreamContext {
  method: string;
  /** Path (with query) on the Superset instance; never carries credentials. */
  path: string;
  /** HTTP status Superset answered, when it answered at all. */
  upstreamStatus?: number;
}

export class SupersetUnavailableError extends UpstreamUnavailableError {
  override name = 'SupersetUnavailableError';
  readonly reason: UnavailableReason;
  readonly upstreamStatus?: number;
  /** Superset's own message, when it answered with one (a 5xx body). */
  readonly upstreamMessage?: string;
  readonly method: string;
  readonly path: string;
  constructor(reason: UnavailableReason, detail: string, ctx: UpstreamContext & { upstreamMessage?: string }, cause?: unknown) {
    super('Superset', detail, cause);
    this.reason = reason;
    this.upstreamStatus = ctx.upstreamStatus;
    this.upstreamMessage = ctx.upstreamMessage;
    this.method = ctx.method;
    this.path = ctx.path;
    Object.assign(this.extra ?? {}, { reason, ...(ctx.upstreamStatus ? { upstream_status: ctx.upstreamStatus } : {}) });
  }
}

/**
 * The environment's circuit is open (transport/circuit.ts): the instance failed at the
 * connection recently, so this exchange was not sent. Carries the fault that opened it, when it
 * was seen, and when one exchange will be let through again. Not retryable by the client: asking
 * again before `retryAt` is refused the same way.
 */
export class SupersetCircuitOpenError extends SupersetUnavailableError {
  override name = 'SupersetCircuitOpenError';
  readonly fault: SupersetUnavailableError;
  readonly checkedAt: Date;
  readonly retryAt: Date;
  constructor(host: string, fault: SupersetUnavailableError, checkedAt: Date, retryAt: Date, ctx: UpstreamContext) {
    super(
      fault.reason,
      `Superset at ${host} is unreachable: ${withoutHost(host, fault.message)}; checked at ${checkedAt.toISOString()}`,
      ctx,
      fault,
    );
    this.fault = fault;
    this.checkedAt = checkedAt;
    this.retryAt = retryAt;
    Object.assign(this.extra ?? {}, { circuit: 'open', checked_at: checkedAt.toISOString(), retry_at: retryAt.toISOString() });
  }
}

/** What a gateway in front of Superset answered (see transport/gateway.ts). */
export interface GatewayAnswer {
  /** The answering server's product name ("nginx"), when it said. */
  server?: string;
  status: number;
  /** The page's <title> or <h1>, when it had one. */
  title?: string;
  /** How long the answer took. */
  elapsedMs?: number;
  /** In words: "nginx answered 504 Gateway Time-out after 60 s". */
  answer: string;
}

/**
 * A gateway (nginx, a load balancer) answered instead of Superset: a 502/503/504 without
 * Superset's JSON, or an HTML page where JSON was expected. Transient: an idempotent call is
 * asked again (transport/retry.ts); thrown after the last attempt with `attempts` set, so a
 * caller can tell "the gateway still answered after retries" (a chart's verification: not
 * verifiable) from Superset's own failure.
 */
export class SupersetGatewayError extends SupersetUnavailableError {
  override name = 'SupersetGatewayError';
  readonly gateway: GatewayAnswer;
  /** Attempts made before giving up (1 when the call was not asked again). */
  readonly attempts: number;
  private readonly host: string;
  constructor(host: string, gateway: GatewayAnswer, ctx: UpstreamContext, attempts = 1) {
    const tries = attempts > 1 ? ` (${attempts} attempts)` : '';
    super(
      GATEWAY_STATUSES.has(gateway.status) ? 'server_error' : 'bad_response',
      `Superset at ${host} failed on ${ctx.method} ${stripQuery(ctx.path)}: ${gateway.answer}${tries}`,
      { ...ctx, upstreamStatus: gateway.status, upstreamMessage: gateway.answer },
    );
    this.gateway = gateway;
    this.attempts = attempts;
    this.host = host;
  }

  /** The same answer, after `attempts` attempts. */
  afterAttempts(attempts: number): SupersetGatewayError {
    return new SupersetGatewayError(this.host, this.gateway, { method: this.method, path: this.path }, attempts);
  }
}

/** Superset answered, and refused. `upstreamMessage` is Superset's own text (whichever of its error body formats it used). */
export class SupersetApiError extends AppError {
  override name = 'SupersetApiError';
  readonly upstreamStatus: number;
  readonly upstreamMessage: string;
  /** SIP-40 `error_type` when the body had one. */
  readonly errorType?: string;
  /** The parsed body (for `errors[].extra` and marshmallow trees). */
  readonly body: unknown;
  readonly method: string;
  readonly path: string;
  constructor(
    ctx: UpstreamContext & { upstreamStatus: number },
    upstreamMessage: string,
    body: unknown,
    opts: { status?: number; code?: string; title?: string; detail?: string; errorType?: string; errors?: FieldError[] } = {},
  ) {
    super(
      opts.status ?? 502,
      opts.code ?? 'upstream_error',
      opts.title ?? 'Superset refused the request',
      opts.detail ?? `Superset answered ${ctx.upstreamStatus} to ${ctx.method} ${stripQuery(ctx.path)}: ${upstreamMessage}`,
      {
        errors: opts.errors,
        extra: { upstream_status: ctx.upstreamStatus, ...(opts.errorType ? { upstream_error_type: opts.errorType } : {}) },
      },
    );
    this.upstreamStatus = ctx.upstreamStatus;
    this.upstreamMessage = upstreamMessage;
    this.errorType = opts.errorType;
    this.body = body;
    this.method = ctx.method;
    this.path = ctx.path;
  }
}

/**
 * An asynchronous chart-data job (GLOBAL_ASYNC_QUERIES) that Superset ran and that failed: its
 * own error (SIP-40 `errors` of the job's event) is the message, as a synchronous query's 400
 * would carry it. `upstreamStatus` is the 202 the job was accepted with.
 */
export class SupersetQueryError extends SupersetApiError {
  override name = 'SupersetQueryError';
  readonly jobId: string;
  constructor(jobId: string, upstreamMessage: string, body: unknown, errorType?: string) {
    super({ method: 'POST', path: '/api/v1/chart/data', upstreamStatus: 202 }, upstreamMessage, body, {
      errorType,
      detail: `Superset's asynchronous chart-data job ${jobId} failed: ${upstreamMessage}`,
    });
    this.jobId = jobId;
  }
}

export class SupersetNotFoundError extends SupersetApiError {
  override name = 'SupersetNotFoundError';
  constructor(ctx: UpstreamContext & { upstreamStatus: number }, upstreamMessage: string, body: unknown) {
    super(ctx, upstreamMessage, body, {
      status: 404,
      code: 'not_found',
      title: 'Not found',
      detail: `Superset has no ${describeTarget(ctx.path)} (${upstreamMessage})`,
    });
  }
}

export class SupersetAuthError extends SupersetApiError {
  override name = 'SupersetAuthError';
  constructor(ctx: UpstreamContext & { upstreamStatus: number }, upstreamMessage: string, body: unknown) {
    super(ctx, upstreamMessage, body, {
      code: 'upstream_auth_failed',
      title: 'Superset refused the credentials',
      detail: `Superset refused the environment's service account (${upstreamMessage})`,
    });
  }
}

/**
 * The legacy chart endpoint (`/superset/explore_json/`) takes only a Flask-Login session, got by
 * signing in through Superset's `/login/` form, and that sign-in is impossible here: the Superset
 * signs people in through OAuth, SAML or a proxy only, has no such form, or refused it. Not the
 * chart's fault: the chart check calls such a chart not verifiable, with this message.
 */
export class SupersetLegacySignInError extends SupersetApiError {
  override name = 'SupersetLegacySignInError';
  constructor(ctx: UpstreamContext & { upstreamStatus: number }, upstreamMessage: string) {
    super(ctx, upstreamMessage, undefined, {
      code: 'upstream_auth_failed',
      title: "Superset's login form could not be signed in through",
      detail: upstreamMessage,
    });
  }
}

export class SupersetForbiddenError extends SupersetApiError {
  override name = 'SupersetForbiddenError';
  constructor(ctx: UpstreamContext & { upstreamStatus: number }, upstreamMessage: string, body: unknown) {
    super(ctx, upstreamMessage, body, {
      code: 'upstream_forbidden',
      title: 'Superset forbids this',
      detail: `The environment's service account may not ${ctx.method} ${stripQuery(ctx.path)} (${upstreamMessage})`,
    });
  }
}

/**
 * An import Superset refused (422, or 400 for a bundle it could not read). `files` maps each
 * bundle path (root folder stripped) to Superset's message or marshmallow error tree.
 */
export class SupersetImportError extends SupersetApiError {
  override name = 'SupersetImportError';
  readonly files: Record<string, unknown>;
  constructor(ctx: UpstreamContext & { upstreamStatus: number }, upstreamMessage: string, body: unknown, files: Record<string, unknown>) {
    const errors = Object.entries(files).map(([field, v]) => ({ field, message: typeof v === 'string' ? v : JSON.stringify(v) }));
    super(ctx, upstreamMessage, body, {
      status: 422,
      code: 'upstream_import_failed',
      title: 'Superset refused the import',
      detail: `Superset refused the import: ${upstreamMessage}`,
      errors: errors.length ? errors : undefined,
    });
    this.files = files;
  }
}

export type SupersetFailureReason = UnavailableReason | 'not_found' | 'auth_failed' | 'forbidden' | 'import_refused' | 'refused';

/** What a failure talking to Superset means for whoever called. */
export interface SupersetFailure {
  reason: SupersetFailureReason;
  /**
   * True only for what goes away by itself: a network error, a timeout, 502/503/504, a gateway's
   * HTML page where JSON was expected. A 500 is
   * Superset failing on this request (an import it cannot do, say); asking again gives the same.
   */
  retryable: boolean;
  /** Superset's own answer, when it gave one. */
  upstream?: { status?: number; message: string; type?: string; files?: Record<string, unknown> };
}

/** The one classification of Superset failures; undefined for anything that is not one. */
export function classifySupersetFailure(err: unknown): SupersetFailure | undefined {
  if (err instanceof SupersetUnavailableError) {
    const retryable =
      !(err instanceof SupersetCircuitOpenError) &&
      (err instanceof SupersetGatewayError ||
        err.reason === 'network' ||
        err.reason === 'timeout' ||
        (err.reason === 'server_error' && err.upstreamStatus !== undefined && GATEWAY_STATUSES.has(err.upstreamStatus)));
    const answered = err.upstreamStatus !== undefined;
    return {
      reason: err.reason,
      retryable,
      ...(answered ? { upstream: { status: err.upstreamStatus, message: err.upstreamMessage ?? err.message } } : {}),
    };
  }
  if (err instanceof SupersetApiError) {
    const reason: SupersetFailureReason =
      err instanceof SupersetNotFoundError
        ? 'not_found'
        : err instanceof SupersetAuthError
          ? 'auth_failed'
          : err instanceof SupersetForbiddenError
            ? 'forbidden'
            : err instanceof SupersetImportError
              ? 'import_refused'
              : 'refused';
    const files = err instanceof SupersetImportError && Object.keys(err.files).length ? err.files : undefined;
    return {
      reason,
      retryable: false,
      upstream: {
        status: err.upstreamStatus,
        message: err.upstreamMessage,
        ...(err.errorType ? { type: err.errorType } : {}),
        ...(files ? { files } : {}),
      },
    };
  }
  return undefined;
}

/** A transport message without its own "Superset at host" lead, for a sentence that already names the host. */
function withoutHost(host: string, message: string): string {
  const lead = `Superset at ${host} `;
  return message.startsWith(lead) ? message.slice(lead.length) : message;
}

function stripQuery(path: string): string {
  const i = path.indexOf('?');
  return i < 0 ? path : path.slice(0, i);
}

function describeTarget(path: string): string {
  const m = /^\/api\/v1\/([a-z_]+)\/([^/?]+)/.exec(stripQuery(path));
  return m ? `${m[1]} ${decodeURIComponent(m[2])}` : stripQuery(path);
}

// ------------------------------------------------------------------------------------------------
// Superset's error bodies, normalised. It answers in four shapes: SIP-40 `{"errors": [{message,
// error_type, extra}]}`, `{"message": "..."}` (or a marshmallow tree under `message`),
// `{"error": "..."}` and flask-jwt-extended's `{"msg": "..."}`.

export interface NormalisedBody {
  message: string;
  errorType?: string;
  /** SIP-40 `errors[0].extra` without `issue_codes`. */
  extra?: Record<string, unknown>;
}

/** Prefers `errors[].message` (SIP-40), then `message` (string or marshmallow object), then `error`, then `msg`. */
export function normaliseErrorBody(body: unknown, fallback: string): NormalisedBody {
  if (body && typeof body === 'object' && !Array.isArray(body)) {
    const b = body as { errors?: unknown; message?: unknown; error?: unknown; msg?: unknown };
    if (Array.isArray(b.errors) && b.errors.length) {
      const first = b.errors[0] as { message?: unknown; error_type?: unknown; extra?: unknown };
      const messages = (b.errors as { message?: unknown }[]).map((e) => (typeof e?.message === 'string' ? e.message : '')).filter(Boolean);
      let extra: Record<string, unknown> | undefined;
      if (first?.extra && typeof first.extra === 'object') {
        const { issue_codes: _ignored, ...rest } = first.extra as Record<string, unknown>;
        extra = rest;
      }
      return {
        message: messages.join('; ') || (typeof b.message === 'string' ? b.message : fallback),
        errorType: typeof first?.error_type === 'string' ? first.error_type : undefined,
        extra,
      };
    }
    for (const v of [b.message, b.error, b.msg]) {
      if (typeof v === 'string' && v) return { message: v };
      if (v && typeof v === 'object') return { message: JSON.stringify(v).slice(0, 2000), extra: v as Record<string, unknown> };
    }
  }
  if (typeof body === 'string' && body.trim() && !/^\s*</.test(body)) return { message: body.trim().slice(0, 500) };
  return { message: fallback };
}
