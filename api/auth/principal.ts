/** Who is calling: a signed-in user (JWT) or an API key. Resolved once per request by the auth middleware. */
export interface Principal {
  kind: 'user' | 'api_key';
  /** The user behind the call; for an API key, the admin who created it. */
  userId: string | null;
  username: string;
  roles: string[];
  permissions: ReadonlySet<string>;
  scopes: string[];
  sessionId?: string;
  apiKeyId?: string;
}

export const ADMIN_ROLE = 'Admin';
export const ADMIN_SCOPE = 'admin';

/** Permission names are `resource:ACTION` (`tasks:READ`, `admin:settings:WRITE`). */
export function can(principal: Principal, permission: string): boolean {
  // API keys carry exactly their own permissions, never a role's.
  if (principal.kind === 'user' && (principal.roles.includes(ADMIN_ROLE) || principal.scopes.includes(ADMIN_SCOPE))) return true;
  return principal.permissions.has(permission);
}

export function isAdmin(principal: Principal): boolean {
  return principal.kind === 'user' && (principal.roles.includes(ADMIN_ROLE) || principal.scopes.includes(ADMIN_SCOPE));
}
