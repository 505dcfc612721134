import type { Knex } from 'knex';

/**
 * A task that writes into a protected environment waits for another person's approval; the
 * decision (who, when, what they said, or that the window ran out) is kept on the task's row so
 * its answer and report show it, whatever the task kind's result looks like.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('tasks', (t) => {
    t.jsonb('approval').nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('tasks', (t) => t.dropColumn('approval'));
}
