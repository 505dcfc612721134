/**
 * Next actions over all the failed items of a task at once: first one request running the same
 * kind of task again for them with the same options (the task-kind registry's retry, from what the
 * caller asked for: contracts/task-kinds.ts, as reports do), then each fix suggested for single
 * failed items (a migration again with `rls: "copy"` for dashboard 12) merged into one request for
 * every item it was suggested for, over the same options ("retry all failed with the suggested
 * fix"). Nothing here sends anything: the console sends the request.
 */
import type { NextAction } from '../../contracts/outcomes.ts';
import { retryRequestFor } from '../../contracts/task-kinds.ts';
import type { FailedItem } from '../../db/tasks/item-pages.ts';

type Body = Record<string, unknown>;

/** The one list-of-ids field of a request body naming a single item (`dashboard_ids: [12]`), if it has one. */
function idsField(body: unknown): string | undefined {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return undefined;
  const fields = Object.entries(body as Body).filter(([k, v]) => k.endsWith('_ids') && Array.isArray(v));
  return fields.length === 1 && (fields[0]![1] as unknown[]).length === 1 ? fields[0]![0] : undefined;
}

/** The first few ids, and how many more: a description stays a line however many items failed. */
function named(ids: unknown[]): string {
  const shown = ids.slice(0, 10).join(', ');
  return ids.length > 10 ? `${shown} and ${ids.length - 10} more` : shown;
}

type Request = NonNullable<NextAction['request']>;

/** One request for every failed item with the task's own options: the registry's, else the one the task proposed. */
function retryAll(task: { type: string; params: unknown }, taskActions: NextAction[], ids: Array<number | string>): NextAction | undefined {
  const proposed = taskActions.find((a) => a.action === 'retry_failed' && a.request);
  const request = ids.length ? retryRequestFor(task.type, task.params, ids) : null;
  if (!request) return proposed;
  return {
    action: 'retry_failed',
    description:
      proposed?.description ?? `Retry the ${ids.length} failed item(s) with one call, with the same options, once their causes are fixed`,
    request,
  };
}

/** The retry of all failed items, the task's other actions with a request, then each item fix merged over the items it was suggested for. */
export function bulkActions(task: { type: string; params: unknown }, taskActions: NextAction[], failed: FailedItem[]): NextAction[] {
  const groups = new Map<string, { action: NextAction; field: string; ids: unknown[] }>();
  for (const item of failed)
    for (const a of item.next_actions) {
      const field = a.request && idsField(a.request.body);
      if (!a.request || !field) continue;
      const { [field]: ids, ...rest } = a.request.body as Body;
      const key = JSON.stringify([a.action, a.request.method, a.request.path, field, rest]);
      const group = groups.get(key) ?? { action: a, field, ids: [] };
      for (const id of ids as unknown[]) if (!group.ids.some((x) => x === id)) group.ids.push(id);
      groups.set(key, group);
    }
  const retry = retryAll(
    task,
    taskActions,
    failed.flatMap((f) => (f.id === null ? [] : [f.id])),
  );
  const own = [...(retry ? [retry] : []), ...taskActions.filter((a) => a.request && a.action !== 'retry_failed')];
  const seen = new Set(own.map((a) => JSON.stringify(a.request)));
  const merged: NextAction[] = [];
  for (const { action, field, ids } of groups.values()) {
    const fix = action.request!;
    // The fix's own fields win; what it does not name (a dry run, the verification, database mappings) stays as the task asked.
    const same =
      retry?.request && retry.request.method === fix.method && retry.request.path === fix.path ? (retry.request.body as Body) : {};
    const request: Request = { ...fix, body: { ...same, ...(fix.body as Body), [field]: ids } };
    if (seen.has(JSON.stringify(request))) continue;
    seen.add(JSON.stringify(request));
    merged.push({
      action: `${action.action}_all`,
      description: `For the ${ids.length} failed item(s) it was suggested for (${named(ids)}), at once: ${action.description}`,
      request,
    });
  }
  return [...own, ...merged];
}
