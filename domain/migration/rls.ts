/**
 * Row-level security across environments. Superset keeps its rules beside datasets and no export
 * carries them, so a dataset new in the target arrives unfiltered. Here the rules touching a
 * dashboard's datasets are compared between source and target, and written to the target when
 * the requester asks (migration `rls: "copy"`, and every restore).
 *
 * A rule is compared by name, filter type, clause, group key, role names and the set of its
 * tables that are in the migration (identified by the dataset each becomes in the target). Rule
 * names are unique in Superset, so a rule is created or updated by name. Writing never removes a
 * rule or a table from a rule the source does not know: that would widen access in the target.
 * Nor does it change an existing target rule's clause, filter type, group key or roles, or take
 * one of the migrated tables out of it, unless the request says so (`replaceExisting`, a
 * migration's `rls_overwrite`): no such change is provably narrower (a clause `1=1`, a role
 * taken off a Regular rule or added to a Base one opens rows). Such a rule is left as it is and
 * named (`not_updated`, with its fields and a next action); a rule that only gains tables is
 * written, since a filter on more tables only narrows.
 */
import type { NextAction } from '../../contracts/outcomes.ts';
import type { RlsDifference, RlsRuleView, RlsWrite } from '../../contracts/rls.ts';
import type { Bundle } from '../../lib/bundles/bundle.ts';
import { AppError } from '../../lib/errors.ts';
import type { RlsRule, RlsRuleWrite } from '../../lib/superset/types.ts';
import type { TargetIndex } from './target-index.ts';
import type { MigrationUpstream } from './upstream.ts';

/** A migrated dataset: the source's identity and the uuid it has (or will have) in the target. */
export interface RlsDataset {
  sourceUuid: string;
  sourceDatabaseUuid: string | null;
  schema: string | null;
  table_name: string;
  targetUuid: string;
}

/** A dataset or role a rule needs is not where it should be: the rules cannot be read or written safely. */
export class RlsUnresolved extends AppError {
  override name = 'RlsUnresolved';
  constructor(detail: string) {
    super(409, 'rls_unresolved', 'Row-level security cannot be resolved', detail);
  }
}

/** The rules touching the datasets whose ids `tableOf` knows, as views; `tableOf` gives each table's target identity. */
function viewsOf(
  rules: readonly RlsRule[],
  tableOf: (datasetId: number) => { dataset_uuid: string; table_name: string } | undefined,
): Array<RlsRuleView & { id: number }> {
  const out: Array<RlsRuleView & { id: number }> = [];
  for (const r of rules) {
    const tables = new Map<string, { dataset_uuid: string; table_name: string }>();
    for (const t of r.tables) {
      const hit = tableOf(t.id);
      if (hit) tables.set(hit.dataset_uuid, hit);
    }
    if (!tables.size) continue;
    out.push({
      id: r.id,
      name: r.name,
      filter_type: r.filter_type,
      clause: r.clause,
      group_key: r.group_key || null,
      roles: [...new Set(r.roles.map((x) => x.name))].sort(),
      tables: [...tables.values()].sort((a, b) => a.dataset_uuid.localeCompare(b.dataset_uuid)),
    });
  }
  return out.sort((a, b) => a.name.localeCompare(b.name));
}

const tableKeys = (v: RlsRuleView) => v.tables.map((t) => t.dataset_uuid).join(',');

/** Which compared fields of two same-named rules differ. */
function differingFields(s: RlsRuleView, t: RlsRuleView): string[] {
  const fields: string[] = [];
  if (s.filter_type !== t.filter_type) fields.push('filter_type');
  if (s.clause.trim() !== t.clause.trim()) fields.push('clause');
  if ((s.group_key ?? '') !== (t.group_key ?? '')) fields.push('group_key');
  if (s.roles.join('\n') !== t.roles.join('\n')) fields.push('roles');
  if (tableKeys(s) !== tableKeys(t)) fields.push('tables');
  return fields;
}

