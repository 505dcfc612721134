/**
 * The instance itself: its release, the service account's permissions, and what it can do (list
 * filters and columns, security API, thumbnails), probed once and kept with the release.
 */
import { SupersetApiError, SupersetAuthError, SupersetForbiddenError, SupersetNotFoundError } from '../errors.ts';
import { CAPABILITIES_RECHECK_MS } from '../transport/options.ts';
import type { Pager } from '../transport/paging.ts';
import { seg } from '../transport/paths.ts';
import type { SupersetTransport } from '../transport/transport.ts';
import { tryJson, type CallSpec } from '../transport/wire.ts';
import type { ListCapabilities, PermissionProbe, Resource, SupersetCapabilities } from '../types.ts';
import type { Security } from './security.ts';

export class Instance {
  private caps?: { value: SupersetCapabilities; checkedAt: number };
  private capsFlight?: Promise<SupersetCapabilities>;

  private readonly http: SupersetTransport;
  private readonly pager: Pager;
  private readonly security: Security;
  /** How long probed capabilities are trusted before the release is read again. */
  private readonly recheckMs: number;

  constructor(http: SupersetTransport, pager: Pager, security: Security, recheckMs = CAPABILITIES_RECHECK_MS) {
    this.http = http;
    this.pager = pager;
    this.security = security;
    this.recheckMs = recheckMs;
  }

  /**
   * The Superset release, from `/static/version_info.json` (the API has no version endpoint);
   * null when the instance does not serve that file.
   */
  async version(): Promise<string | null> {
    const spec: CallSpec = { method: 'GET', path: '/static/version_info.json', anonymous: true, pass: [404, 403, 401] };
    return this.http.call(spec, (res) => {
      if (res.status !== 200) return null;
      const body = tryJson(res.body) as { version?: unknown } | undefined;
      return typeof body?.version === 'string' && body.version ? body.version : null;
    });
  }

  /** Checks the permissions Switchyard needs: reading everything, exporting and importing dashboards. */
  async probePermissions(): Promise<PermissionProbe> {
    const needed: Record<Resource, string[]> = {
      dashboard: ['can_read', 'can_write', 'can_export'],
      chart: ['can_read'],
      dataset: ['can_read'],
      database: ['can_read'],
    };
    const entries = Object.entries(needed) as Array<[Resource, string[]]>;
    const held = await Promise.all(
      entries.map(([r]) =>
        this.resourcePermissions(r).catch((err: unknown) => {
          if (err instanceof SupersetForbiddenError || err instanceof SupersetNotFoundError) return [] as string[];
          throw err;
        }),
      ),
    );
    const label = (r: Resource) => r[0].toUpperCase() + r.slice(1);
    const checked: string[] = [];
    const missing: string[] = [];
    entries.forEach(([r, perms], i) => {
      for (const p of perms) {
        const name = `${p} on ${label(r)}`;
        checked.push(name);
        if (!held[i].includes(p)) missing.push(name);
      }
    });
    return { checked, missing };
  }

  /**
   * What this instance can do, probed once and kept with the release it was probed on. After
   * `recheckMs` the release is read again (one anonymous call) and everything is probed anew only
   * when it changed.
   */
  async capabilities(): Promise<SupersetCapabilities> {
    if (this.caps && Date.now() - this.caps.checkedAt < this.recheckMs) return this.caps.value;
    this.capsFlight ??= (async () => {
      const known = this.caps;
      if (known && (await this.version()) === known.value.version) {
        known.checkedAt = Date.now();
        return known.value;
      }
      const value = await this.probeCapabilities();
      this.caps = { value, checkedAt: Date.now() };
      return value;
    })().finally(() => (this.capsFlight = undefined));
    return this.capsFlight;
  }

  /** Drops the cached capabilities (an answer showed they are out of date). */
  forgetCapabilities(): void {
    this.caps = undefined;
  }

  /** Asks the instance now, without the cache. */
  async probeCapabilities(): Promise<SupersetCapabilities> {
    const resources = ['dashboard', 'chart', 'dataset'] as const;
    const [version, lists, securityApi, thumbnails] = await Promise.all([
      this.version(),
      Promise.all(resources.map((r) => this.probeList(r))),
      this.security.users(undefined, 1).then((u) => u !== undefined),
      this.probeThumbnails(),
    ]);
    const datasetColumns = lists[2].columns;
    return {
      version,
      lists: { dashboard: lists[0].caps, chart: lists[1].caps, dataset: lists[2].caps },
      dataset_database_uuid: datasetColumns ? datasetColumns.includes('database.uuid') : null,
      security_api: securityApi,
      thumbnails,
      probed_at: new Date().toISOString(),
    };
  }

  /** Permissions the service account holds on one resource (`can_read`, `can_write`, `can_export`, ...). */
  private async resourcePermissions(resource: Resource): Promise<string[]> {
    const body = await this.http.getJson<{ permissions?: string[] }>(`/api/v1/${resource}/_info`, { q: { keys: ['permissions'] } });
    return body.permissions ?? [];
  }

  /** `_info?keys=filters` for the filterable columns, and one list row's `list_columns` for what a list can return. */
  private async probeList(resource: 'dashboard' | 'chart' | 'dataset'): Promise<{ caps: ListCapabilities; columns: string[] | null }> {
    const path = `/api/v1/${resource}/`;
    const [info, listed] = await Promise.all([
      this.http
        .getJson<{ filters?: Record<string, unknown> }>(`/api/v1/${resource}/_info`, { q: { keys: ['filters'] } })
        .catch(refusalAsNull),
      this.http
        .serialList(path, () =>
          this.http.getJson<{ list_columns?: unknown }>(path, { q: { page: 0, page_size: 1, keys: ['list_columns'] } }),
        )
        .catch(refusalAsNull),
    ]);
    const filters = info?.filters && typeof info.filters === 'object' ? Object.keys(info.filters).sort() : null;
    const columns = Array.isArray(listed?.list_columns) ? listed.list_columns.filter((c): c is string => typeof c === 'string') : null;
    return { caps: { filters, uuid_column: columns ? columns.includes('uuid') : null }, columns };
  }

  /**
   * Whether the THUMBNAILS flag is on: with it off Superset answers any thumbnail 404 before
   * looking at the dashboard; with it on, a wrong digest is redirected (5.0+) or the image queued
   * (4.1). Needs one dashboard to ask about; null when there is none.
   */
  private async probeThumbnails(): Promise<boolean | null> {
    const first = (await this.pager.page<{ id: number }>('dashboard', { columns: ['id'], pageSize: 1 }).catch(refusalAsNull))?.result[0];
    if (!first) return null;
    const spec: CallSpec = {
      method: 'GET',
      path: `/api/v1/dashboard/${seg(first.id)}/thumbnail/probe/`,
      accept: 'image/*, application/json',
      pass: [200, 202, 301, 302, 303, 307, 308, 404, 500],
      maxBytes: this.http.maxBinaryBytes,
    };
    const res = await this.http.call(spec, (r) => r);
    return res.status !== 404;
  }
}

/** A probe the instance refuses (403, 404, 400) tells "not offered"; outages still throw. */
function refusalAsNull(err: unknown): null {
  if (err instanceof SupersetAuthError) throw err;
  if (err instanceof SupersetForbiddenError || err instanceof SupersetNotFoundError) return null;
  if (err instanceof SupersetApiError && err.upstreamStatus !== undefined && err.upstreamStatus < 500) return null;
  throw err;
}
