/**
 * The companion step of a dashboard's migration (see ./kind.ts for what a kind is):
 *
 *   check  before the import (and in a dry run): every kind compared; a kind in `strict` mode
 *          with a difference it refuses (strictRefuses) fails the dashboard before anything is
 *          imported (`code: companions_mismatch`), as row-level security does
 *   apply  after the import (or for a dashboard found unchanged): each `copy` kind, and each
 *          strict kind that writes what it lets through (roles), compared again against the
 *          target as the import left it (the ids exist now) and written
 *
 * A kind an environment lacks (alerts and reports without ALERT_REPORTS, an API the service
 * account may not read) is reported `available: false` with the reason, never failed.
 */
import {
  companionModes,
  isCompanionDifference,
  strictRefuses,
  type CompanionKindName,
  type CompanionKindReport,
  type CompanionMode,
} from '../../../contracts/companions.ts';
import { migrateAgainAction, type DashboardOutcome } from '../../../contracts/migration.ts';
import { uniqueActions, type NextAction } from '../../../contracts/outcomes.ts';
import { failureText } from '../../../lib/detached.ts';
import { SupersetForbiddenError, SupersetNotFoundError } from '../../../lib/superset/errors.ts';
import type { ListedMeta } from '../../../lib/superset/resources/object-meta.ts';
import { Bundle } from '../../../lib/bundles/bundle.ts';
import { splitByDashboard } from '../../../lib/bundles/split.ts';
import { itemFailure } from '../../failures/index.ts';
import { companionContext } from './context.ts';
import type { CompanionContext, CompanionKind } from './kind.ts';
import { COMPANION_KIND_MODULES } from './kinds.ts';
import { forgetTargetObjects, sourceViewsTogether, targetViewsTogether } from './view-caches.ts';
import { forgetLists } from './recording.ts';
import { clientsOf, snapshotOf, type CompanionScope } from './scope.ts';
import type { Request } from '../context.ts';
import { inParallel, type DashboardView } from './views.ts';
import { noteTargetWrite, readTargetViewsAhead, takeTargetView } from './views-ahead.ts';

/** Most dashboards whose companions a rerun compares at a time (each reads up to 8 objects at once a side). */
const COMPARED_AT_ONCE = 3;

/** The dashboard the step is about: its uuid and title, and its datasets' uuids on both sides. */
export interface CompanionSubject {
  dashboardUuid: string;
  title: string;
  datasets: Array<{ sourceUuid: string; targetUuid: string }>;
  /**
   * The dashboard's id in the target when the caller knows it (the plan's index, the import's
   * answer), null when the caller knows the target has none yet (nothing to read there): spares
   * the target a lookup by uuid per dashboard. Undefined: looked up by uuid.
   */
  targetDashboardId?: number | null;
}

export interface CompanionCheck {
  reports: CompanionKindReport[];
  /** Copy kinds not compared yet (checkCompanions `deferCopy`): compared and written after the import. */
  deferred?: CompanionKindName[];
  /** Set when a strict kind differs: nothing was imported. */
  blocked?: { code: 'companions_mismatch'; error: string; next_actions: NextAction[] };
  /** What to do about companions that cannot be carried (an owner's account or a role the target lacks). */
  next_actions: NextAction[];
}

/** The target is written (an import, a companion): the lists the comparisons shared are read again after it. */
export async function targetWritten(scope: Pick<CompanionScope, 'svc' | 'input' | 'clients'>): Promise<void> {
  const [, target] = await clientsOf(scope);
  forgetLists(target, scope.input);
  forgetTargetObjects(target, scope.input);
}

/** `compare`: the comparison before any write, sharing the target's lists with the activity's other dashboards. */
async function contextOf(
  scope: CompanionScope,
  dashboardId: number,
  subject: CompanionSubject,
  compare: boolean,
  targetViewRead?: Promise<DashboardView | null>,
): Promise<CompanionContext> {
  const [source, target] = await clientsOf(scope);
  return companionContext({
    source,
    target,
    targetViewRead,
    sourceDashboardId: dashboardId,
    dashboardUuid: subject.dashboardUuid,
    targetDashboardId: subject.targetDashboardId,
    title: subject.title,
    datasetUuids: new Map(subject.datasets.map((d) => [d.sourceUuid, d.targetUuid])),
    mappings: scope.mappings,
    pauseReports: companionModes(scope.input.companions).pause_reports,
    embeddedAnyDomain: companionModes(scope.input.companions).embedded_any_domain,
    envRules: scope.envRules,
    activity: scope.input,
    taskSnapshot: snapshotOf(scope),
    sharedTargetLists: compare,
  });
}

