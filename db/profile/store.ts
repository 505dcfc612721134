/**
 * The profile store: the only code that reads or writes `profile_preferences`, one row per user
 * (the profile-default dashboard filter, the bound Superset username, a git identity).
 */
import type { Knex } from 'knex';

export interface ProfilePreferenceRecord {
  user_id: string;
  profile_filter_enabled: boolean;
  superset_username: string | null;
  git_username: string | null;
  git_email: string | null;
  created_at: Date;
  updated_at: Date;
}

export type ProfilePreferencePatch = Partial<
  Pick<ProfilePreferenceRecord, 'profile_filter_enabled' | 'superset_username' | 'git_username' | 'git_email'>
>;

export class ProfileStore {
  private readonly knex: Knex;

  constructor(knex: Knex) {
    this.knex = knex;
  }

  /** The saved row, or undefined when the user never saved preferences (defaults apply). */
  async get(userId: string): Promise<ProfilePreferenceRecord | undefined> {
    return this.knex<ProfilePreferenceRecord>('profile_preferences').where({ user_id: userId }).first();
  }

  /** Inserts or changes only the given fields, in one statement; returns the saved row. */
  async save(userId: string, patch: ProfilePreferencePatch): Promise<ProfilePreferenceRecord> {
    const [row] = await this.knex<ProfilePreferenceRecord>('profile_preferences')
      .insert({ user_id: userId, ...patch })
      .onConflict('user_id')
      .merge({ ...patch, updated_at: this.knex.fn.now() as unknown as Date })
      .returning('*');
    return row as ProfilePreferenceRecord;
  }
}
