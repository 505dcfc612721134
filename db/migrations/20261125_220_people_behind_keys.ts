import type { Knex } from 'knex';

/**
 * People behind keys and schedules. A schedule made with an API key records the key, so revoking
 * it stops the schedule's runs (its creator is the person the key acts for). A release candidate
 * records everyone who imported or changed its artifacts: each of them counts as a requester and
 * may not approve it. Schedules made by a key before this have no person recorded and fail their
 * runs, saying so, until someone makes them again.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('schedules', (t) => {
    // No foreign key: key rows are never deleted (revoking is a soft delete), and a missing row counts as revoked.
    t.uuid('created_by_api_key_id').nullable();
  });
  await knex.schema.alterTable('release_candidates', (t) => {
    t.specificType('artifacts_changed_by', 'text[]').notNullable().defaultTo('{}');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('release_candidates', (t) => t.dropColumn('artifacts_changed_by'));
  await knex.schema.alterTable('schedules', (t) => t.dropColumn('created_by_api_key_id'));
}