/** One kind compared (and written, with `write`); an environment refusing its API makes it unavailable, not failed. */
async function runKind(kind: CompanionKind, mode: CompanionMode, ctx: CompanionContext, write: boolean): Promise<CompanionKindReport> {
  try {
    const r = await kind.run(ctx, write);
    return {
      kind: kind.kind,
      mode,
      available: r.unavailable === undefined,
      ...(r.unavailable ? { unavailable: r.unavailable } : {}),
      items: r.items,
    };
  } catch (err) {
    if (err instanceof SupersetNotFoundError || err instanceof SupersetForbiddenError) {
      return {
        kind: kind.kind,
        mode,
        available: false,
        unavailable: `Superset refused to show it: ${err.message.slice(0, 300)}`,
        items: [],
      };
    }
    throw err;
  }
}

/** Whether a migration's plan leaves the copy kinds for after its import (checkCompanions `deferCopy`): unless it is a dry run, which imports nothing. */
export function defersCopyKinds(input: Pick<Request, 'dryRun'>): boolean {
  return !input.dryRun;
}

/**
 * What a migration's plan compares of the source dashboards before its import: their whole views
 * (a dry run, or a kind other than roles that is not in copy mode), their roles alone (their list
 * rows will do), or nothing (roles in copy mode too).
 */
export function sourceReadBeforeImport(input: Pick<Request, 'dryRun' | 'companions'>): 'views' | 'roles' | 'nothing' {
  if (!defersCopyKinds(input)) return 'views';
  const modes = companionModes(input.companions);
  const before = COMPANION_KIND_MODULES.filter((k) => modes[k.kind] !== 'copy').map((k) => k.kind);
  if (before.some((k) => k !== 'roles')) return 'views';
  return before.length ? 'roles' : 'nothing';
}

/**
 * Before the import: every kind compared and decided by its mode. With `deferCopy` (a migration
 * that will import), the copy kinds are left for after the import (`deferred`): nothing they find
 * stops an import, and after it they are compared against the target as the import left it and
 * written in one go (applyCompanions), so their source reads (an embedded configuration per
 * dashboard, the reports and saved queries) run while the target imports instead of before it.
 */
export async function checkCompanions(
  scope: CompanionScope,
  dashboardId: number,
  subject: CompanionSubject,
  opts: { deferCopy?: boolean } = {},
): Promise<CompanionCheck> {
  const modes = companionModes(scope.input.companions);
  const ctx = await contextOf(scope, dashboardId, subject, true);
  const deferred = opts.deferCopy ? COMPANION_KIND_MODULES.filter((k) => modes[k.kind] === 'copy') : [];
  const now = COMPANION_KIND_MODULES.filter((k) => !deferred.includes(k));
  // Reads only, side by side: the kinds share the dashboard's views, read once.
  const reports = await Promise.all(now.map((kind) => runKind(kind, modes[kind.kind], ctx, false)));
  const check: CompanionCheck = { reports, next_actions: [], ...(deferred.length ? { deferred: deferred.map((k) => k.kind) } : {}) };
  const strict: CompanionKindReport[] = [];
  for (const r of reports) {
    if (r.mode === 'ignore' && r.items.some(isCompanionDifference)) r.ignored_by_request = true;
    // A kind an environment lacks is reported, never failed, even under strict (its drop carries a next action).
    if (r.mode === 'strict' && r.available && strictRefuses(r)) strict.push(r);
  }
  noteCompared(scope, subject, check, reports);
  if (strict.length) check.blocked = blocked(scope, dashboardId, subject, strict);
  return check;
}

