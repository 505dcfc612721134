import type { Knex } from 'knex';
import * as m001 from './20261122_001_tasks.ts';
import * as m002 from './20261122_002_identity.ts';
import * as m003 from './20261122_003_environments.ts';
import * as m004 from './20261122_004_oidc.ts';
import * as m005 from './20261122_005_backups.ts';
import * as m006 from './20261122_006_migration_items.ts';
import * as m007 from './20261122_007_api_key_expiry.ts';
import * as m010 from './20261122_010_task_summary.ts';
import * as m020 from './20261122_020_git.ts';
import * as m030 from './20261122_030_datasets.ts';
import * as m060 from './20261123_060_clean_release.ts';
import * as m140 from './20261123_140_dataset_review.ts';
import * as m150 from './20261123_150_assistant.ts';
import * as m160 from './20261123_160_migration_target_state.ts';
import * as m170 from './20261123_170_schedules.ts';
import * as m180 from './20261123_180_task_items.ts';
import * as m190 from './20261123_190_migration_target_state_source.ts';
import * as m200 from './20261125_200_task_approval.ts';
import * as m210 from './20261125_210_idempotency_scope.ts';
import * as m220 from './20261125_220_people_behind_keys.ts';
import * as m230 from './20261125_230_target_state_verification.ts';
import * as m240 from './20261125_240_assistant_pending_command.ts';
import * as m280 from './20261125_280_browser_screenshots.ts';
import * as m265 from './20261125_265_review_launches.ts';
import * as m270 from './20261125_270_environment_rules.ts';
import * as m300 from './20261202_300_validation_verdicts.ts';
import * as m310 from './20261202_310_git_reviews.ts';
import * as m320 from './20261202_320_target_state_verified_at.ts';

interface MigrationModule {
  up(knex: Knex): Promise<void>;
  down(knex: Knex): Promise<void>;
}

/** A static list, so migrations behave the same under node, vitest and the Temporal worker. */
const migrations: Array<[string, MigrationModule]> = [
  ['20261122_001_tasks', m001],
  ['20261122_002_identity', m002],
  ['20261122_003_environments', m003],
  ['20261122_004_oidc', m004],
  ['20261122_005_backups', m005],
  ['20261122_006_migration_items', m006],
  ['20261122_007_api_key_expiry', m007],
  ['20261122_010_task_summary', m010],
  ['20261122_020_git', m020],
  ['20261122_030_datasets', m030],
  ['20261123_060_clean_release', m060],
  ['20261123_140_dataset_review', m140],
  ['20261123_150_assistant', m150],
  ['20261123_160_migration_target_state', m160],
  ['20261123_170_schedules', m170],
  ['20261123_180_task_items', m180],
  ['20261123_190_migration_target_state_source', m190],
  ['20261125_200_task_approval', m200],
  ['20261125_210_idempotency_scope', m210],
  ['20261125_220_people_behind_keys', m220],
  ['20261125_230_target_state_verification', m230],
  ['20261125_240_assistant_pending_command', m240],
  ['20261125_265_review_launches', m265],
  ['20261125_270_environment_rules', m270],
  ['20261125_280_browser_screenshots', m280],
  ['20261202_300_validation_verdicts', m300],
  ['20261202_310_git_reviews', m310],
  ['20261202_320_target_state_verified_at', m320],
];

export const migrationSource: Knex.MigrationSource<[string, MigrationModule]> = {
  getMigrations: async () => migrations,
  getMigrationName: ([name]) => name,
  getMigration: async ([, mod]) => mod,
};
