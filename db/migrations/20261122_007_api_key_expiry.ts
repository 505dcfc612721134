import type { Knex } from 'knex';

/**
 * API keys: an optional expiry, and who created them (a user, or another key holding
 * `admin:settings:WRITE`). The creator's name is kept as written at creation, so the answer
 * still names them after the account is renamed or deleted.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('api_keys', (t) => {
    t.timestamp('expires_at', { useTz: true }).nullable();
    t.text('created_by_username').nullable();
    t.uuid('created_by_api_key_id').nullable().references('api_keys.id').onDelete('SET NULL');
  });
  await knex.raw('update api_keys k set created_by_username = u.username from users u where u.id = k.created_by');
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('api_keys', (t) => {
    t.dropColumn('created_by_api_key_id');
    t.dropColumn('created_by_username');
    t.dropColumn('expires_at');
  });
}
