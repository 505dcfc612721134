import type { NextAction } from '../../contracts/outcomes.ts';
import type { RlsDifference, RlsMode, RlsReport, RlsRuleView } from '../../contracts/rls.ts';
import { migrateAgainAction } from '../../contracts/migration.ts';
import type { PreparedBundle } from './plan.ts';
import { compareDashboardRules, missingRoles, plannedWrites, withDescriptions, writeRules } from './rls.ts';
import type { TargetIndex } from './target-index.ts';
import type { MigrationUpstream } from './upstream.ts';

export interface RlsCheck {
  report: RlsReport;
  /** Set when the dashboard must not be imported: nothing was changed. */
  blocked?: { code: 'rls_mismatch' | 'rls_role_missing'; error: string; next_actions: NextAction[] };
  /** mode copy: the source's rules to write to the target after the import (ids in the source). */
  toCopy: Array<RlsRuleView & { id: number }>;
  /** mode copy: what to do about the same-named target rules the copy leaves as they are (see ./rls.ts writeRules). */
  next_actions: NextAction[];
}

/** The migration request the dashboard is planned under; a retry repeats it with another rls mode. */
interface RlsRequest {
  sourceEnvId: string;
  targetEnvId: string;
  dashboardId: number;
  overwrite: boolean;
}

type RuleComparison = Awaited<ReturnType<typeof compareDashboardRules>>;

/**
 * The row-level-security step of planning a dashboard: compare, then decide by mode. strict fails
 * the dashboard on any difference; copy fails it when a role is missing in the target (before
 * anything is imported) and otherwise lists what to write; ignore records the differences.
 */
export async function checkDashboardRls(opts: {
  mode: RlsMode;
  dryRun: boolean;
  /** The request's `rls_overwrite`: an existing target rule is replaced even where that may widen access. */
  replaceExisting?: boolean;
  sourceIndex: TargetIndex;
  targetIndex: TargetIndex;
  prepared: PreparedBundle;
  request: RlsRequest;
}): Promise<RlsCheck> {
  const { mode, prepared, targetIndex } = opts;
  const cmp = await compareDashboardRules({ sourceIndex: opts.sourceIndex, targetIndex, datasets: prepared.datasets });
  const report: RlsReport = {
    mode,
    source_rules: cmp.source.map(({ id: _id, ...v }) => v),
    target_rules: cmp.target,
    differences: cmp.differences,
  };
  const check: RlsCheck = { report, toCopy: [], next_actions: [] };
  if (!cmp.differences.length) return check;

  if (mode === 'ignore') {
    report.ignored_by_request = true;
    return check;
  }
  if (mode === 'strict') {
    check.blocked = mismatchBlock(prepared.title, cmp.differences, opts.request);
    return check;
  }
  return await planCopy(check, cmp, opts);
}

/** The same request again for this one dashboard, with another rls mode. */
function retryWith(request: RlsRequest, rls: RlsMode, description: string, action: string): NextAction {
  return migrateAgainAction(action, description, { ...request, rls }, [request.dashboardId], request.overwrite);
}

/** mode strict: the dashboard fails on the differences, with the ways out (copy, ignore, or fix them in Superset). */
function mismatchBlock(title: string, differences: readonly RlsDifference[], request: RlsRequest): NonNullable<RlsCheck['blocked']> {
  return {
    code: 'rls_mismatch',
    error: `row-level security on the datasets of '${title}' differs between source and target: ${describeDifferences(differences)}`,
    next_actions: [
      retryWith(
        request,
        'copy',
        "Copy the source's rules to the target (created or updated by name, roles matched by name)",
        'retry_with_rls_copy',
      ),
      retryWith(request, 'ignore', 'Migrate anyway, recording that the difference was ignored on request', 'retry_with_rls_ignore'),
      {
        action: 'fix_rls_in_superset',
        description: 'Or make the rules the same in both Superset instances (Settings → Row Level Security), then retry this dashboard',
      },
    ],
  };
}

/**
 * mode copy: the source's differing rules become the check's toCopy, with the writes they will
 * make; blocked instead, before anything is imported, when the target lacks a role they name.
 */
async function planCopy(
  check: RlsCheck,
  cmp: RuleComparison,
  opts: { dryRun: boolean; replaceExisting?: boolean; targetIndex: TargetIndex; prepared: PreparedBundle; request: RlsRequest },
): Promise<RlsCheck> {
  const { report } = check;
  const { targetIndex } = opts;
  // copy: only the target's own rules are left as they are.
  const toWrite = new Set(cmp.differences.filter((d) => d.difference !== 'only_in_target').map((d) => d.rule));
  check.toCopy = cmp.source.filter((r) => toWrite.has(r.name));
  const onlyTarget = cmp.differences.filter((d) => d.difference === 'only_in_target').map((d) => d.rule);
  if (onlyTarget.length) report.left_in_target = onlyTarget;
  const missing = await missingRoles(targetIndex, check.toCopy);
  if (missing.length) {
    report.missing_roles = missing;
    check.toCopy = [];
    check.blocked = missingRolesBlock(opts.prepared.title, missing, opts.request);
    return check;
  }
  const planned = await plannedWrites(targetIndex, cmp.differences, opts.replaceExisting);
  check.next_actions = planned.flatMap((w) => (w.next_action ? [w.next_action] : []));
  if (opts.dryRun) report.writes = planned;
  return check;
}

/** mode copy, a role missing in the target: nothing is imported, and the ways out are to create the role or ignore the rules. */
function missingRolesBlock(title: string, missing: readonly string[], request: RlsRequest): NonNullable<RlsCheck['blocked']> {
  return {
    code: 'rls_role_missing',
    error: `the target has no role ${missing.map((n) => `'${n}'`).join(', ')}, which the row-level-security rules of '${title}' name; nothing was imported`,
    next_actions: [
      {
        action: 'create_role',
        description: `Create role ${missing.map((n) => `'${n}'`).join(', ')} in the target Superset (Settings → List Roles), then retry this dashboard`,
      },
      retryWith(
        request,
        'ignore',
        'Or migrate without the rules, recording that the difference was ignored on request',
        'retry_with_rls_ignore',
      ),
    ],
  };
}

/** After the import: the copied rules written to the target, by name. */
export async function copyRules(opts: {
  source: MigrationUpstream;
  target: MigrationUpstream;
  targetIndex: TargetIndex;
  prepared: PreparedBundle;
  rules: Array<RlsRuleView & { id: number }>;
  replaceExisting?: boolean;
}): Promise<RlsReport['writes']> {
  await opts.targetIndex.refresh(); // the datasets this import created
  return writeRules({
    upstream: opts.target,
    index: opts.targetIndex,
    rules: await withDescriptions(opts.source, opts.rules),
    scope: opts.prepared.datasets.map((d) => d.targetUuid),
    replaceExisting: opts.replaceExisting,
  });
}

export function describeDifferences(differences: readonly RlsDifference[]): string {
  return differences
    .map((d) =>
      d.difference === 'missing_in_target'
        ? `rule '${d.rule}' is missing in the target`
        : d.difference === 'only_in_target'
          ? `rule '${d.rule}' exists only in the target`
          : `rule '${d.rule}' differs in ${d.fields!.join(', ')}`,
    )
    .join('; ');
}
