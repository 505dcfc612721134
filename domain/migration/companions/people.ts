/**
 * People and roles across environments: an account maps by username, then e-mail (the first
 * that finds exactly one account decides), never by its full name, which a person may set for
 * themselves (a profile page, an IdP's claim): a name-only match is only reported; a role by its name. Each list is read once
 * per scope and environment, and only by what maps by it (owners and reports by accounts, the
 * roles kind by roles). The scope is a migration task's snapshot (../caches.ts, renewed every
 * minute), else the activity. Switchyard never creates an account or a role.
 */
import type { SupersetClient } from '../../../lib/superset/client.ts';
import type { UpstreamAccount, UpstreamRole } from '../../../lib/superset/types.ts';

/** An environment's accounts, which owners and the owners of reports are mapped by (roles are read on their own: rolesOf). */
export interface Directory {
  accounts: UpstreamAccount[];
}

/** Per scope (an activity's input object, or a task's source snapshot), client and list: clients are pooled across activities, and a person created since must be seen. */
const cache = new WeakMap<object, Map<SupersetClient, Map<'accounts' | 'roles', Promise<unknown>>>>();

/** One of the environment's two lists, read once per scope (a failed read is asked again). */
function listOnce<T>(client: SupersetClient, scope: object, list: 'accounts' | 'roles', read: () => Promise<T>): Promise<T> {
  let mine = cache.get(scope);
  if (!mine) cache.set(scope, (mine = new Map()));
  let kept = mine.get(client);
  if (!kept) mine.set(client, (kept = new Map()));
  const hit = kept.get(list) as Promise<T> | undefined;
  if (hit) return hit;
  const asked = read();
  asked.catch(() => {
    // expected: a failed read is only forgotten here (asked again later); whoever awaits it meets the error.
    if (kept.get(list) === asked) kept.delete(list);
  });
  kept.set(list, asked);
  return asked;
}

/** The environment's roles, read once per scope: only the roles kind maps by them, and needs no account (its comparison comes before the import). */
export function rolesOf(client: SupersetClient, scope: object): Promise<UpstreamRole[]> {
  return listOnce(client, scope, 'roles', () => client.roles.all());
}

/** The environment's accounts, read once per scope (the activity's input, or the task's source snapshot). */
export function directoryOf(client: SupersetClient, scope: object): Promise<Directory> {
  return listOnce(client, scope, 'accounts', () => client.users.all().then((u) => u.accounts)).then((accounts) => ({ accounts }));
}

/** How an account is named in reports: its username, else its e-mail, else its name. */
export function labelOf(a: Pick<UpstreamAccount, 'username' | 'email' | 'display_name'>): string {
  return a.username || a.email || a.display_name || '?';
}

const norm = (s: string | null | undefined) => (s ?? '').trim().toLowerCase();

/** The target's account for a source account: by username, then e-mail; null when none (or several) match. */
export function mapAccount(src: UpstreamAccount, target: Directory): UpstreamAccount | null {
  const keys: Array<(a: UpstreamAccount) => string> = [(a) => norm(a.username), (a) => norm(a.email)];
  for (const key of keys) {
    const k = key(src);
    if (!k) continue;
    const hits = target.accounts.filter((a) => key(a) === k);
    if (hits.length === 1) return hits[0]!;
  }
  return null;
}

/** A target account with the source account's full name alone (reported, never applied: a person can take any name). */
export function sameNameOnly(src: UpstreamAccount, target: Directory): UpstreamAccount | null {
  const name = norm(src.display_name);
  if (!name) return null;
  const hits = target.accounts.filter((a) => norm(a.display_name) === name);
  return hits.length === 1 ? hits[0]! : null;
}

/** A source account by its id, from the directory (or from what an object's answer says of it). */
export function sourceAccount(
  dir: Directory,
  owner: { id: number; first_name?: string | null; last_name?: string | null; email?: string | null },
): UpstreamAccount {
  const known = dir.accounts.find((a) => a.id === owner.id);
  if (known) return known;
  const name = [owner.first_name, owner.last_name].filter(Boolean).join(' ');
  return {
    id: owner.id,
    username: null,
    display_name: name,
    first_name: owner.first_name ?? null,
    last_name: owner.last_name ?? null,
    email: owner.email ?? null,
    active: null,
  };
}

export function roleNamed(dir: { roles: UpstreamRole[] }, name: string): UpstreamRole | null {
  return dir.roles.find((r) => r.name === name) ?? null;
}
