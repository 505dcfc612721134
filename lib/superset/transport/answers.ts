/**
 * What an answer means: a status becomes one of the typed errors of ../errors.ts (whose
 * classifySupersetFailure then decides what is retried), and a body must be a JSON object.
 */
import {
  normaliseErrorBody,
  SupersetApiError,
  SupersetAuthError,
  SupersetForbiddenError,
  SupersetGatewayError,
  SupersetNotFoundError,
  SupersetUnavailableError,
  type UpstreamContext,
} from '../errors.ts';
import { describeGatewayAnswer, isGatewayAnswer, isHtml } from './gateway.ts';
import { tryJson, type WireResponse } from './wire.ts';

/** flask-jwt-extended answers a token signed with another key, or malformed, with 422 `{"msg": ...}`. */
export function isJwtError(res: WireResponse): boolean {
  const body = tryJson(res.body) as Record<string, unknown> | undefined;
  return !!body && typeof body.msg === 'string' && body.message === undefined && body.errors === undefined;
}

/** A refused token: 401, or flask-jwt-extended's 422. */
export function isTokenRefusal(res: WireResponse): boolean {
  return res.status === 401 || (res.status === 422 && isJwtError(res));
}

/** Flask-WTF refused the CSRF token (400 naming it), or the session behind it (redirect to the login page). */
export function isCsrfFailure(res: WireResponse): boolean {
  if (res.status === 400) return /csrf/i.test(res.body.toString('utf8', 0, Math.min(res.body.length, 4000)));
  if (res.status >= 300 && res.status < 400) return /\/login/.test(String(res.headers.location ?? ''));
  return false;
}

/**
 * A 5xx (or no status) as an outage: a gateway's answer as a SupersetGatewayError, otherwise with
 * Superset's own message, or what came back when it gave none (never "no usable error message").
 */
export function unavailableFromStatus(host: string, res: WireResponse, ctx: UpstreamContext): SupersetUnavailableError {
  if (isGatewayAnswer(res)) return new SupersetGatewayError(host, describeGatewayAnswer(res), ctx);
  const { message } = normaliseErrorBody(tryJson(res.body), describeGatewayAnswer(res).answer);
  return new SupersetUnavailableError(
    'server_error',
    `Superset at ${host} failed on ${ctx.method} ${ctx.path} with ${res.status} (${message})`,
    {
      ...ctx,
      upstreamStatus: res.status,
      upstreamMessage: message,
    },
  );
}

/** Throws the typed error a non-2xx answer stands for. */
export function raiseForStatus(host: string, res: WireResponse, spec: { method: string; path: string }): void {
  const ctx: UpstreamContext = { method: spec.method, path: spec.path, upstreamStatus: res.status };
  if (res.status >= 200 && res.status < 300) return;
  if (res.status >= 500 || res.status === 0) throw unavailableFromStatus(host, res, ctx);
  if (res.status >= 300 && res.status < 400) {
    const location = String(res.headers.location ?? '');
    const message = /\/login/.test(location)
      ? 'redirected to the login page: the session or CSRF token was refused'
      : `unexpected redirect (${res.status})`;
    if (/\/login/.test(location)) throw new SupersetAuthError({ ...ctx, upstreamStatus: res.status }, message, undefined);
    throw new SupersetApiError({ ...ctx, upstreamStatus: res.status }, message, undefined);
  }
  const body = tryJson(res.body);
  // A gateway's HTML page (nginx's 413 for a bundle over client_max_body_size, say) is named, not quoted.
  const { message, errorType } = normaliseErrorBody(body, isHtml(res) ? describeGatewayAnswer(res).answer : `HTTP ${res.status}`);
  const full = { ...ctx, upstreamStatus: res.status };
  if (isTokenRefusal(res)) throw new SupersetAuthError(full, message, body);
  if (res.status === 403) throw new SupersetForbiddenError(full, message, body);
  if (res.status === 404) throw new SupersetNotFoundError(full, message, body);
  throw new SupersetApiError(full, message, body, { errorType });
}

/** The body as a JSON object; an HTML page is a gateway's answer, anything else (a truncated body) a bad answer. */
export function parseJson<T>(host: string, res: WireResponse, ctx: UpstreamContext): T {
  const parsed = tryJson(res.body);
  // An HTML page where JSON was expected: a gateway's (or a maintenance page), transient.
  if (parsed === undefined && isHtml(res))
    throw new SupersetGatewayError(host, describeGatewayAnswer(res), { ...ctx, upstreamStatus: res.status });
  if (parsed === undefined || typeof parsed !== 'object' || parsed === null) {
    const type = String(res.headers['content-type'] ?? 'no content type');
    throw new SupersetUnavailableError(
      'bad_response',
      `Superset at ${host} answered ${ctx.method} ${ctx.path} with ${res.status} and a body that is not a JSON object (${type}, ${res.body.length} bytes)`,
      { ...ctx, upstreamStatus: res.status },
    );
  }
  return parsed as T;
}
