/**
 * A column-mapping task whose dictionary came from its owner's own SQL (`source_type: sqllab`
 * with `sql`) holds what that query returned, read through SQL Lab as the service account. Those
 * rows are the owner's and the admins' to see; another reader holding tasks:READ sees the rest of
 * the task. This module is the one decider for who sees them and what is hidden:
 *  - in `result.items[]`: `changes`, `kept`, `unmatched` (emptied), `unexpected` (emptied),
 *    `error` (a fixed note) and `upstream_error` (null): the dictionary's values and names, and
 *    whatever the database said about the query or the values written;
 *  - the task's `error` message and details (it repeats the items' errors);
 *  - in the logs (and a report's log excerpt), the text of WARN and ERROR lines written by the
 *    workflow, its activities and Temporal (failures quote the database), which a text search
 *    does not look into either.
 * Kept: ids, titles, statuses, outcomes, steps, totals, change ids, next actions, params (the
 * query itself), progress, INFO lines. The answer carries `result.rows_hidden` saying so.
 */
import { taskPolicy } from './policy.ts';
import type { MapColumnsInput } from '../../contracts/datasets.ts';
import type { TaskRecord } from '../../db/tasks/store.ts';
import type { Principal } from '../auth/principal.ts';

export const HIDDEN_NOTE =
  "hidden: this task's dictionary came from its owner's SQL query; its rows and the database's messages are shown to the owner and admins only";

/** Does the task hold rows of a caller's query? */
export function carriesQueryRows(task: Pick<TaskRecord, 'type' | 'workflow_input'>): boolean {
  if (task.type !== 'map_columns') return false;
  const source = (task.workflow_input as Partial<MapColumnsInput> | null)?.source;
  return source?.type === 'sqllab' && typeof source.sql === 'string';
}

/** Must those rows be hidden from this reader? */
export function hidesQueryRows(task: Pick<TaskRecord, 'type' | 'workflow_input' | 'owner_id'>, principal: Principal): boolean {
  return carriesQueryRows(task) && !taskPolicy.seeQueryRows(principal, task);
}

type Item = Record<string, unknown>;

/** An item of such a task as a reader who may not see the rows sees it (the task's items endpoint hides them alike). */
export function hideItem(item: Item): Item {
  return {
    ...item,
    changes: [],
    kept: [],
    unmatched: { dictionary: [], dataset: [] },
    ...('unexpected' in item ? { unexpected: [] } : {}),
    ...(item.error ? { error: HIDDEN_NOTE } : {}),
    ...('upstream_error' in item ? { upstream_error: null } : {}),
  };
}

/** The task as this reader may see it (the same record when nothing is hidden). */
export function taskForReader(task: TaskRecord, principal: Principal): TaskRecord {
  if (!hidesQueryRows(task, principal)) return task;
  const result = task.result && typeof task.result === 'object' ? (task.result as Item) : null;
  return {
    ...task,
    result: result && {
      ...result,
      ...(Array.isArray(result.items) ? { items: (result.items as Item[]).map(hideItem) } : {}),
      rows_hidden: { visible_to: 'the task owner and admins', note: HIDDEN_NOTE },
    },
    error: task.error && { message: HIDDEN_NOTE, ...(task.error.type ? { type: task.error.type } : {}) },
  };
}

/** Log lines whose text may quote the query's rows or the database's messages about them. */
export function concealsLogLine(line: { level: string; source: string }): boolean {
  return (line.level === 'WARN' || line.level === 'ERROR') && line.source !== 'api';
}

export function concealLogLine<T extends { level: string; source: string; message: string; attrs?: unknown }>(line: T): T {
  if (!concealsLogLine(line)) return line;
  const { attrs: _attrs, ...rest } = line;
  return { ...rest, message: HIDDEN_NOTE } as T;
}