/** The kinds' reports taken into the check: the next actions of what cannot be carried, and a log line for each kind an environment lacks. */
function noteCompared(scope: CompanionScope, subject: CompanionSubject, check: CompanionCheck, reports: CompanionKindReport[]): void {
  // What cannot be carried, or was carried only in part (a report paused, a list kept), gets its next action under copy; under
  // strict when the environment lacks the kind (a drop, not a failure).
  for (const r of reports)
    if (r.mode === 'copy' || (r.mode === 'strict' && !r.available))
      for (const i of r.items) if (i.next_action) check.next_actions.push(i.next_action);
  for (const r of reports) if (!r.available) scope.log.info(`'${subject.title}': ${r.kind} not compared: ${r.unavailable}`);
  check.next_actions = uniqueActions(check.next_actions);
}

/** Reports in the kinds' one order (the check's reports are kept in place: an outcome may hold them already). */
function inKindOrder(reports: CompanionKindReport[]): CompanionKindReport[] {
  const at = (r: CompanionKindReport) => COMPANION_KIND_MODULES.findIndex((k) => k.kind === r.kind);
  return [...reports].sort((a, b) => at(a) - at(b));
}

/** The kinds a check left for after the import, compared now without writing (a dashboard found unchanged after all). */
export async function completeCheck(
  scope: CompanionScope,
  dashboardId: number,
  subject: CompanionSubject,
  check: CompanionCheck,
): Promise<void> {
  if (!check.deferred?.length) return;
  const modes = companionModes(scope.input.companions);
  const ctx = await contextOf(scope, dashboardId, subject, true);
  const kinds = COMPANION_KIND_MODULES.filter((k) => check.deferred!.includes(k.kind));
  const reports = await Promise.all(kinds.map((kind) => runKind(kind, modes[kind.kind], ctx, false)));
  delete check.deferred;
  check.reports.splice(0, check.reports.length, ...inKindOrder([...check.reports, ...reports]));
  noteCompared(scope, subject, check, reports);
}

/**
 * After the import (`imported`), or for a dashboard found unchanged: each copy kind written to the
 * target; the reports replaced by what was done. Returns the writes Superset refused.
 */
export async function applyCompanions(
  scope: CompanionScope,
  dashboardId: number,
  subject: CompanionSubject,
  check: CompanionCheck,
  imported = false,
): Promise<string[]> {
  // Kinds left for after the import are compared and written in one run each, against the target as the import left it.
  const deferred = imported ? (check.deferred ?? []) : [];
  if (!imported) await completeCheck(scope, dashboardId, subject, check);
  const copying = [
    ...copyingKinds(check, imported),
    ...deferred.map((kind): CompanionKindReport => ({ kind, mode: 'copy', available: true, items: [] })),
  ];
  if (!copying.length) return [];
  await targetWritten(scope);
  const ahead = typeof subject.targetDashboardId === 'number' ? takeTargetView(scope.input, subject.targetDashboardId) : undefined;
  const ctx = await contextOf(scope, dashboardId, subject, false, ahead);
  const failed: string[] = [];
  for (const r of copying) {
    const kind = COMPANION_KIND_MODULES.find((k) => k.kind === r.kind)!;
    const done = await writeKind(kind, r.mode, ctx);
    if (deferred.includes(r.kind)) {
      check.reports.push(r);
      noteCompared(scope, subject, check, [done]);
    }
    // Written (or tried): the views other dashboards read ahead are read again.
    if (done.items.some((i) => i.done || i.error)) noteTargetWrite(scope.input);
    Object.assign(r, done);
    for (const i of done.items) if (i.error) failed.push(`${r.kind} '${i.name}'${i.on ? ` on ${i.on}` : ''}: ${i.error}`);
    const written = done.items.filter((i) => i.done);
    if (written.length)
      scope.log.info(
        `'${subject.title}': ${r.kind}: ${written.map((i) => `${i.action} '${i.name}'${i.on ? ` on ${i.on}` : ''}`).join(', ')}`,
      );
  }
  if (deferred.length) {
    delete check.deferred;
    check.reports.splice(0, check.reports.length, ...inKindOrder(check.reports));
  }
  return failed;
}

/**
 * A kind written after the import. A strict kind is compared again first: when the target has
 * changed since the check into what strict refuses, nothing is written and its items say why.
 */
