/**
 * Who is calling: a signed-in user (JWT) or an API key. Resolved once per request by the auth
 * middleware. An API key acts for the person who created it (the person at the root when a key
 * made it): `userId` and `username` are theirs, so what a key starts is that person's and an
 * approval compares people, never sessions or keys.
 */
import type { Permission } from '../../contracts/permissions.ts';

export interface Principal {
  kind: 'user' | 'api_key';
  /** The person behind the call; for an API key, the user at the root of its creators. */
  userId: string;
  username: string;
  roles: string[];
  /** For an API key: its own permissions that its creator holds right now (see keyPermissions). */
  permissions: ReadonlySet<string>;
  scopes: string[];
  sessionId?: string;
  apiKeyId?: string;
  apiKeyName?: string;
  /** The MCP client (its clientInfo name) through which the call came, for logs and the audit. */
  agent?: string;
}

export const ADMIN_ROLE = 'Admin';
export const ADMIN_SCOPE = 'admin';

/** Permission names are `resource:ACTION` (`tasks:READ`, `admin:settings:WRITE`). */
export function can(principal: Principal, permission: Permission): boolean {
  // API keys carry exactly their own permissions (already cut to their creator's), never a role's.
  if (principal.kind === 'user' && (principal.roles.includes(ADMIN_ROLE) || principal.scopes.includes(ADMIN_SCOPE))) return true;
  return principal.permissions.has(permission);
}

export function isAdmin(principal: Principal): boolean {
  return principal.kind === 'user' && (principal.roles.includes(ADMIN_ROLE) || principal.scopes.includes(ADMIN_SCOPE));
}

/**
 * The user whose own things (profile preferences, assistant conversations, dataset review
 * sessions, their tasks without `tasks:READ`) this caller reaches: a signed-in user only. A key
 * acts for its creator in what it starts and decides, and reaches nothing beyond its permissions.
 */
export function personalUserId(principal: Principal): string | null {
  return principal.kind === 'user' ? principal.userId : null;
}

/** How logs and events name the caller: the person, and the key when one was used (`alice (API key 'ci')`). */
export function actorLabel(principal: Pick<Principal, 'kind' | 'username' | 'apiKeyName' | 'agent'>): string {
  const who = principal.kind === 'api_key' ? `${principal.username} (API key '${principal.apiKeyName ?? '?'}')` : principal.username;
  return principal.agent ? `${who} via MCP client '${principal.agent}'` : who;
}
