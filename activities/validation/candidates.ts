/**
 * The dashboards a validation checks, read when it starts: the ids asked for, or those of the
 * environment carrying the tag (its exact name; Superset's own name filter matches substrings,
 * so the tag's id is looked up and filtered on) and owned by the user, every one when nothing is
 * selected. Several criteria narrow each other.
 */
import type { ValidationSelection } from '../../contracts/validation.ts';
import type { SupersetClient } from '../../lib/superset/client.ts';
import type { ListFilter } from '../../lib/superset/types.ts';
import type { ActivityDeps } from '../deps.ts';

export async function validationCandidates(
  deps: Pick<ActivityDeps, 'superset'>,
  input: { envId: string; selection: ValidationSelection },
): Promise<number[]> {
  const { selection } = input;
  const asked = selection.dashboard_ids?.length ? [...new Set(selection.dashboard_ids)] : null;
  // Ids alone: each one is checked, and one the environment lacks says so in its item.
  if (asked && !selection.tag && !selection.owner) return asked;
  const client = await deps.superset(input.envId);
  const filters = await selectionFilters(client, selection);
  if (!filters) return [];
  const found = new Set<number>();
  for (const f of filters) {
    const rows = await client.lists.all<{ id: number }>('dashboard', { columns: ['id'], filters: f });
    for (const r of rows) found.add(r.id);
  }
  const ids = asked ? asked.filter((id) => found.has(id)) : [...found];
  return ids.sort((a, b) => a - b);
}

/** The list filters (one list per owner account, their answers united), or null when the tag or owner does not exist there. */
async function selectionFilters(client: SupersetClient, selection: ValidationSelection): Promise<ListFilter[][] | null> {
  const base: ListFilter[] = [];
  if (selection.tag) {
    const tag = (await client.tags.list()).find((t) => t.name === selection.tag);
    if (!tag) return null;
    base.push({ col: 'tags', opr: 'dashboard_tag_id', value: tag.id });
  }
  if (!selection.owner) return [base];
  const owners = await client.security.resolveUsernameCached(selection.owner);
  if (!owners.ids.length) return null;
  return owners.ids.map((id) => [...base, { col: 'owners', opr: 'rel_m_m', value: id }]);
}
