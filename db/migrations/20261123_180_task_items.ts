import type { Knex } from 'knex';

/**
 * The items of a task too large to carry its items through its workflow (a backup of 1,000
 * dashboards runs as a chain of workflow runs, continue-as-new): each item's outcome is written
 * here by the activity that produced it, once per (task, position), and the task's result is
 * assembled from these rows when it ends. Generic on purpose: any item-by-item task kind may use it.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('task_items', (t) => {
    t.text('task_id').notNullable().references('tasks.id').onDelete('CASCADE');
    t.integer('position').notNullable(); // the item's place in the task's request (result order)
    t.text('item_key').notNullable(); // the item's id as the request named it (a dashboard id)
    t.text('outcome').notNullable(); // succeeded | failed | skipped | planned (counting without reading the json)
    t.jsonb('item').notNullable(); // the ItemOutcome, as the task result lists it
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['task_id', 'position']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('task_items');
}
