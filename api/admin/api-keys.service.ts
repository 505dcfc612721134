import { isPermission } from '../../contracts/permissions.ts';
import type { Context } from 'koa';
import type { ApiKeyRecord, IdentityStores } from '../../db/identity/index.ts';
import { randomToken, sha256Hex } from '../../lib/crypto.ts';
import { AppError, NotFoundError } from '../../lib/errors.ts';
import { can, isAdmin, type Principal } from '../auth/principal.ts';
import type { SecurityEventService } from '../auth/security-events.ts';

const KEY_PREFIX = 'sy_';

const iso = (d: Date | null) => (d ? d.toISOString() : null);
// Never key_hash: list items are built field by field.
const toItem = (r: ApiKeyRecord) => ({
  id: r.id,
  name: r.name,
  key_prefix: r.key_prefix,
  permissions: r.permissions,
  active: r.active,
  expires_at: iso(r.expires_at),
  expired: r.expires_at !== null && r.expires_at.getTime() <= Date.now(),
  created_by: !r.created_by_username
    ? null
    : r.created_by_api_key_id
      ? { kind: 'api_key' as const, id: r.created_by_api_key_id, username: r.created_by_username }
      : { kind: 'user' as const, id: r.created_by, username: r.created_by_username },
  created_at: r.created_at.toISOString(),
  revoked_at: iso(r.revoked_at),
  last_used_at: iso(r.last_used_at),
});

/** A key may carry only what its creator holds (role Admin: anything), so minting one never escalates. */
function assertCreatorHolds(principal: Principal, permissions: string[]): void {
  if (isAdmin(principal)) return;
  const missing = permissions.filter((p) => !isPermission(p) || !can(principal, p));
  if (!missing.length) return;
  throw new AppError(
    403,
    'forbidden',
    'Forbidden',
    `An API key may only carry permissions its creator holds; you lack ${missing.join(', ')}`,
    { extra: { missing_permissions: missing } },
  );
}

/** API keys: the raw key is returned once, only its SHA-256 is stored; revoking is a soft delete. */
export class ApiKeyService {
  private readonly identity: IdentityStores;
  private readonly events: SecurityEventService;

  constructor(deps: { identity: IdentityStores; events: SecurityEventService }) {
    this.identity = deps.identity;
    this.events = deps.events;
  }

  async list() {
    return { items: (await this.identity.apiKeys.list()).map(toItem) };
  }

  async create(ctx: Context, principal: Principal, input: { name: string; permissions: string[]; expires_at?: Date }) {
    assertCreatorHolds(principal, input.permissions);
    const raw = KEY_PREFIX + randomToken(32);
    const row = await this.identity.apiKeys.create({
      name: input.name,
      key_hash: sha256Hex(raw),
      key_prefix: raw.slice(0, 10),
      permissions: input.permissions,
      expires_at: input.expires_at ?? null,
      // A key made by a key acts for the same person: created_by is that person, the key is named beside.
      created_by: principal.userId,
      created_by_username: principal.kind === 'api_key' ? `api-key:${principal.apiKeyName}` : principal.username,
      created_by_api_key_id: principal.apiKeyId ?? null,
    });
    await this.events.recordChange(ctx, principal, 'API_KEY_CREATED', {
      api_key_id: row.id,
      name: row.name,
      permissions: row.permissions,
      expires_at: iso(row.expires_at),
    });
    // `key` is the deprecated alias of the spec's `raw_key`, for clients not yet reading `raw_key`.
    return { ...toItem(row), raw_key: raw, key: raw };
  }

  /** 404 when the key is unknown or already revoked. */
  async revoke(ctx: Context, principal: Principal, id: string) {
    const row = await this.identity.apiKeys.revoke(id);
    if (!row) throw new NotFoundError('Active API key', id);
    await this.events.recordChange(ctx, principal, 'API_KEY_REVOKED', { api_key_id: row.id, name: row.name });
    return { id: row.id, active: false as const, revoked_at: row.revoked_at!.toISOString() };
  }
}
