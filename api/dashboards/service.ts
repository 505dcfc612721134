import type { EnvironmentRow } from '../../db/environments/store.ts';
import { toUtcIso } from '../../lib/timestamps.ts';
import { SupersetApiError, displayName, type ListFilter, type SupersetClient } from '../../lib/superset/index.ts';
import type {
  DashboardChart,
  DashboardDataset,
  DashboardDetail,
  DashboardListItem,
  Thumbnail,
  UserSummary,
} from '../../lib/superset/types.ts';
import type { Principal } from '../auth/principal.ts';
import type { Supersets } from '../environments/upstream.ts';
import type { ProfileService } from '../profile/service.ts';
import { filteredWindow, mergedWindow } from './key-stream.ts';
import { decideProfileFilter, matchesProfile, normaliseName, resolutionOf, type ProfileIdentity } from './profile-filter.ts';
import type { DashboardItem, EffectiveProfileFilter, PageContext, ProfileResolution } from './schemas.ts';

export interface DashboardListParams {
  envId: string;
  page: number;
  pageSize: number;
  search?: string;
  overrideShowAll: boolean;
  pageContext: PageContext;
  principal: Principal;
}

/** Upstream order for every list call: Superset's default, made explicit so merged lists agree. */
const ORDER = { orderColumn: 'changed_on', orderDirection: 'desc' as const };
/** Columns for the owner scan (fallback path): what rule 2 needs, nothing more. */
const SCAN_COLUMNS = [
  'id',
  'changed_on_utc',
  'owners.id',
  'owners.first_name',
  'owners.last_name',
  'changed_by.id',
  'changed_by.first_name',
  'changed_by.last_name',
  'changed_by_name',
];
const KEY_COLUMNS = ['id', 'changed_on_utc'];

function userRef(u: UserSummary | string | null | undefined) {
  if (u === null || u === undefined) return null;
  if (typeof u === 'string') return { id: null, first_name: null, last_name: null, display_name: u };
  return {
    id: typeof u.id === 'number' ? u.id : null,
    first_name: u.first_name ?? null,
    last_name: u.last_name ?? null,
    display_name: displayName(u),
    ...(u.email !== undefined ? { email: u.email ?? null } : {}),
  };
}

