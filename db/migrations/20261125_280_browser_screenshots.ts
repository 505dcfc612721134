import type { Knex } from 'knex';

/**
 * The browser check's screenshots (`verification: "browser"`): one PNG per task, dashboard and
 * side (the target's copy, and the source it came from), read back by GET
 * /api/tasks/{id}/screenshots/{screenshot_id}; they go with their task.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('browser_screenshots', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.text('task_id').notNullable().references('tasks.id').onDelete('CASCADE');
    // The dashboard's id in the target (one target per task), and which side was photographed.
    t.integer('dashboard_id').notNullable();
    t.text('side').notNullable();
    t.binary('png').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['task_id', 'dashboard_id', 'side']);
  });
  await knex.raw(`alter table browser_screenshots add constraint browser_screenshots_side check (side in ('target', 'source'))`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('browser_screenshots');
}