async function writeKind(kind: CompanionKind, mode: CompanionMode, ctx: CompanionContext): Promise<CompanionKindReport> {
  if (mode !== 'strict') return runKind(kind, mode, ctx, true);
  const now = await runKind(kind, mode, ctx, false);
  if (!strictRefuses(now)) return runKind(kind, mode, ctx, true);
  for (const i of now.items)
    if (i.action === 'create' || i.action === 'update')
      i.error = `the target changed since the comparison and ${kind.kind} now differ in a way strict refuses; nothing was written`;
  return now;
}

/** The kinds written after the import: those with something to create or update; after an import also those it undoes. */
function copyingKinds(check: CompanionCheck, imported: boolean): CompanionKindReport[] {
  const undone = (r: CompanionKindReport) =>
    imported && r.items.length > 0 && COMPANION_KIND_MODULES.some((k) => k.kind === r.kind && k.undoneByImport);
  const writes = (r: CompanionKindReport) =>
    r.mode === 'copy' || (r.mode === 'strict' && COMPANION_KIND_MODULES.some((k) => k.kind === r.kind && k.writesUnderStrict));
  return check.reports.filter(
    (r) => writes(r) && r.available && (r.items.some((i) => i.action === 'create' || i.action === 'update') || undone(r)),
  );
}

/**
 * After a joint import: the target views of the dashboards whose companions will be written, read
 * side by side while the first ones are written (./views-ahead.ts: a write since makes a dashboard
 * read its own again).
 */
export function readImportedViewsAhead(
  scope: Pick<CompanionScope, 'svc' | 'input' | 'clients'>,
  dashboards: Array<{ targetDashboardId: number; check?: CompanionCheck }>,
  /** The largest export read (../../../activities/deps.ts maxBundleBytes). */
  maxBytes: number,
  /** The imported dashboards' list rows as the caller read them after the import (their ids), by target id. */
  dashboardRows?: ReadonlyMap<number, ListedMeta>,
): void {
  const ids = dashboards
    .filter((d) => d.check && (copyingKinds(d.check, true).length || d.check.deferred?.length))
    .map((d) => d.targetDashboardId);
  if (ids.length < 2) return;
  const target = clientsOf(scope).then(([, t]) => t);
  // expected: a target that cannot be opened fails the views' own reads, whose takers then read (and fail) themselves.
  target.catch(() => undefined);
  // One export of every dashboard imported: the views read from it, and the target's chart checks take it when nothing was written since.
  const all = dashboards.map((d) => d.targetDashboardId);
  const bundles = target.then(async (t) => splitByDashboard(Bundle.fromZip(await t.exportDashboards(all), maxBytes)));
  readTargetViewsAhead(scope.input, target, ids, { ids: all, bundles }, dashboardRows);
}

function blocked(
  scope: CompanionScope,
  dashboardId: number,
  subject: CompanionSubject,
  strict: CompanionKindReport[],
): NonNullable<CompanionCheck['blocked']> {
  const kinds = strict.map((r) => r.kind);
  const retry = (mode: CompanionMode, action: string, description: string): NextAction => {
    const companions = { ...scope.input.companions, ...Object.fromEntries(kinds.map((k) => [k, mode])) } as Partial<
      Record<CompanionKindName, CompanionMode>
    >;
    return migrateAgainAction(action, description, { ...scope.input, companions }, [dashboardId], scope.input.overwrite);
  };
  const what = strict
    .map(
      (r) =>
        `${r.kind}: ${r.items
          .filter((i) => i.action !== 'unchanged')
          .map((i) => `${i.action} '${i.name}'${i.on ? ` on ${i.on}` : ''}`)
          .join(', ')}`,
    )
    .join('; ');
  const missing = strict.flatMap((r) => r.items.filter((i) => i.action === 'missing' && i.next_action).map((i) => i.next_action!));
  return {
    code: 'companions_mismatch',
    error: `the ${kinds.join(', ')} of '${subject.title}' differ between source and target and the request says strict for them: ${what}; nothing was imported`,
    next_actions: uniqueActions([
      retry(
        'copy',
        'retry_with_companions_copy',
        `Copy the source's ${kinds.join(', ')} to the target with the dashboard (never deleting what only the target has)`,
      ),
      retry(
        'ignore',
        'retry_with_companions_ignore',
        `Migrate anyway, recording that the ${kinds.join(', ')} differences were ignored on request`,
      ),
      ...missing,
      {
        action: 'fix_companions_in_superset',
        description: `Or make the ${kinds.join(', ')} the same in both Superset instances, then retry this dashboard`,
      },
    ]),
  };
}

