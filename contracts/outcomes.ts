/**
 * The one outcome shape of every task that works item by item (dashboards, datasets,
 * repositories): each item ends with an outcome of its own, a failure names the step, the
 * upstream's own answer and what to do next. Reports render any task kind from this shape alone.
 */
// No zod here: workflows import this module, and every module of the workflow bundle is evaluated
// again for each workflow the worker creates (the schemas live in outcome-schemas.ts).

/** A follow-up a person (or a script) can take, with the exact request when there is one. */
export interface NextAction {
  action: string;
  description: string;
  request?: { method: string; path: string; body: unknown };
}

/** Next actions without repeats (the same action said the same way), first one kept. */
export function uniqueActions(actions: NextAction[]): NextAction[] {
  const seen = new Set<string>();
  return actions.filter((a) => {
    const key = `${a.action}:${a.description}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** What an upstream (Superset, a git server, an LLM) answered when it refused, in its own words. */
export interface UpstreamAnswer {
  status?: number;
  message: string;
  type?: string;
  /** Per-file or per-field messages (an import's validation errors). */
  files?: unknown;
}

export type ItemKind = 'dashboard' | 'dataset' | 'repository' | 'backup';

/** How a person should read an item's status, whatever the task kind's own word for it. */
export const OUTCOME_CLASSES = ['succeeded', 'failed', 'skipped', 'planned'] as const;
export type OutcomeClass = (typeof OUTCOME_CLASSES)[number];

/**
 * Whether an item changed (or, in a dry run, would change) what its target holds: `changed` when
 * one of its objects is (or would be) created or updated, or, for kinds without objects, when it
 * succeeded with a status other than `unchanged`; `unchanged` when it succeeded or was planned
 * and none of that holds. Failed and skipped items are neither. Decided in one place, by the item
 * query (db/tasks/item-pages.ts), which answers it with every item.
 */
export const CHANGE_CLASSES = ['changed', 'unchanged'] as const;
export type ChangeClass = (typeof CHANGE_CLASSES)[number];

/** What a task's items can be filtered by (`GET /api/tasks/{id}/items?outcome=`): an outcome class or a change class. */
export const ITEM_FILTERS = [...OUTCOME_CLASSES, ...CHANGE_CLASSES] as const;
export type ItemFilter = (typeof ITEM_FILTERS)[number];

/** What an object of an item was (or would be) made of in the target (a migration's plan: contracts/migration.ts ObjectPlan). */
export const OBJECT_ACTIONS = ['create', 'update', 'unchanged', 'reuse'] as const;
export type ObjectAction = (typeof OBJECT_ACTIONS)[number];

export interface ItemOutcome {
  kind: ItemKind;
  /** The item's id where the task read it (a source dashboard id, a dataset id, a backup id). */
  id: number | string | null;
  title: string | null;
  /** The task kind's own word: imported, backed_up, restored, unchanged, failed, ... */
  status: string;
  outcome: OutcomeClass;
  /** When it failed or was skipped: the reason in words a person can act on. */
  error?: string;
  /** The step that failed: export, plan, import, verify, store, ... */
  step?: string;
  /** A stable word for a known cause, when there is one (rls_mismatch, rls_role_missing, ...). */
  code?: string;
  upstream_error?: UpstreamAnswer;
  next_actions: NextAction[];
}

/** The part every item-by-item task result has in common. */
export interface ItemsResult<I extends ItemOutcome = ItemOutcome> {
  items: I[];
  /** Items requested but never reached (cancellation). */
  not_started: number;
  cancelled: boolean;
  /** Actions over the whole task, such as one request retrying every failed item. */
  next_actions: NextAction[];
}

export function countOutcomes(items: readonly Pick<ItemOutcome, 'outcome'>[]): Record<OutcomeClass, number> {
  const counts: Record<OutcomeClass, number> = { succeeded: 0, failed: 0, skipped: 0, planned: 0 };
  for (const i of items) counts[i.outcome]++;
  return counts;
}

export function isItemsResult(value: unknown): value is ItemsResult {
  return typeof value === 'object' && value !== null && Array.isArray((value as { items?: unknown }).items);
}
