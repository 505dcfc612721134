import type { Knex } from 'knex';

/**
 * The command a user's message left waiting for its missing part ("перенеси дашборд 5" → "откуда
 * и куда?"), kept on that message so the next reply completes it on whichever API process takes
 * it; null when the message's answer asked for nothing.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('assistant_messages', (t) => {
    t.text('pending_command').nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('assistant_messages', (t) => t.dropColumn('pending_command'));
}
