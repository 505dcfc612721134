/**
 * Upstream accounts: FAB's security API (`FAB_ADD_SECURITY_API`, on in 6.x) when the service
 * account may read it, otherwise the dashboards' related owners (which every release answers).
 */
import { SupersetApiError, SupersetAuthError, SupersetForbiddenError, SupersetNotFoundError } from '../errors.ts';
import { MAX_PAGE_SIZE } from '../transport/paging.ts';
import type { SupersetTransport } from '../transport/transport.ts';
import type { ListQuery, ListResponse, UpstreamAccount } from '../types.ts';

const USERNAME_TTL_MS = 60_000;
const USERS = '/api/v1/security/users/';

/** The security API is off (FAB_ADD_SECURITY_API) or closed to the service account: read people another way. */
export function securityApiClosed(err: unknown): boolean {
  if (err instanceof SupersetForbiddenError || err instanceof SupersetNotFoundError || err instanceof SupersetAuthError) return true;
  return err instanceof SupersetApiError && err.upstreamStatus === 405;
}

/** Who a username is upstream: the account ids, their display names, and whether the security API said so exactly. */
export interface ResolvedUsername {
  ids: number[];
  aliases: string[];
  exact: boolean;
  /** The matching accounts, so a caller can name them when more than one matched (possible only without the security API). */
  candidates: Array<{ id: number; display_name: string; email: string | null }>;
}

interface RelatedOwner {
  id: number;
  text: string;
  email: string | null;
  active: boolean | null;
}

type SecurityUser = { id: number; username: string; first_name?: string; last_name?: string; email?: string; active?: boolean };

export function displayName(u: { first_name?: string | null; last_name?: string | null; username?: string | null }): string {
  const name = [u.first_name, u.last_name]
    .filter((s) => s && s.trim())
    .join(' ')
    .trim();
  return name || u.username || '';
}

export class Security {
  private readonly usernames = new Map<string, { at: number; value: Promise<ResolvedUsername> }>();

  private readonly http: SupersetTransport;

  constructor(http: SupersetTransport) {
    this.http = http;
  }

  /**
   * Users from the security API, normalised; undefined when the instance does not expose it to
   * the service account.
   */
  async users(filters: ListQuery['filters'], pageSize = MAX_PAGE_SIZE): Promise<UpstreamAccount[] | undefined> {
    try {
      const body = await this.http.serialList(USERS, () =>
        this.http.getJson<ListResponse<SecurityUser>>(USERS, {
          q: { filters, columns: ['id', 'username', 'first_name', 'last_name', 'email', 'active'], page: 0, page_size: pageSize },
        }),
      );
      return (body.result ?? []).map((u) => ({
        id: u.id,
        username: u.username ?? null,
        display_name: displayName(u),
        first_name: u.first_name ?? null,
        last_name: u.last_name ?? null,
        email: u.email ?? null,
        active: u.active ?? null,
      }));
    } catch (err) {
      if (securityApiClosed(err)) return undefined;
      throw err;
    }
  }

  /**
   * Upstream accounts matching `search` (name, username), normalised. Usernames come from the
   * security API when readable; otherwise `username` is null.
   */
  async findAccounts(search: string, limit = 25): Promise<UpstreamAccount[]> {
    const related = await this.relatedOwners(search.trim(), limit);
    if (!related.length) return [];
    const users = await this.users([{ col: 'id', opr: 'in', value: related.map((r) => r.id) }]);
    const byId = new Map((users ?? []).map((u) => [u.id, u]));
    return related.map(
      (r) =>
        byId.get(r.id) ?? {
          id: r.id,
          username: null,
          display_name: r.text,
          first_name: null,
          last_name: null,
          email: r.email,
          active: r.active,
        },
    );
  }

  /**
   * resolveUsername, remembered for a minute per client (so per environment): a list page with
   * the profile filter then costs no user lookup. A renamed upstream user is seen within that minute.
   */
  resolveUsernameCached(username: string): Promise<ResolvedUsername> {
    const key = username.trim().toLowerCase();
    const hit = this.usernames.get(key);
    if (hit && Date.now() - hit.at < USERNAME_TTL_MS) return hit.value;
    const value = this.resolveUsername(username);
    if (this.usernames.size >= 1000) this.usernames.clear();
    this.usernames.set(key, { at: Date.now(), value });
    // expected: a failed read is only forgotten here (asked again later); whoever awaits it meets the error.
    value.catch(() => this.usernames.delete(key));
    return value;
  }

  /**
   * The account(s) whose username equals `username` (trimmed, case-insensitive), with their
   * display names as aliases. One or two calls; used once per profile-filtered listing.
   * Without a readable security API, falls back to `related/owners` and keeps candidates whose
   * email local part, email or display name equals the username.
   */
  async resolveUsername(username: string): Promise<ResolvedUsername> {
    const wanted = username.trim().toLowerCase();
    if (!wanted) return { ids: [], aliases: [], exact: true, candidates: [] };
    const users = await this.users([{ col: 'username', opr: 'ct', value: username.trim() }]);
    if (users) {
      const hits = users.filter((u) => (u.username ?? '').trim().toLowerCase() === wanted);
      return {
        ids: hits.map((u) => u.id),
        aliases: unique(hits.map((u) => u.display_name).filter(Boolean)),
        exact: true,
        candidates: hits.map((u) => ({ id: u.id, display_name: u.display_name, email: u.email })),
      };
    }
    const related = await this.relatedOwners(username.trim(), MAX_PAGE_SIZE);
    const hits = related.filter((r) => {
      const email = (r.email ?? '').toLowerCase();
      return email === wanted || email.split('@')[0] === wanted || r.text.trim().toLowerCase() === wanted;
    });
    return {
      ids: hits.map((r) => r.id),
      aliases: unique(hits.map((r) => r.text)),
      exact: false,
      candidates: hits.map((r) => ({ id: r.id, display_name: r.text, email: r.email })),
    };
  }

  /**
   * `GET /api/v1/dashboard/related/owners`: accounts whose "first last" name or username contains
   * `filter`, case-insensitively. Needs no security API.
   */
  private async relatedOwners(filter = '', pageSize = 25): Promise<RelatedOwner[]> {
    const body = await this.http.getJson<{ result?: Array<{ value: number; text: string; extra?: { email?: string; active?: boolean } }> }>(
      '/api/v1/dashboard/related/owners',
      { q: { filter, page: 0, page_size: Math.min(MAX_PAGE_SIZE, Math.max(1, pageSize)) } },
    );
    return (body.result ?? []).map((r) => ({ id: r.value, text: r.text, email: r.extra?.email ?? null, active: r.extra?.active ?? null }));
  }
}

function unique<T>(xs: T[]): T[] {
  return [...new Set(xs)];
}
