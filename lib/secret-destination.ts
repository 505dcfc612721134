import { SecretRequiredError } from './errors.ts';

/**
 * The rule for every stored secret (environment password, git token, LLM key): a secret goes
 * only where it was sent with. Moving its destination (scheme, host, port or path prefix of the
 * URL, or switching TLS verification off) without sending the secret again would let whoever
 * may edit the record point the stored secret at a listener of their own.
 */
export interface SecretDestination {
  url: string;
  /** Whether the TLS certificate is verified; switching it off counts as a new destination. */
  verifyTls?: boolean;
}

/** `scheme://host:port/path-prefix` of a URL, with the default port spelled out and trailing slashes dropped. */
export function destinationKey(url: string): string {
  const u = new URL(url);
  const port = u.port || (u.protocol === 'https:' ? '443' : u.protocol === 'http:' ? '80' : '');
  return `${u.protocol}//${u.hostname.toLowerCase()}:${port}${u.pathname.replace(/\/+$/, '')}`;
}

/** True when a secret stored for `before` would now be sent somewhere else (or less safely). */
export function destinationChanged(before: SecretDestination, after: Partial<SecretDestination>): boolean {
  if (after.url !== undefined && destinationKey(after.url) !== destinationKey(before.url)) return true;
  return before.verifyTls !== false && after.verifyTls === false;
}

/**
 * Refuses (400 `secret_required`) a change that moves the destination of a stored secret
 * without carrying the secret: call it before saving anything.
 */
export function assertSecretResent(opts: {
  before: SecretDestination;
  after: Partial<SecretDestination>;
  secretSent: boolean;
  /** Field names as the caller sent them, for the problem body (`body.password`, `body.base_url`). */
  secretField: string;
  urlField: string;
}): void {
  if (opts.secretSent || !destinationChanged(opts.before, opts.after)) return;
  throw new SecretRequiredError(opts.secretField, opts.urlField);
}
