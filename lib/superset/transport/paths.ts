/**
 * Where requests may go: the environment's configured base URL plus fixed API paths whose
 * variable parts are integers or `[A-Za-z0-9_-]` tokens. A path is never built from free text.
 */
import { encodeRison } from '../rison.ts';

/** Parses and checks a configured base URL: http(s), no credentials, query or fragment; trailing slashes dropped. */
export function normaliseBaseUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw new TypeError('base_url is not a URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new TypeError('base_url must be http or https');
  if (url.username || url.password) throw new TypeError('base_url must not carry credentials');
  if (url.search || url.hash) throw new TypeError('base_url must not carry a query or fragment');
  if (!url.hostname) throw new TypeError('base_url needs a host');
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}

/** One path segment from an id: a non-negative integer, or an `[A-Za-z0-9_-]` token (slug, uuid, digest). */
export function seg(value: number | string): string {
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value) || value < 0) throw new TypeError(`not an id: ${value}`);
    return String(value);
  }
  if (!/^[A-Za-z0-9_-]{1,255}$/.test(value)) throw new TypeError('identifier may only hold letters, digits, _ and -');
  return value;
}

/**
 * The URL of a fixed API path on the base (rison `q` and query parameters added); anything else is
 * refused. `/superset/explore_json/` is the one path outside `/api/v1/`: the legacy chart endpoint
 * that Superset's own frontend uses for legacy-API visualisations, so verification judges those
 * charts the way Superset renders them. `/login/` is allowed because that endpoint takes only a
 * Flask-Login session cookie, which only a sign-in through Superset's login form hands out
 * (./legacy-session.ts); nothing else is ever sent there.
 */
export function apiUrl(base: URL, path: string, q?: unknown, query?: Record<string, string | number | boolean>): URL {
  if (
    !/^\/(api\/v1\/[A-Za-z0-9_\-./]*|static\/version_info\.json|health|superset\/explore_json\/|login\/)$/.test(path) ||
    /(^|\/)\.\.?(\/|$)|\/\//.test(path)
  ) {
    throw new TypeError(`not a Superset API path: ${path}`);
  }
  const url = new URL(base.pathname.replace(/\/+$/, '') + path, base.origin);
  if (url.origin !== base.origin) throw new TypeError('request would leave the environment host');
  if (q !== undefined) url.searchParams.set('q', encodeRison(q));
  for (const [k, v] of Object.entries(query ?? {})) url.searchParams.set(k, String(v));
  return url;
}

/** A Location header reduced to a path on the base, if it stays on the environment's origin and matches `allowed`. */
export function sameOriginPath(base: URL, location: string, allowed: RegExp): string | undefined {
  let url: URL;
  try {
    url = new URL(location, base);
  } catch {
    // expected: not a URL: no redirect to follow.
    return undefined;
  }
  if (url.origin !== base.origin || url.search || url.hash) return undefined;
  const prefix = base.pathname.replace(/\/$/, '');
  if (!url.pathname.startsWith(prefix + '/')) return undefined;
  const path = url.pathname.slice(prefix.length);
  return allowed.test(path) ? path : undefined;
}
