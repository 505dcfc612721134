/**
 * The spec's profile-default filter rules for the dashboard list (../shared/spec/service-api.md):
 *  1. applies when the caller's preference has the toggle on, a bound username, and
 *     page_context = dashboards_main;
 *  2. a dashboard matches when the bound username equals an owner or the last modifier,
 *     trimmed and case-insensitively; owners may be plain values or objects resolving to a username
 *     (plain values are compared even when the username resolves to no account; a username that
 *     resolves to several accounts is reported as ambiguous, with the candidates);
 *  3. display-name aliases are resolved once per request, never per dashboard;
 *  4. no match: total 0, deterministic paging, filter still reported as applied;
 *  5. override_show_all=true disables it for that page (applied false);
 *  6. page_context=other disables it and source_page says `other`.
 */
import type { ProfilePreferenceRecord } from '../../db/profile/store.ts';
import type { DashboardListItem, UserSummary } from '../../lib/superset/types.ts';
import type { ResolvedUsername } from '../../lib/superset/resources/security.ts';
import type { EffectiveProfileFilter, PageContext, ProfileResolution } from './schemas.ts';

export function decideProfileFilter(input: {
  preference: Pick<ProfilePreferenceRecord, 'profile_filter_enabled' | 'superset_username'> | undefined;
  pageContext: PageContext;
  overrideShowAll: boolean;
  hasUser: boolean;
}): EffectiveProfileFilter {
  const username = input.preference?.superset_username?.trim() || null;
  const base = {
    applied: false,
    source_page: input.pageContext,
    override_show_all: input.overrideShowAll,
    username,
    match_logic: 'owners_or_modified_by' as const,
  };
  if (input.pageContext === 'other') return { ...base, reason: 'page_context_other' };
  if (input.overrideShowAll) return { ...base, reason: 'override_show_all' };
  if (!input.hasUser) return { ...base, reason: 'anonymous_caller' };
  if (!input.preference?.profile_filter_enabled) return { ...base, reason: 'disabled' };
  if (!username) return { ...base, reason: 'no_bound_username' };
  return { ...base, applied: true, reason: 'applied' };
}

/** How a resolution is reported: one account, none, or several (the candidates named). */
export function resolutionOf(r: ResolvedUsername): ProfileResolution {
  const status = r.ids.length === 0 ? 'unresolved' : r.ids.length === 1 ? 'resolved' : 'ambiguous';
  return { status, via: r.exact ? 'security_api' : 'related_owners', candidates: r.candidates };
}

/** Who the bound username is upstream, resolved once per request (rule 3). */
export interface ProfileIdentity {
  /** Lower-cased, trimmed bound username. */
  username: string;
  /** Upstream user ids whose username equals it. */
  ids: ReadonlySet<number>;
  /** Lower-cased display names of those users ("first last"). */
  aliases: ReadonlySet<string>;
}

export function normaliseName(value: string | null | undefined): string {
  return (value ?? '').trim().replace(/\s+/g, ' ').toLowerCase();
}

function userMatches(user: UserSummary | string | null | undefined, who: ProfileIdentity): boolean {
  if (user === null || user === undefined) return false;
  if (typeof user === 'string') {
    const v = normaliseName(user);
    return v === who.username || who.aliases.has(v);
  }
  // An account object: one of the resolved accounts, or one naming the username itself.
  if (typeof user.id === 'number') return who.ids.has(user.id) || (!!user.username && normaliseName(user.username) === who.username);
  if (user.username) return normaliseName(user.username) === who.username;
  const name = normaliseName([user.first_name, user.last_name].filter(Boolean).join(' '));
  return !!name && who.aliases.has(name);
}

/** Rule 2 on one list row, without any further call. */
export function matchesProfile(item: DashboardListItem, who: ProfileIdentity): boolean {
  if ((item.owners ?? []).some((o) => userMatches(o, who))) return true;
  if (item.changed_by) return userMatches(item.changed_by, who);
  return !!item.changed_by_name && userMatches(item.changed_by_name, who);
}

/**
 * Merges two lists each sorted by `changed_on_utc` descending into one, keeping each id once.
 * Deterministic for the same inputs (ties: the first list's row first).
 */
export function mergeByChangedOn<T extends { id: number; changed_on_utc?: string | null }>(a: T[], b: T[]): T[] {
  const out: T[] = [];
  const seen = new Set<number>();
  let i = 0;
  let j = 0;
  const key = (r: T) => r.changed_on_utc ?? '';
  while (i < a.length || j < b.length) {
    const takeA = j >= b.length || (i < a.length && key(a[i]) >= key(b[j]));
    const row = takeA ? a[i++] : b[j++];
    if (seen.has(row.id)) continue;
    seen.add(row.id);
    out.push(row);
  }
  return out;
}
