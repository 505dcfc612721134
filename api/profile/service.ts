import type { ProfilePreferencePatch, ProfilePreferenceRecord, ProfileStore } from '../../db/profile/store.ts';
import { ValidationError } from '../../lib/errors.ts';

export function toPreferenceView(userId: string, row: ProfilePreferenceRecord | undefined) {
  return {
    user_id: userId,
    profile_filter_enabled: row?.profile_filter_enabled ?? false,
    superset_username: row?.superset_username ?? null,
    git_username: row?.git_username ?? null,
    git_email: row?.git_email ?? null,
    created_at: row ? new Date(row.created_at).toISOString() : null,
    updated_at: row ? new Date(row.updated_at).toISOString() : null,
  };
}

/** A user's profile preferences; defaults (filter off, nothing bound) until first saved. */
export class ProfileService {
  private readonly store: ProfileStore;

  constructor(deps: { store: ProfileStore }) {
    this.store = deps.store;
  }

  /** The saved row, or undefined when the user never saved preferences. */
  saved(userId: string): Promise<ProfilePreferenceRecord | undefined> {
    return this.store.get(userId);
  }

  async get(userId: string) {
    return toPreferenceView(userId, await this.store.get(userId));
  }

  /** Changes only the fields given; the filter cannot be on without a bound Superset username (422). */
  async update(userId: string, patch: ProfilePreferencePatch) {
    const current = await this.store.get(userId);
    const enabled = patch.profile_filter_enabled ?? current?.profile_filter_enabled ?? false;
    const bound = patch.superset_username !== undefined ? patch.superset_username : (current?.superset_username ?? null);
    if (enabled && !bound) {
      const errors = [
        { field: 'body.superset_username', message: 'a bound superset_username is required while profile_filter_enabled is true' },
      ];
      throw new ValidationError(errors[0].message, errors, 422);
    }
    return toPreferenceView(userId, await this.store.save(userId, patch));
  }
}
