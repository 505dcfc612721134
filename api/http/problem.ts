import type { Context, Next } from 'koa';
import { AppError, ValidationError } from '../../lib/errors.ts';
import type { Logger } from '../../lib/logger.ts';

export const PROBLEM_TYPE_BASE = 'https://switchyard.dev/problems/';

export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: string;
  instance?: string;
  request_id?: string;
  errors?: Array<{ field: string; message: string }>;
  [extra: string]: unknown;
}

export function problemOf(err: AppError, requestId?: string, instance?: string): ProblemBody {
  return {
    type: PROBLEM_TYPE_BASE + err.code,
    title: err.title,
    status: err.status,
    detail: err.message,
    code: err.code,
    ...(instance ? { instance } : {}),
    ...(requestId ? { request_id: requestId } : {}),
    ...(err.errors ? { errors: err.errors } : {}),
    ...(err.extra ?? {}),
  };
}

/** Maps a body-parser or Koa HttpError (status on the error object) onto our classes. */
function fromHttpError(err: unknown): AppError | undefined {
  const e = err as { status?: number; statusCode?: number; expose?: boolean; message?: string; type?: string };
  const status = e?.status ?? e?.statusCode;
  if (typeof status !== 'number' || status < 400 || status >= 500) return undefined;
  if (status === 413) return new AppError(413, 'payload_too_large', 'Payload too large', 'The request body is too large');
  if (status === 415) return new AppError(415, 'unsupported_media_type', 'Unsupported media type', e.message ?? 'Unsupported media type');
  if (status === 400) return new ValidationError(e.expose && e.message ? e.message : 'The request body could not be parsed');
  return new AppError(status, 'http_error', 'Request failed', e.expose && e.message ? e.message : 'Request failed');
}

/** The one place errors become RFC 9457 problem bodies. 5xx are logged; 4xx are the caller's business. */
export function problemMiddleware(logger: Logger) {
  return async (ctx: Context, next: Next): Promise<void> => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) {
        throw new AppError(404, 'not_found', 'Not found', `No route for ${ctx.method} ${ctx.path}`);
      }
    } catch (err) {
      const known = err instanceof AppError ? err : fromHttpError(err);
      const appErr =
        known ??
        new AppError(
          500,
          'internal_error',
          'Internal server error',
          'An unexpected error occurred; the request id identifies it in the server log',
        );
      if (appErr.status >= 500) logger.error({ err, requestId: ctx.state.requestId, path: ctx.path }, 'request failed');
      ctx.status = appErr.status;
      ctx.type = 'application/problem+json';
      ctx.body = problemOf(appErr, ctx.state.requestId as string | undefined, ctx.path);
      if (appErr.status === 429 && appErr.extra?.retry_after) ctx.set('Retry-After', String(appErr.extra.retry_after));
    }
  };
}