function absolute(baseUrl: string, path: string | null | undefined): string | null {
  if (!path) return null;
  if (/^https?:\/\//i.test(path)) return path;
  return `${baseUrl}${path.startsWith('/') ? '' : '/'}${path}`;
}

export function toDashboardItem(env: Pick<EnvironmentRow, 'id' | 'base_url'>, d: DashboardListItem): DashboardItem {
  return {
    id: d.id,
    uuid: (d.uuid as string | null | undefined) ?? null,
    title: d.dashboard_title ?? '',
    slug: d.slug ?? null,
    url: absolute(env.base_url, d.url),
    published: d.published ?? null,
    status: d.status ?? (d.published === undefined || d.published === null ? null : d.published ? 'published' : 'draft'),
    certified_by: d.certified_by ?? null,
    owners: (d.owners ?? []).map((o) => userRef(o)!).filter(Boolean),
    changed_by: userRef(d.changed_by),
    changed_by_name: d.changed_by_name ?? (d.changed_by ? displayName(d.changed_by) : null),
    changed_on: toUtcIso(d.changed_on_utc ?? (d.changed_on as string | undefined)),
    changed_on_humanized: d.changed_on_delta_humanized ?? null,
    created_by: userRef(d.created_by),
    tags: (d.tags ?? []).map((t) => t.name).filter(Boolean),
    thumbnail_url: `/api/dashboards/${d.id}/thumbnail?env_id=${encodeURIComponent(env.id)}`,
  };
}

function parseJsonObject(text: string | null | undefined): Record<string, unknown> | null {
  if (!text) return null;
  try {
    const v = JSON.parse(text) as unknown;
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

function datasetIdOf(form: DashboardChart['form_data']): number | null {
  const m = /^(\d+)__/.exec(String(form?.datasource ?? ''));
  return m ? Number(m[1]) : null;
}

export class DashboardService {
  private readonly profiles: ProfileService;
  private readonly supersets: Supersets;

  constructor(deps: { profiles: ProfileService; supersets: Supersets }) {
    this.profiles = deps.profiles;
    this.supersets = deps.supersets;
  }

  list(p: DashboardListParams) {
    return this.supersets.use(p.envId, (client, env) => this.listIn(client, env, p));
  }

  private async listIn(client: SupersetClient, env: EnvironmentRow, p: DashboardListParams) {
    const preference = p.principal.userId ? await this.profiles.saved(p.principal.userId) : undefined;
    const filter = decideProfileFilter({
      preference,
      pageContext: p.pageContext,
      overrideShowAll: p.overrideShowAll,
      hasUser: !!p.principal.userId,
    });
    const searchFilters: ListFilter[] = p.search ? [{ col: 'dashboard_title', opr: 'title_or_slug', value: p.search }] : [];

    const page: { rows: DashboardListItem[]; total: number; resolution?: ProfileResolution } = filter.applied
      ? await this.filteredPage(client, filter, searchFilters, p.page, p.pageSize)
      : await this.plainPage(client, searchFilters, p.page, p.pageSize);
    return {
      items: page.rows.map((d) => toDashboardItem(env, d)),
      total: page.total,
      page: p.page,
      page_size: p.pageSize,
      has_next: p.page * p.pageSize < page.total,
      env_id: env.id,
      effective_profile_filter: page.resolution ? { ...filter, resolution: page.resolution } : filter,
    };
  }

  /** No profile filter: one upstream call. */
  private async plainPage(client: SupersetClient, filters: ListFilter[], page: number, pageSize: number) {
    const res = await client.dashboards.list({ filters, ...ORDER, page: page - 1, pageSize });
    return { rows: res.result, total: res.count };
  }

  /**
   * Profile filter applied. The bound username is resolved to upstream user ids once (rule 3);
   * with one id, Superset filters: A = owners contain it, B = last modifier is it; the exact
   * total is |A| + |B| - |A and B| (three counts), and the page is cut from A and B merged by
   * `changed_on` (rule 2 is "owner OR modifier", which FAB's AND-only filters cannot express in
   * one call). Ambiguous resolutions (named in the answer), none at all (plain-value owners may
   * still name the username) and servers refusing those filters fall back to scanning the list
   * (only the owner columns) and matching locally.
   */
  private async filteredPage(client: SupersetClient, filter: EffectiveProfileFilter, search: ListFilter[], page: number, pageSize: number) {
    const resolved = await client.security.resolveUsernameCached(filter.username!);
    const who: ProfileIdentity = {
      username: normaliseName(filter.username),
      ids: new Set(resolved.ids),
      aliases: new Set(resolved.aliases.map(normaliseName)),
    };
    const resolution = resolutionOf(resolved);
    if (resolved.ids.length === 1) {
      try {
        return { ...(await this.unionPage(client, resolved.ids[0], search, page, pageSize)), resolution };
      } catch (err) {
        // A release that does not allow filtering on owners/changed_by answers 400: scan instead.
        if (!(err instanceof SupersetApiError && err.upstreamStatus === 400)) throw err;
      }
    }
    return { ...(await this.scanPage(client, who, search, page, pageSize)), resolution };
  }

  /**
   * "Owner OR last modifier" with one user id, at close to the cost of one list call. Calls to one
   * list endpoint run one after another (Flask-AppBuilder's list filters are not thread-safe, see
   * the client), so the plan keeps them few and cheap:
   *   1. count B (dashboards the user last modified): a count-only call;
   *   2. B empty, or B inside A (a count of A and B): the union is A, and Superset pages it
   *      directly: the page is one ordinary owners-filtered call, `total` its count;
   *   3. otherwise A's count and the keys of both lists streamed up to the page's end, merged
   *      by `changed_on` (./key-stream.ts), then the page's rows by id.
   */
  private async unionPage(client: SupersetClient, userId: number, search: ListFilter[], page: number, pageSize: number) {
    const owners: ListFilter = { col: 'owners', opr: 'rel_m_m', value: userId };
    const modifier: ListFilter = { col: 'changed_by', opr: 'rel_o_m', value: userId };
    const count = async (filters: ListFilter[]) =>
      (await client.lists.page<{ id: number }>('dashboard', { filters, columns: ['id'], page: 0, pageSize: 1 })).count;
    const ownedPage = async () => {
      const res = await client.dashboards.list({ filters: [...search, owners], ...ORDER, page: page - 1, pageSize });
      return { rows: res.result, total: res.count };
    };
    const cb = await count([...search, modifier]);
    if (cb === 0) return ownedPage();
    const both = await count([...search, owners, modifier]);
    if (both === cb) return ownedPage();
    const ca = await count([...search, owners]);
    const total = ca + cb - both;
    if (ca === both) {
      const res = await client.dashboards.list({ filters: [...search, modifier], ...ORDER, page: page - 1, pageSize });
      return { rows: res.result, total };
    }
    // The keys of both lists are streamed and merged up to the end of this page: any depth, a page of keys held at a time.
    const keys = (f: ListFilter) =>
      client.lists.stream<{ id: number; changed_on_utc?: string | null }>('dashboard', {
        filters: [...search, f],
        columns: KEY_COLUMNS,
        ...ORDER,
      });
    const merged = await mergedWindow(keys(owners), keys(modifier), (page - 1) * pageSize, page * pageSize);
    const ids = merged.map((r) => r.id);
    return { rows: await this.rowsByIds(client, ids), total };
  }

  private async scanPage(client: SupersetClient, who: ProfileIdentity, search: ListFilter[], page: number, pageSize: number) {
    const rows = client.lists.stream<DashboardListItem>('dashboard', { filters: search, columns: SCAN_COLUMNS, ...ORDER });
    const { window, total } = await filteredWindow(rows, (d) => matchesProfile(d, who), (page - 1) * pageSize, page * pageSize);
    const ids = window.map((d) => d.id);
    return { rows: await this.rowsByIds(client, ids), total };
  }

  private async rowsByIds(client: SupersetClient, ids: number[]): Promise<DashboardListItem[]> {
    if (!ids.length) return [];
    const res = await client.dashboards.list({ filters: [{ col: 'id', opr: 'in', value: ids }], page: 0, pageSize: ids.length });
    const byId = new Map(res.result.map((d) => [d.id, d]));
    return ids.map((id) => byId.get(id)).filter((d): d is DashboardListItem => !!d);
  }

  /** Detail with charts and datasets: three upstream calls in parallel. */
  detail(envId: string, id: number) {
    return this.supersets.use(
      envId,
      async (client, env) => {
        const [dashboard, charts, datasets] = await Promise.all([
          client.dashboards.get(id),
          client.dashboards.charts(id),
          client.dashboards.datasets(id),
        ]);
        return toDashboardDetail(env, dashboard, charts, datasets);
      },
      { notFound: (env) => `Dashboard ${id} in environment '${env.name}'` },
    );
  }

  /**
   * The thumbnail, or why there is none. On Superset's 404 one more call tells an unknown
   * dashboard (404 not_found) from one that merely has no image, and the instance's probed
   * capabilities (cached per client) tell thumbnails switched off (`off`: Superset's THUMBNAILS
   * flag, off by default, answers every thumbnail 404) from a render that failed (`missing`).
   */
  thumbnail(envId: string, id: number): Promise<Thumbnail | { status: 'off' }> {
    return this.supersets.use(
      envId,
      async (client) => {
        const thumb = await client.dashboards.thumbnail(id);
        if (thumb.status !== 'missing') return thumb;
        await client.dashboards.get(id);
        const caps = await client.capabilities();
        return caps.thumbnails === false ? { status: 'off' as const } : thumb;
      },
      { notFound: (env) => `Dashboard ${id} in environment '${env.name}'` },
    );
  }
}

function toDashboardDetail(env: EnvironmentRow, dashboard: DashboardDetail, charts: DashboardChart[], datasets: DashboardDataset[]) {
  return {
    ...toDashboardItem(env, dashboard),
    css: dashboard.css ?? null,
    json_metadata: parseJsonObject(dashboard.json_metadata),
    position: parseJsonObject(dashboard.position_json),
    charts: charts.map((c) => ({
      id: c.id,
      name: c.slice_name ?? '',
      viz_type: (c.form_data?.viz_type as string | undefined) ?? null,
      dataset_id: datasetIdOf(c.form_data),
      description: c.description ?? null,
      changed_on: toUtcIso(c.changed_on),
      url: absolute(env.base_url, c.slice_url),
    })),
    datasets: datasets.map((d) => ({
      id: d.id,
      uid: d.uid ?? null,
      name: d.name ?? d.table_name ?? String(d.id),
      table_name: d.table_name ?? null,
      schema: d.schema ?? null,
      kind: d.sql ? ('virtual' as const) : ('physical' as const),
      sql: d.sql ?? null,
      database: d.database
        ? { id: d.database.id, name: d.database.name ?? d.database.database_name ?? null, backend: d.database.backend ?? null }
        : null,
      column_count: d.columns?.length ?? 0,
      metric_count: d.metrics?.length ?? 0,
    })),
    env_id: env.id,
  };
}