export function compareRules(source: readonly RlsRuleView[], target: readonly RlsRuleView[]): RlsDifference[] {
  const differences: RlsDifference[] = [];
  const targetByName = new Map(target.map((t) => [t.name, t]));
  for (const s of source) {
    const t = targetByName.get(s.name);
    if (!t) {
      differences.push({ rule: s.name, difference: 'missing_in_target', source: s });
      continue;
    }
    const fields = differingFields(s, t);
    if (fields.length) differences.push({ rule: s.name, difference: 'differs', fields, source: s, target: t });
  }
  const sourceNames = new Set(source.map((s) => s.name));
  for (const t of target) if (!sourceNames.has(t.name)) differences.push({ rule: t.name, difference: 'only_in_target', target: t });
  return differences;
}

const strip = ({ id: _id, ...view }: RlsRuleView & { id: number }): RlsRuleView => view;

/**
 * The source's and the target's rules on a dashboard's datasets, and how they differ. The source
 * index needs only datasets; both indexes read their rules once per task.
 */
export async function compareDashboardRules(opts: {
  sourceIndex: TargetIndex;
  targetIndex: TargetIndex;
  datasets: readonly RlsDataset[];
}): Promise<{ source: Array<RlsRuleView & { id: number }>; target: RlsRuleView[]; differences: RlsDifference[] }> {
  const { targetIndex } = opts;
  const source = await rulesOnDatasets(opts.sourceIndex, opts.datasets);
  const targetIds = new Map<number, { dataset_uuid: string; table_name: string }>();
  for (const d of opts.datasets) {
    const there = targetIndex.dataset(d.targetUuid);
    if (there) targetIds.set(there.id, { dataset_uuid: d.targetUuid, table_name: d.table_name });
  }
  // A rule of the target touches only datasets it has: none of the dashboard's there (a first import), no rule to read.
  const target = targetIds.size ? viewsOf(await targetIndex.rlsRules(), (id) => targetIds.get(id)).map(strip) : [];
  return { source, target, differences: compareRules(source.map(strip), target) };
}

/**
 * The rules of the index's instance that touch these datasets (found by uuid, else by database,
 * schema and table), each table named by the dataset's `targetUuid`.
 */
export async function rulesOnDatasets(index: TargetIndex, datasets: readonly RlsDataset[]): Promise<Array<RlsRuleView & { id: number }>> {
  const rules = await index.rlsRules();
  // An instance without rules (the common case) needs no dataset list to say so.
  if (!rules.length) return [];
  await index.include('dataset');
  const ids = new Map<number, { dataset_uuid: string; table_name: string }>();
  const dbByUuid = new Map(index.databases.map((d) => [d.uuid, d]));
  for (const d of datasets) {
    const db = d.sourceDatabaseUuid ? dbByUuid.get(d.sourceDatabaseUuid) : undefined;
    const own = index.dataset(d.sourceUuid) ?? (db ? index.datasetOnTable(db.id, d.schema, d.table_name) : null);
    if (!own) {
      throw new RlsUnresolved(
        `dataset '${d.table_name}' of the export (uuid ${d.sourceUuid}) is not among the environment's datasets, so its row-level-security rules cannot be read`,
      );
    }
    ids.set(own.id, { dataset_uuid: d.targetUuid, table_name: d.table_name });
  }
  return viewsOf(rules, (id) => ids.get(id));
}

/** A bundle's datasets as they are in the environment it was exported from. */
export function datasetsOf(bundle: Bundle): RlsDataset[] {
  return bundle.of('datasets').map((f) => ({
    sourceUuid: String(f.content.uuid),
    sourceDatabaseUuid: typeof f.content.database_uuid === 'string' ? f.content.database_uuid : null,
    schema: typeof f.content.schema === 'string' && f.content.schema ? f.content.schema : null,
    table_name: String(f.content.table_name ?? ''),
    targetUuid: String(f.content.uuid),
  }));
}

/** Role names the rules name that the target does not have. */
export async function missingRoles(index: TargetIndex, rules: readonly RlsRuleView[]): Promise<string[]> {
  const have = new Set((await index.rlsRoles()).map((r) => r.name));
  return [...new Set(rules.flatMap((r) => r.roles))].filter((n) => !have.has(n)).sort();
}