/**
 * After a dashboard's import: its copy kinds written. A refused write, or one that fails, leaves
 * the dashboard `imported_with_errors` with what was not written (never reported as a clean import).
 */
export async function companionsAfterImport(
  scope: CompanionScope,
  dashboardId: number,
  subject: CompanionSubject,
  check: CompanionCheck | undefined,
  done: DashboardOutcome,
): Promise<DashboardOutcome | null> {
  if (!check) return null;
  let refused: string[];
  try {
    refused = await applyCompanions(scope, dashboardId, subject, check, true);
  } catch (err) {
    const failure = itemFailure(err, {
      step: 'companions',
      item: `the companions of dashboard ${dashboardId}`,
      envId: scope.input.targetEnvId,
    });
    refused = [failure.error];
  }
  done.companions = check.reports;
  // What the kinds compared after the import found that cannot be carried (an owner's account the target lacks).
  done.next_actions = uniqueActions([...(done.next_actions ?? []), ...check.next_actions]);
  if (!refused.length) return null;
  const error = `imported, but some of its companions were not written: ${refused.join('; ')}`;
  scope.log.error(`dashboard ${dashboardId} ('${subject.title}'): ${error}`);
  return { ...done, status: 'imported_with_errors', step: 'companions', error };
}

/**
 * A rerun's dashboards told unchanged from both exports: their companions compared side by side
 * (reads only, at most COMPARED_AT_ONCE dashboards at a time, the activity's lists shared), then
 * the copy kinds written one dashboard after another, each with the next actions of those that
 * cannot be carried. Null for a dashboard the full plan must decide (a strict kind differs, a
 * write was refused, a read failed): it reports the dashboard with its reasons.
 */
export async function settledCompanions(
  scope: CompanionScope,
  dashboards: Array<{ dashboardId: number; subject: CompanionSubject }>,
  /** The batch's exports of both sides (source dashboard id, target dashboard id): the views are read from them and list reads. */
  exports?: { source: (dashboardId: number) => Bundle | undefined; target: (dashboardId: number) => Bundle | undefined },
): Promise<Array<{ reports: CompanionKindReport[]; next_actions: NextAction[] } | null>> {
  // Both sides' views read together before the comparisons (nothing is written until they are all done). The source's
  // joint read is awaited beside the comparisons, each of which awaits its own view from it (and meets its failure).
  const [source, target] = await clientsOf(scope);
  const sourceViews = sourceViewsTogether(
    source,
    dashboards.map((d) => d.dashboardId),
    snapshotOf(scope),
    exports?.source,
  );
  targetViewsTogether(
    target,
    dashboards.flatMap((d) => (typeof d.subject.targetDashboardId === 'number' ? [d.subject.targetDashboardId] : [])),
    scope.input,
    exports?.target,
  );
  const [checks] = await Promise.all([compareSettled(scope, dashboards), sourceViews]);
  const out: Array<{ reports: CompanionKindReport[]; next_actions: NextAction[] } | null> = [];
  for (const [at, check] of checks.entries()) {
    const { dashboardId, subject } = dashboards[at]!;
    try {
      const refused = check ? await applyCompanions(scope, dashboardId, subject, check) : ['not compared'];
      out.push(refused.length ? null : { reports: check!.reports, next_actions: check!.next_actions });
    } catch (err) {
      scope.log.warn(`dashboard ${dashboardId}: its companions could not be written ahead (${failureText(err)}): the full plan decides it`);
      out.push(null);
    }
  }
  return out;
}

/** The settled dashboards' companions compared, a few at a time: null for one blocked or whose comparison failed. */
function compareSettled(scope: CompanionScope, dashboards: Array<{ dashboardId: number; subject: CompanionSubject }>) {
  return inParallel(
    dashboards.map(({ dashboardId, subject }) => async () => {
      try {
        const check = await checkCompanions(scope, dashboardId, subject);
        return check.blocked ? null : check;
      } catch (err) {
        scope.log.warn(
          `dashboard ${dashboardId}: its companions could not be compared ahead (${failureText(err)}): the full plan decides it`,
        );
        return null;
      }
    }),
    COMPARED_AT_ONCE,
  );
}
