/**
 * The errors of a working copy, and the one mapping of isomorphic-git's remote failures onto them:
 * a refusal by the git server is the caller's to fix (4xx), an unreachable server is an outage (503).
 * Of what the server said only a short, sanitised reason is passed on (upstream-reason.ts).
 */
import { Errors } from 'isomorphic-git';
import { AppError, UpstreamUnavailableError } from '../errors.ts';
import { upstreamReason } from '../upstream-reason.ts';

export class NoRepositoryError extends AppError {
  override name = 'NoRepositoryError';
  constructor(detail = 'This dashboard has no git repository yet; init one first') {
    super(404, 'no_repository', 'No repository', detail);
  }
}

/** The remote refused (authentication, a rejected push) with its own words. */
export class GitRemoteError extends AppError {
  override name = 'GitRemoteError';
  constructor(code: string, detail: string, status = 409, extra?: Record<string, unknown>) {
    super(status, code, 'Git remote refused', detail, { extra });
  }
}

export function remoteError(what: string, err: unknown): unknown {
  if (err instanceof AppError) return err;
  const e = err as Error & { code?: string; data?: { statusCode?: number; statusMessage?: string; response?: string } };
  if (e?.code === Errors.HttpError.code) {
    const status = e.data?.statusCode;
    if (status === 401 || status === 403)
      return new GitRemoteError('git_auth_failed', `the git server refused the token for ${what} (HTTP ${status})`, 400, {
        upstream_status: status,
      });
    if (status === 404)
      return new GitRemoteError('remote_not_found', `the remote repository does not exist (HTTP 404 on ${what})`, 400, {
        upstream_status: 404,
      });
    return new UpstreamUnavailableError(
      'git server',
      `${what} failed: HTTP ${status} ${upstreamReason(e.data?.statusMessage) ?? ''}`.trim(),
      err,
    );
  }
  if (e?.code === Errors.UserCanceledError.code)
    return new GitRemoteError('git_auth_failed', `the git server refused the token for ${what}`, 400);
  if (e?.code === Errors.PushRejectedError.code)
    return new GitRemoteError('push_rejected', `the remote refused the push (${upstreamReason(e.message) ?? 'rejected'}); pull first`, 409);
  if (
    e?.code === Errors.SmartHttpError.code ||
    e?.code === Errors.UnknownTransportError.code ||
    (e as { cause?: unknown })?.cause ||
    /ECONNREFUSED|ENOTFOUND|ETIMEDOUT|socket/i.test(e?.message ?? '')
  )
    return new UpstreamUnavailableError('git server', `${what} failed: ${upstreamReason(e.message) ?? 'no usable answer'}`, err);
  return err;
}

const GIT_ERROR_CODES = new Set(
  Object.values(Errors)
    .map((E) => (E as { code?: string }).code)
    .filter(Boolean),
);

/** True for any of isomorphic-git's own errors (not found, ambiguous, invalid name, ...). */
export function isGitError(err: unknown): boolean {
  return GIT_ERROR_CODES.has((err as { code?: string })?.code ?? '');
}