/** A rule's compared parts, with roles and tables as keys of either side (names and uuids, or ids). */
interface RuleShape {
  filter_type: string;
  clause: string;
  group_key: string | null;
  roles: ReadonlyArray<string | number>;
  tables: ReadonlyArray<string | number>;
}

/** The changes an update of a target rule from `was` to `to` makes that are not plainly narrower: every field but tables gained. */
export function unsafeChanges(was: RuleShape, to: RuleShape): string[] {
  const set = (xs: ReadonlyArray<string | number>) => [...new Set(xs.map(String))].sort().join('\n');
  const out: string[] = [];
  if (was.filter_type !== to.filter_type) out.push('filter_type');
  if (was.clause.trim() !== to.clause.trim()) out.push('clause');
  if ((was.group_key ?? '') !== (to.group_key ?? '')) out.push('group_key');
  if (set(was.roles) !== set(to.roles)) out.push('roles');
  const kept = new Set(to.tables.map(String));
  if (was.tables.some((t) => !kept.has(String(t)))) out.push('tables');
  return out;
}

/** A same-named target rule left as it is: what it would have changed, and what to do. */
function notUpdated(rule: string, id: number, fields: string[]): RlsWrite {
  return { rule, action: 'not_updated', target_rule_id: id, done: false, fields, next_action: reviewRule(rule, fields) };
}

function reviewRule(rule: string, fields: string[]): NextAction {
  return {
    action: 'review_rls_rule',
    description: `Rule '${rule}' in the target differs from the source's in ${fields.join(', ')}, which may widen access, so it was left as it is: change it in the target Superset (Settings → Row Level Security) if the source's is right, or run the migration again with rls_overwrite true to replace it`,
  };
}

/** What writing these rules would do, without writing (a dry run): as writeRules decides. */
export async function plannedWrites(
  index: TargetIndex,
  differences: readonly RlsDifference[],
  replaceExisting = false,
): Promise<RlsWrite[]> {
  const byName = new Map((await index.rlsRules()).map((r) => [r.name, r]));
  return differences
    .filter((d) => d.difference !== 'only_in_target')
    .map((d) => {
      const existing = byName.get(d.rule);
      if (!existing) return { rule: d.rule, action: 'create', target_rule_id: null, done: false } satisfies RlsWrite;
      // Within the migrated tables the target's view is compared; a rule on none of them only gains tables.
      const was = d.target ?? { ...existing, roles: existing.roles.map((r) => r.name), tables: [] };
      const fields = unsafeChanges(shapeOfView(was), shapeOfView(d.source!));
      if (fields.length && !replaceExisting) return notUpdated(d.rule, existing.id, fields);
      return { rule: d.rule, action: 'update', target_rule_id: existing.id, done: false } satisfies RlsWrite;
    });
}

function shapeOfView(
  v: Pick<RlsRuleView, 'filter_type' | 'clause' | 'group_key'> & { roles: string[]; tables: Array<{ dataset_uuid: string }> | [] },
): RuleShape {
  return { ...v, tables: v.tables.map((t) => t.dataset_uuid) };
}

/**
 * Creates or updates each rule in the target (by name), its tables resolved to the target's
 * datasets by uuid and its roles by name. An existing rule keeps its tables outside `scope` (the
 * target uuids of the datasets concerned); within the scope it gets exactly the rule's tables.
 * The index must be current (refreshed after an import) and the roles checked with missingRoles.
 */
