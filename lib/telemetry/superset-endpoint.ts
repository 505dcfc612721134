/**
 * The endpoint class of a Superset API path: the one place a path becomes a metric label or a
 * span name, so the label set stays small whatever ids and queries the paths carry.
 */
export const SUPERSET_ENDPOINT_CLASSES = ['list', 'export', 'import', 'chart_data', 'sql_lab', 'security', 'other'] as const;
export type SupersetEndpointClass = (typeof SUPERSET_ENDPOINT_CLASSES)[number];

export function supersetEndpointClass(method: string, path: string): SupersetEndpointClass {
  const p = path.split('?')[0]!.toLowerCase();
  if (p.startsWith('/api/v1/security/') || p === '/login/' || p.startsWith('/api/v1/me')) return 'security';
  if (/^\/api\/v1\/[a-z_]+\/export\/?$/.test(p)) return 'export';
  if (/^\/api\/v1\/[a-z_]+\/import\/?$/.test(p)) return 'import';
  if (/^\/api\/v1\/chart\/(\d+\/)?data\/?/.test(p) || p.startsWith('/superset/explore_json') || p.startsWith('/api/v1/async_event'))
    return 'chart_data';
  if (p.startsWith('/api/v1/sqllab') || p.startsWith('/superset/sql_json') || p.startsWith('/api/v1/query')) return 'sql_lab';
  // A collection read: `/api/v1/dashboard/` (with its rison `q`) or its `_info`.
  if (method.toUpperCase() === 'GET' && /^\/api\/v1\/[a-z_]+\/?(_info\/?)?$/.test(p)) return 'list';
  return 'other';
}
