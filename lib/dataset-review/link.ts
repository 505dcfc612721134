/**
 * What a pasted Superset link points at: a dashboard by id or slug, or a dashboard permalink
 * (`/superset/dashboard/p/<key>/`, or the `?permalink_key=` its view redirects to). The
 * environment's base path (Superset behind a prefix) is stripped first.
 */
export type DashboardLink =
  | { kind: 'dashboard_id'; dashboardId: number }
  | { kind: 'dashboard_slug'; slug: string }
  | { kind: 'permalink'; key: string; dashboardRef: string | null };

export class LinkError extends Error {
  override name = 'LinkError';
}

const KEY = /^[A-Za-z0-9_-]{1,256}$/;
const SLUG = /^[A-Za-z0-9_.~-]{1,255}$/;

export function parseDashboardLink(link: string, baseUrl: string): DashboardLink {
  let url: URL;
  try {
    url = new URL(link.trim(), baseUrl);
  } catch {
    throw new LinkError('not a URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new LinkError('only http and https links are understood');
  let path: string;
  try {
    path = decodeURIComponent(url.pathname);
  } catch {
    throw new LinkError('the link holds a broken percent-escape (a % not followed by two hex digits of UTF-8)');
  }
  const prefix = new URL(baseUrl).pathname.replace(/\/+$/, '');
  if (prefix && (path === prefix || path.startsWith(`${prefix}/`))) path = path.slice(prefix.length);
  const parts = path.split('/').filter(Boolean);
  if (parts[0] !== 'superset' || parts[1] !== 'dashboard' || parts.length < 3) {
    throw new LinkError('not a Superset dashboard link (/superset/dashboard/<id or slug>/ or /superset/dashboard/p/<key>/)');
  }
  if (parts[2] === 'p') {
    const key = parts[3];
    if (!key || !KEY.test(key) || parts.length > 4)
      throw new LinkError('a dashboard permalink needs its key: /superset/dashboard/p/<key>/');
    return { kind: 'permalink', key, dashboardRef: null };
  }
  if (parts.length > 3) throw new LinkError('unexpected path after the dashboard id or slug');
  const ref = parts[2]!;
  const permalinkKey = url.searchParams.get('permalink_key');
  if (permalinkKey) {
    if (!KEY.test(permalinkKey)) throw new LinkError('permalink_key is not a permalink key');
    return { kind: 'permalink', key: permalinkKey, dashboardRef: ref };
  }
  if (/^\d+$/.test(ref)) {
    const id = Number(ref);
    if (!Number.isSafeInteger(id) || id < 1 || id > 2_147_483_647) throw new LinkError('dashboard id out of range');
    return { kind: 'dashboard_id', dashboardId: id };
  }
  if (!SLUG.test(ref)) throw new LinkError('not a dashboard slug');
  return { kind: 'dashboard_slug', slug: ref };
}
