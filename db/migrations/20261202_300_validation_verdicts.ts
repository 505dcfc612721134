import type { Knex } from 'knex';

/**
 * What the content validator remembers across validations, per environment, dashboard and chart
 * (chart_id 0: the dashboard itself): the latest verdict and when it was made, the latest proven
 * state (passed or broken; a not_verifiable verdict proves neither), when the current broken run
 * began and when it last passed. One owner: db/validation/verdicts.ts.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('validation_verdicts', (t) => {
    t.uuid('env_id').notNullable().references('environments.id').onDelete('CASCADE');
    t.integer('dashboard_id').notNullable();
    t.integer('chart_id').notNullable();
    t.text('verdict').notNullable();
    t.text('proven').nullable();
    t.timestamp('first_seen_broken_at', { useTz: true }).nullable();
    t.timestamp('last_passed_at', { useTz: true }).nullable();
    t.timestamp('checked_at', { useTz: true }).notNullable();
    t.text('task_id').nullable();
    t.primary(['env_id', 'dashboard_id', 'chart_id']);
  });
  await knex.raw(`alter table validation_verdicts add constraint validation_verdicts_proven check (proven in ('passed', 'broken'))`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('validation_verdicts');
}
