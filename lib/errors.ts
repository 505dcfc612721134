/**
 * Domain errors. Each carries its HTTP status and a stable machine `code`; the API's one error
 * mapper (api/http/problem.ts) turns them into RFC 9457 problem bodies. Activities use the same
 * classes, so a failure reads the same in a task report as in an HTTP answer.
 */
export interface FieldError {
  field: string;
  message: string;
}

export class AppError extends Error {
  readonly status: number;
  readonly code: string;
  readonly title: string;
  readonly errors?: FieldError[];
  readonly extra?: Record<string, unknown>;

  constructor(
    status: number,
    code: string,
    title: string,
    detail: string,
    opts: { errors?: FieldError[]; extra?: Record<string, unknown>; cause?: unknown } = {},
  ) {
    super(detail, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.status = status;
    this.code = code;
    this.title = title;
    this.errors = opts.errors;
    this.extra = opts.extra;
  }
}

export class ValidationError extends AppError {
  override name = 'ValidationError';
  constructor(detail: string, errors?: FieldError[], status = 400) {
    super(status, 'validation_failed', 'Invalid request', detail, { errors });
  }
}

/** A change would send a stored secret to a new destination without the caller sending the secret again. */
export class SecretRequiredError extends AppError {
  override name = 'SecretRequiredError';
  constructor(secretField: string, urlField: string) {
    super(
      400,
      'secret_required',
      'Secret required',
      `Changing where the stored secret is sent (${urlField.replace(/^body\./, '')}: scheme, host, port or path, or turning TLS verification off) needs the secret (${secretField.replace(/^body\./, '')}) sent again; nothing was saved`,
      { errors: [{ field: secretField, message: `required when ${urlField.replace(/^body\./, '')} changes where it is sent` }] },
    );
  }
}

export class UnauthenticatedError extends AppError {
  override name = 'UnauthenticatedError';
  constructor(detail = 'Authentication is required') {
    super(401, 'unauthenticated', 'Unauthenticated', detail);
  }
}

export class ForbiddenError extends AppError {
  override name = 'ForbiddenError';
  constructor(detail = 'You are not allowed to do this') {
    super(403, 'forbidden', 'Forbidden', detail);
  }
}

export class NotFoundError extends AppError {
  override name = 'NotFoundError';
  constructor(what: string, id?: string | number) {
    super(404, 'not_found', 'Not found', id === undefined ? `${what} not found` : `${what} '${id}' not found`);
  }
}

export class ConflictError extends AppError {
  override name = 'ConflictError';
  constructor(detail: string, code = 'conflict', extra?: Record<string, unknown>) {
    super(409, code, 'Conflict', detail, { extra });
  }
}

export class TooManyRequestsError extends AppError {
  override name = 'TooManyRequestsError';
  constructor(detail: string, retryAfterSeconds: number) {
    super(429, 'too_many_requests', 'Too many requests', detail, { extra: { retry_after: retryAfterSeconds } });
  }
}

/** A dependency (Superset, Temporal, the LLM, a git server) could not be reached or answered garbage. */
export class UpstreamUnavailableError extends AppError {
  override name = 'UpstreamUnavailableError';
  constructor(service: string, detail: string, cause?: unknown) {
    super(503, 'upstream_unavailable', `${service} unavailable`, detail, { cause, extra: { service } });
  }
}

/** A write carried a stale `version` of an optimistically locked record (a dataset review session). */
export class VersionConflictError extends AppError {
  override name = 'VersionConflictError';
  constructor(what: string, sent: number, current: number) {
    super(409, 'version_conflict', 'Conflict', `${what} is at version ${current}, not ${sent}: reload it and apply your change again`, {
      extra: { current_version: current },
    });
  }
}

/**
 * A destination (a base URL, a git remote, an endpoint) that ALLOWED_UPSTREAM_HOSTS does not allow
 * (lib/egress/policy.ts): 400 when a request would store it (nothing is stored); 503 when a stored
 * one is no longer allowed or its name now resolves elsewhere (nothing is sent): to the caller the
 * destination is unavailable, as any upstream that cannot be reached, and the code says why.
 */
export class HostNotAllowedError extends AppError {
  override name = 'HostNotAllowedError';
  readonly host: string;
  constructor(host: string, detail: string, when: 'input' | 'connect', field?: string) {
    super(
      when === 'input' ? 400 : 503,
      'host_not_allowed',
      'Host not allowed',
      when === 'input' ? `${detail}; nothing was saved` : `${detail}; nothing was sent to it`,
      { errors: field ? [{ field, message: 'host not allowed by ALLOWED_UPSTREAM_HOSTS' }] : undefined, extra: { host } },
    );
    this.host = host;
  }
}
