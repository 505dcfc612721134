/**
 * The item store: the only code that reads or writes `task_items`, the per-item outcomes of a task
 * whose workflow does not keep them (its history stays bounded however many items it has). An item
 * is written once per (task, position): a retried activity finds the row of its earlier attempt.
 */
import type { Knex } from 'knex';
import type { ItemOutcome } from '../../contracts/outcomes.ts';

export interface StoredItem<I extends ItemOutcome = ItemOutcome> {
  position: number;
  item: I;
}

export class TaskItemStore {
  private readonly knex: Knex;

  constructor(knex: Knex) {
    this.knex = knex;
  }

  /** The item recorded at this position, if any. */
  async get<I extends ItemOutcome>(taskId: string, position: number): Promise<I | undefined> {
    const row = await this.knex('task_items').where({ task_id: taskId, position }).first('item');
    return row?.item as I | undefined;
  }

  /** The items recorded at these positions, by position, in one query (a batch's earlier attempt). */
  async getMany<I extends ItemOutcome>(taskId: string, positions: number[]): Promise<Map<number, I>> {
    if (!positions.length) return new Map();
    const rows = await this.knex('task_items').where({ task_id: taskId }).whereIn('position', positions).select('position', 'item');
    return new Map(rows.map((r: { position: number; item: I }) => [Number(r.position), r.item]));
  }

  /**
   * Records the item unless one is recorded at this position already; answers the item that is
   * recorded now (the earlier one wins, so a retry never rewrites what was reported).
   */
  async record<I extends ItemOutcome>(taskId: string, position: number, key: string | number, item: I): Promise<I> {
    const inserted = await this.knex('task_items')
      .insert({ task_id: taskId, position, item_key: String(key), outcome: item.outcome, item: JSON.stringify(item) })
      .onConflict(['task_id', 'position'])
      .ignore()
      .returning('item');
    if (inserted.length) return item;
    return (await this.get<I>(taskId, position))!;
  }

  /** Records several items in one statement, each unless one is recorded at its position already (the earlier one wins, as in record). */
  async recordMany(taskId: string, items: Array<{ position: number; key: string | number; item: ItemOutcome }>): Promise<void> {
    if (!items.length) return;
    await this.insertRows(taskId, items).onConflict(['task_id', 'position']).ignore();
  }

  /** Replaces the item at this position: an item amended after it was first recorded (a migrated dashboard once verified). */
  async put<I extends ItemOutcome>(taskId: string, position: number, key: string | number, item: I): Promise<void> {
    await this.putMany(taskId, [{ position, key, item }]);
  }

  /** Replaces the items at these positions in one statement (a verification's dashboards, amended together). */
  async putMany(taskId: string, items: Array<{ position: number; key: string | number; item: ItemOutcome }>): Promise<void> {
    if (!items.length) return;
    await this.insertRows(taskId, items).onConflict(['task_id', 'position']).merge(['item_key', 'outcome', 'item']);
  }

  /** The insert of these items' rows, for recordMany (the first record wins) and putMany (the last one does). */
  private insertRows(taskId: string, items: Array<{ position: number; key: string | number; item: ItemOutcome }>) {
    return this.knex('task_items').insert(
      items.map((i) => ({
        task_id: taskId,
        position: i.position,
        item_key: String(i.key),
        outcome: i.item.outcome,
        item: JSON.stringify(i.item),
      })),
    );
  }

  /** Every item of the task in request order. */
  async list<I extends ItemOutcome>(taskId: string): Promise<I[]> {
    const rows = await this.knex('task_items').where({ task_id: taskId }).orderBy('position').select('item');
    return rows.map((r: { item: I }) => r.item);
  }
}
