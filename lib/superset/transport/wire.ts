/**
 * What comes off the wire, before it means anything to Superset: an answer read whole within a
 * size cap, and the wire failures (deadline, size, network) told apart from bugs.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Dispatcher, FormData } from 'undici';
import type { UnavailableReason } from '../errors.ts';
import type { CookieJar } from './cookies.ts';

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** One call as the resources ask for it; the transport adds authentication, CSRF and cookies. */
export interface CallSpec {
  method: Method;
  path: string;
  q?: unknown;
  query?: Record<string, string | number | boolean>;
  json?: unknown;
  form?: FormData;
  /** A form-urlencoded body (the /login/ form's sign-in). */
  urlencoded?: URLSearchParams;
  accept?: string;
  /** Statuses returned to the caller instead of raised (thumbnails: 202, 302, 404). */
  pass?: number[];
  /**
   * Asking again cannot do anything twice (a chart-data query: a POST that only reads). GETs are
   * idempotent without saying so; other POSTs, PUTs and DELETEs are tried once.
   */
  idempotent?: boolean;
  /** Skip authentication (version file, health). */
  anonymous?: boolean;
  /**
   * Authenticated by the legacy session (a Flask-Login cookie from the /login/ form,
   * ./legacy-session.ts) instead of the JWT: the legacy chart endpoint takes nothing else.
   */
  legacy?: boolean;
  /** One of the session's own exchanges (login, token refresh, CSRF token): small, so under the short session deadline. */
  session?: boolean;
  /** The cookie jar the call sends and fills; the API session's when not given. */
  cookies?: CookieJar;
  maxBytes?: number;
}

/** An answer as read off the wire: status, headers (lower-case names) and the whole body. */
export interface WireResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
  /** How long the exchange took, for messages ("answered 504 after 60 s"). */
  elapsedMs?: number;
}

/** Reading the answer went over the size cap. */
class TooLarge extends Error {}

/** The whole body, refused as soon as it grows past `max` bytes (the declared length is checked first). */
export async function readCapped(answer: Dispatcher.ResponseData, max: number): Promise<Buffer> {
  const declared = Number(answer.headers['content-length']);
  if (Number.isFinite(declared) && declared > max) {
    answer.body.destroy();
    throw new TooLarge();
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of answer.body as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > max) {
      answer.body.destroy();
      throw new TooLarge();
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size);
}

/** The body as JSON, or undefined when it is empty or not JSON. */
export function tryJson(body: Buffer): unknown {
  if (!body.length) return undefined;
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    // expected: not JSON: the caller reports the body as text.
    return undefined;
  }
}

function codeOf(err: unknown): string | undefined {
  const e = err as { code?: unknown; cause?: unknown; errors?: unknown[] } | null;
  if (!e || typeof e !== 'object') return undefined;
  if (typeof e.code === 'string') return e.code;
  if (Array.isArray(e.errors) && e.errors.length) return codeOf(e.errors[0]); // AggregateError: one per address tried
  return e.cause ? codeOf(e.cause) : undefined;
}

/** The connection itself (TCP, TLS handshake) did not open within its deadline. */
export function isConnectTimeout(err: unknown): boolean {
  return codeOf(err) === 'UND_ERR_CONNECT_TIMEOUT';
}

/** Which wire failure an error from undici is, or undefined when it is not one (a bug, say). */
export function wireFailure(err: unknown): UnavailableReason | undefined {
  if (err instanceof TooLarge) return 'too_large';
  const name = (err as { name?: unknown } | null)?.name;
  if (name === 'TimeoutError') return 'timeout'; // AbortSignal.timeout
  const code = codeOf(err);
  if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' || code === 'UND_ERR_CONNECT_TIMEOUT') return 'timeout';
  if (code === 'UND_ERR_RES_EXCEEDED_MAX_SIZE') return 'too_large';
  if (code === 'UND_ERR_INVALID_ARG' || code === 'UND_ERR_DESTROYED' || code === 'UND_ERR_CLOSED') return undefined;
  if (code || err instanceof Error) return 'network';
  return undefined;
}

export function describeNetworkError(err: unknown): string {
  const code = codeOf(err);
  switch (code) {
    case 'ECONNREFUSED':
      return 'connection refused';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'host name does not resolve';
    case 'ECONNRESET':
    case 'UND_ERR_SOCKET':
      return 'connection reset';
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return 'host unreachable';
    case 'DEPTH_ZERO_SELF_SIGNED_CERT':
    case 'SELF_SIGNED_CERT_IN_CHAIN':
    case 'UNABLE_TO_VERIFY_LEAF_SIGNATURE':
    case 'CERT_HAS_EXPIRED':
    case 'ERR_TLS_CERT_ALTNAME_INVALID':
      return `TLS certificate not trusted (${code}); fix the certificate or set verify_tls=false`;
    default: {
      const message = err instanceof Error ? err.message : String(err);
      return code ? `${code}: ${message}` : message;
    }
  }
}