export async function writeRules(opts: {
  upstream: MigrationUpstream;
  index: TargetIndex;
  rules: readonly RlsRuleView[];
  scope: readonly string[];
  /** An existing rule is replaced even where that may widen access (a migration's `rls_overwrite`). */
  replaceExisting?: boolean;
}): Promise<RlsWrite[]> {
  const { upstream, index } = opts;
  const roleIds = new Map((await index.rlsRoles()).map((r) => [r.name, r.id]));
  const scopeIds = new Set(opts.scope.map((uuid) => index.dataset(uuid)?.id).filter((id): id is number => id !== undefined));
  const writes: RlsWrite[] = [];
  for (const rule of opts.rules) {
    const existing = (await index.rlsRules()).find((r) => r.name === rule.name);
    const body = resolvedBody(rule, index, roleIds, scopeIds, existing);
    if (existing && sameRule(existing, body)) {
      writes.push({ rule: rule.name, action: 'unchanged', target_rule_id: existing.id, done: true });
      continue;
    }
    const unsafe = existing ? unsafeChanges(shapeOfRule(existing), body) : [];
    if (existing && unsafe.length && !opts.replaceExisting) {
      writes.push(notUpdated(rule.name, existing.id, unsafe));
      continue;
    }
    let id: number;
    if (existing) {
      await upstream.updateRlsRule(existing.id, body);
      id = existing.id;
    } else {
      id = await upstream.createRlsRule(body);
    }
    await index.noteRlsRule({
      id,
      name: body.name,
      filter_type: body.filter_type,
      clause: body.clause,
      group_key: body.group_key,
      tables: body.tables.map((t) => ({ id: t, table_name: index.datasetById(t)?.table_name ?? '' })),
      roles: body.roles.map((r) => ({ id: r, name: [...roleIds].find(([, v]) => v === r)?.[0] ?? '' })),
    });
    writes.push({ rule: rule.name, action: existing ? 'update' : 'create', target_rule_id: id, done: true });
  }
  return writes;
}

/**
 * The rule as the target names things: its tables by the target's dataset ids (an existing rule
 * keeps its tables outside the scope), its roles by the target's role ids. Throws RlsUnresolved
 * for a dataset or role the target lacks.
 */
function resolvedBody(
  rule: RlsRuleView,
  index: TargetIndex,
  roleIds: Map<string, number>,
  scopeIds: Set<number>,
  existing: RlsRule | undefined,
): RlsRuleWrite {
  const tableIds = rule.tables.map((t) => {
    const d = index.dataset(t.dataset_uuid);
    if (!d)
      throw new RlsUnresolved(
        `dataset '${t.table_name}' (uuid ${t.dataset_uuid}) is not in the target, so rule '${rule.name}' cannot name it`,
      );
    return d.id;
  });
  const roles = rule.roles.map((name) => {
    const id = roleIds.get(name);
    if (id === undefined) throw new RlsUnresolved(`role '${name}' of rule '${rule.name}' is not in the target`);
    return id;
  });
  const kept = existing?.tables.map((t) => t.id).filter((id) => !scopeIds.has(id)) ?? [];
  return {
    name: rule.name,
    filter_type: rule.filter_type,
    clause: rule.clause,
    group_key: rule.group_key,
    description: rule.description ?? null,
    tables: [...new Set([...kept, ...tableIds])].sort((a, b) => a - b),
    roles: [...new Set(roles)].sort((a, b) => a - b),
  };
}

function shapeOfRule(r: RlsRule): RuleShape {
  return { ...r, roles: r.roles.map((x) => x.id), tables: r.tables.map((t) => t.id) };
}

/** Whether a rule already is what would be written (description aside: the list does not carry it). */
function sameRule(existing: RlsRule, body: RlsRuleWrite): boolean {
  const ids = (xs: Array<{ id: number }>) =>
    xs
      .map((x) => x.id)
      .sort((a, b) => a - b)
      .join(',');
  return (
    existing.filter_type === body.filter_type &&
    existing.clause.trim() === body.clause.trim() &&
    (existing.group_key ?? '') === (body.group_key ?? '') &&
    ids(existing.tables) === body.tables.join(',') &&
    ids(existing.roles) === body.roles.join(',')
  );
}

/** The source rules as views with their descriptions (one detail read per rule: the list omits them). */
export async function withDescriptions(
  upstream: MigrationUpstream,
  rules: ReadonlyArray<RlsRuleView & { id: number }>,
): Promise<RlsRuleView[]> {
  const out: RlsRuleView[] = [];
  for (const r of rules) {
    const detail = await upstream.rlsRule(r.id);
    out.push({ ...strip(r), description: detail.description ?? null });
  }
  return out;
}
