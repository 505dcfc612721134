/**
 * Reads a task's items a page at a time and counts them, in PostgreSQL, however many there are
 * (a migration of 1,000 dashboards holds about 10,000 objects): the rows of `task_items` when the
 * task records its items there (migrations, backups: the only rows while it runs), else the
 * `items` of its stored result (kinds that keep their items in the workflow). Read-only: the task
 * store and the item store stay the only writers of these tables.
 *
 * Whether an item changed its target is decided here, once, in SQL (contracts/outcomes.ts
 * CHANGE_CLASSES says what it means), and answered with every item, so no reader decides it again.
 */
import type { Knex } from 'knex';
import {
  OBJECT_ACTIONS,
  type ChangeClass,
  type ItemFilter,
  type ItemOutcome,
  type NextAction,
  type OutcomeClass,
} from '../../contracts/outcomes.ts';

export interface ItemRow {
  position: number;
  change: ChangeClass | null;
  item: ItemOutcome;
}

export interface ItemQuery {
  filters?: ItemFilter[];
  /** Matches titles (case-insensitive substring) or an exact id. */
  q?: string;
  page: number;
  pageSize: number;
}

export interface ItemCounts {
  total: number;
  by_outcome: Partial<Record<OutcomeClass, number>>;
  by_change: Partial<Record<ChangeClass, number>>;
  by_status: Record<string, number>;
  objects: { total: number; by_action: Record<string, number>; by_kind: Record<string, Record<string, number>> };
  /** Sum and longest of the items' own verification times (migrations), when they record one. */
  verification_ms: { total: number; max: number; items: number };
}

/** A failed item's id and next actions (what a bulk retry is built from). */
export interface FailedItem {
  id: ItemOutcome['id'];
  next_actions: NextAction[];
}

const ARRAY = (expr: string) => `case jsonb_typeof(${expr}) when 'array' then ${expr} else '[]'::jsonb end`;
const OBJECTS = ARRAY(`item->'objects'`);
const OPEN_OUTCOME = `item->>'outcome' in ('succeeded', 'planned')`;
const CHANGED = `(${OPEN_OUTCOME} and (exists (select 1 from jsonb_array_elements(${OBJECTS}) o where o->>'action' in ('create', 'update'))
  or (jsonb_array_length(${OBJECTS}) = 0 and item->>'outcome' = 'succeeded' and item->>'status' is distinct from 'unchanged')))`;
const CHANGE = `case when ${CHANGED} then 'changed' when ${OPEN_OUTCOME} then 'unchanged' end`;

/** The task's items with their position and change class, as a CTE named `c` (bindings: the task id three times). */
const SOURCE = `with src as (
    select position, item from task_items where task_id = ?
    union all
    select (e.ord - 1)::int as position, e.item from tasks t
      cross join lateral jsonb_array_elements(${ARRAY(`t.result->'items'`)}) with ordinality as e(item, ord)
     where t.id = ? and not exists (select 1 from task_items where task_id = ?)
  ), c as (select position, item, ${CHANGE} as change from src)`;

function where(query: Pick<ItemQuery, 'filters' | 'q'>): { sql: string; bindings: Knex.Value[] } {
  const parts: string[] = [];
  const bindings: Knex.Value[] = [];
  if (query.filters?.length) {
    const or = query.filters.map((f) => (f === 'changed' || f === 'unchanged' ? 'change = ?' : `item->>'outcome' = ?`));
    parts.push(`(${or.join(' or ')})`);
    bindings.push(...query.filters);
  }
  if (query.q) {
    parts.push(`(item->>'title' ilike ? escape '\\' or item->>'id' = ?)`);
    bindings.push(`%${query.q.replace(/[\\%_]/g, (m) => `\\${m}`)}%`, query.q);
  }
  return { sql: parts.length ? `where ${parts.join(' and ')}` : '', bindings };
}

export class TaskItemPages {
  private readonly knex: Knex;

  constructor(knex: Knex) {
    this.knex = knex;
  }

  /** One page of the task's items in request order, and how many match. */
  async page(taskId: string, query: ItemQuery): Promise<{ items: ItemRow[]; total: number }> {
    const w = where(query);
    const ids = [taskId, taskId, taskId];
    const [rows, count] = await Promise.all([
      this.knex.raw(`${SOURCE} select position, change, item from c ${w.sql} order by position limit ? offset ?`, [
        ...ids,
        ...w.bindings,
        query.pageSize,
        (query.page - 1) * query.pageSize,
      ]),
      this.knex.raw(`${SOURCE} select count(*)::int as n from c ${w.sql}`, [...ids, ...w.bindings]),
    ]);
    return {
      items: (rows.rows as ItemRow[]).map((r) => ({ position: Number(r.position), change: r.change, item: r.item })),
      total: Number(count.rows[0].n),
    };
  }

  /** Counts by outcome, change, status and object action, in one statement. */
  async counts(taskId: string): Promise<ItemCounts> {
    const agg = (key: string, from = 'c') =>
      `(select coalesce(jsonb_object_agg(k, n), '{}') from (select ${key} as k, count(*)::int as n from ${from} group by 1) x where k is not null)`;
    const objs = `c cross join lateral jsonb_array_elements(${OBJECTS}) o`;
    const { rows } = await this.knex.raw(
      `${SOURCE}, objs as (select o->>'kind' as kind, o->>'action' as action from ${objs})
       select (select count(*)::int from c) as total,
              ${agg(`item->>'outcome'`)} as by_outcome, ${agg('change')} as by_change, ${agg(`item->>'status'`)} as by_status,
              (select count(*)::int from objs) as objects,
              ${agg('action', 'objs')} as by_action,
              (select coalesce(jsonb_object_agg(kind, actions), '{}') from (select kind, jsonb_object_agg(action, n) as actions
                 from (select kind, action, count(*)::int as n from objs where kind is not null and action is not null group by 1, 2) y group by 1) x) as by_kind,
              (select jsonb_build_object('total', coalesce(sum(d), 0), 'max', coalesce(max(d), 0), 'items', count(d))
                 from (select (item->'verification'->>'duration_ms')::numeric as d from c where jsonb_typeof(item->'verification'->'duration_ms') = 'number') v) as verification`,
      [taskId, taskId, taskId],
    );
    const r = rows[0];
    const byAction = Object.fromEntries(OBJECT_ACTIONS.map((a) => [a, 0]));
    return {
      total: r.total,
      by_outcome: r.by_outcome,
      by_change: r.by_change,
      by_status: r.by_status,
      objects: { total: r.objects, by_action: { ...byAction, ...r.by_action }, by_kind: r.by_kind },
      verification_ms: { total: Number(r.verification.total), max: Number(r.verification.max), items: Number(r.verification.items) },
    };
  }

  /** The failed items' ids and next actions, in request order (not their objects or differences). */
  async failed(taskId: string): Promise<FailedItem[]> {
    const { rows } = await this.knex.raw(
      `${SOURCE} select item->'id' as id, ${ARRAY(`item->'next_actions'`)} as next_actions from c where item->>'outcome' = 'failed' order by position`,
      [taskId, taskId, taskId],
    );
    return rows as FailedItem[];
  }
}
