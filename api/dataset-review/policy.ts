/**
 * Who may see and act on a dataset review session, in one place (as Backstage's authorized service
 * wrappers keep a resource's rules beside it); the session store takes plain filters and decides
 * nothing.
 *
 * - A session is its owner's alone, signed in. Anyone else, an admin too, finds no such session
 *   (404, so an id tells nothing) and lists none; so does an API key, its creator's included.
 * - Starting one needs a person signed in (400, saying why).
 * What a preview may show (the dataset's rows) is a permission, not ownership: `preview.ts`.
 */
import type { ReviewSessionStore, SessionFilter, SessionPatch, SessionRow } from '../../db/dataset-review/sessions.ts';
import type { Transaction } from '../../db/stores.ts';
import { NotFoundError, ValidationError } from '../../lib/errors.ts';
import { personalUserId, type Principal } from '../auth/principal.ts';

export const reviewPolicy = {
  /** The filter every read and write of the caller's sessions goes through; null: they reach none. */
  scope(principal: Principal): SessionFilter | null {
    const own = personalUserId(principal);
    return own ? { owner_id: own } : null;
  },
  /** Who a new session belongs to: the person signed in (400 for an API key). */
  owner(principal: Principal): string {
    const own = personalUserId(principal);
    if (!own)
      throw new ValidationError(
        "A dataset review session belongs to a person: sign in as one (an API key does not reach its creator's sessions)",
      );
    return own;
  },
};

/** The sessions a caller may reach: the session store behind the policy. */
export interface AuthorizedSessions {
  /** The session, or 404 when it is not the caller's. */
  get(id: string, trx?: Transaction): Promise<SessionRow>;
  list(page: number, pageSize: number): Promise<{ rows: SessionRow[]; total: number }>;
  /** The store's conditional version update (409 when stale), on the caller's session only. */
  advance(id: string, version: number, patch?: SessionPatch, trx?: Transaction): Promise<SessionRow>;
  delete(id: string, version: number): Promise<void>;
}

export function authorizedSessions(store: ReviewSessionStore, principal: Principal): AuthorizedSessions {
  const scope = reviewPolicy.scope(principal);
  const none = async (id: string): Promise<never> => {
    throw new NotFoundError('Dataset review session', id);
  };
  if (!scope) return { get: none, advance: none, delete: none, list: async () => ({ rows: [], total: 0 }) };
  return {
    get: (id, trx) => store.get(id, scope, trx),
    list: (page, pageSize) => store.list(scope, page, pageSize),
    advance: (id, version, patch, trx) => store.advance(id, scope, version, patch, trx),
    delete: (id, version) => store.delete(id, scope, version),
  };
}
