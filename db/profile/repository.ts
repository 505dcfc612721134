import type { Knex } from 'knex';

/** Per-user preferences: the profile-default dashboard filter, the bound Superset username, a git identity. */
export interface ProfilePreferenceRow {
  user_id: string;
  profile_filter_enabled: boolean;
  superset_username: string | null;
  git_username: string | null;
  git_email: string | null;
  created_at: Date;
  updated_at: Date;
}

export type ProfilePreferencePatch = Partial<
  Pick<ProfilePreferenceRow, 'profile_filter_enabled' | 'superset_username' | 'git_username' | 'git_email'>
>;

/** The saved row, or undefined when the user never saved preferences (defaults apply). */
export async function getPreferences(knex: Knex, userId: string): Promise<ProfilePreferenceRow | undefined> {
  return knex<ProfilePreferenceRow>('profile_preferences').where({ user_id: userId }).first();
}

/** Insert or change only the given fields; returns the saved row. */
export async function savePreferences(knex: Knex, userId: string, patch: ProfilePreferencePatch): Promise<ProfilePreferenceRow> {
  const [row] = await knex<ProfilePreferenceRow>('profile_preferences')
    .insert({ user_id: userId, ...patch })
    .onConflict('user_id')
    .merge({ ...patch, updated_at: knex.fn.now() as unknown as Date })
    .returning('*');
  return row;
}
