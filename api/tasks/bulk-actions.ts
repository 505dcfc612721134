/**
 * Next actions over all the failed items of a task at once. An item's fix that carries a request
 * for that one item (a migration again with `rls: "copy"` for dashboard 12) is the same request
 * for every item it was suggested for but the id: those are merged into one request naming every
 * such item ("retry all failed with the suggested fix"), beside the task's own retry of all its
 * failed items with the same options. Nothing here sends anything: the console sends the request.
 */
import type { NextAction } from '../../contracts/outcomes.ts';
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

/** The task's own actions with a request first, then each item fix merged over the items it was suggested for. */
export function bulkActions(taskActions: NextAction[], failed: FailedItem[]): NextAction[] {
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
  const own = taskActions.filter((a) => a.request);
  const seen = new Set(own.map((a) => JSON.stringify(a.request)));
  const merged: NextAction[] = [];
  for (const { action, field, ids } of groups.values()) {
    const request = { ...action.request!, body: { ...(action.request!.body as Body), [field]: ids } };
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
