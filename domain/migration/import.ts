/**
 * Importing planned dashboards into the target: one alone (Superset's answer is its own), or
 * several in one import call. Every path writes its intents (before the import, confirmed after
 * it) through the migration's one store, MigrationServices.intents, so an attempt run again never
 * imports a dashboard twice. Row-level security is written after the import.
 */
import { aggregateFields, type DashboardOutcome, type RejectionRule } from '../../contracts/migration.ts';
import { generalise, stripKnownRejections, type DefaultedField, type DroppedField } from '../../lib/bundles/rewrite.ts';
import { mergeBundles } from '../../lib/bundles/split.ts';
import { classifySupersetFailure } from '../../lib/superset/errors.ts';
import { listedColumns, listedRow, type ListedMeta } from '../../lib/superset/resources/object-meta.ts';
import { maxBundleBytes } from './deps.ts';
import { itemFailure } from '../failures/index.ts';
import { importPrepared, learnFromRefusal, logTaught, MAX_STRIP_ROUNDS, pushUpdatedObjects, type ImportResult } from './apply.ts';
import type { PlanScope } from './context.ts';
import type { Planned } from './plan-one.ts';
import type { PreparedBundle } from './plan.ts';
import { companionsAfterImport, readImportedViewsAhead, targetWritten } from './companions/step.ts';
import { copyRules } from './rls-step.ts';
import { withStep } from './step.ts';
import type { TargetIndex } from './target-index.ts';

type ImportedAs = Pick<ImportResult, 'targetDashboardId' | 'dropped' | 'defaulted' | 'learned' | 'attempts' | 'reusedPreviousImport'>;

/** Imports one planned dashboard on its own (Superset's answer is this dashboard's alone), then its row-level security. */
export async function importOne(scope: PlanScope, p: Omit<Planned, 'position'>, learned: RejectionRule[]): Promise<DashboardOutcome> {
  const { svc, input, up, taskId } = scope;
  const r = await withStep('import', async () => {
    const imported = await importPrepared({
      intents: svc.intents,
      taskId,
      sourceDashboardId: p.dashboardId,
      target: up.target,
      prepared: p.prepared,
      learned,
      overwrite: input.overwrite,
      activity: scope,
    });
    noteImported(up.index, p.prepared, imported.targetDashboardId);
    return imported;
  });
  return afterImport(scope, p, r);
}

/** What a joint import ended with: each dashboard's outcome, or a reason to import them one by one. */
export type JointImport =
  | { imported: DashboardOutcome[] }
  /** Refused (nothing was imported), or an earlier attempt may have imported some; `learned`: what the refusals taught on the way. */
  | { alone: true; learned: RejectionRule[] };

/**
 * Imports several planned dashboards in one call of Superset's import. Keys Superset names as
 * rejected or missing are learned from its refusal and the lot is sent again; any other refusal
 * (nothing was imported) or an earlier attempt of this batch that may have imported some (each
 * then checks its own intent) sends the caller one by one. An outage is thrown, for the batch to
 * be tried again.
 */
export async function importTogether(
  scope: PlanScope,
  ready: Planned[],
  learned: RejectionRule[],
  /** Called once the lot is ready to send (its zip built): what the batch reads beside the import begins then. */
  sending: () => void = () => undefined,
): Promise<JointImport> {
  const { svc, input, up, taskId, log } = scope;
  const ids = ready.map((p) => p.dashboardId);
  if (await svc.intents.anyIntent(taskId, ids)) return { alone: true, learned: [] };
  const dropped = new Map(ready.map((p) => [p.dashboardId, stripKnownRejections(p.prepared.bundle, learned)]));
  await svc.intents.markImporting(
    ready.map((p) => ({
      task_id: taskId,
      source_dashboard_id: p.dashboardId,
      dashboard_uuid: p.prepared.dashboardUuid,
      bundle_hash: p.prepared.bundle.contentHash(),
    })),
  );
  const defaulted = new Map(ready.map((p) => [p.dashboardId, [] as DefaultedField[]]));
  const sent = await sendTogether(scope, ready, { dropped, defaulted }, sending);
  if ('alone' in sent) return sent;
  if (input.overwrite)
    await pushUpdatedObjects(
      up.target,
      ready.map((p) => p.prepared),
      log,
    );
  const landed = await landTogether(scope, ready);
  const out: DashboardOutcome[] = [];
  for (const [at, p] of ready.entries()) {
    const d = dropped.get(p.dashboardId) ?? [];
    const r = {
      targetDashboardId: landed[at]!,
      dropped: d,
      defaulted: defaulted.get(p.dashboardId) ?? [],
      learned: generalise(d, p.prepared.bundle),
      attempts: sent.attempts,
      reusedPreviousImport: false,
    };
    out.push(await afterImport(scope, p, r));
  }
  return { imported: out };
}

/** What each dashboard of a joint import had taken out of its bundle (dropped) or filled in (defaulted), by source id. */
interface JointFields {
  dropped: Map<number, DroppedField[]>;
  defaulted: Map<number, DefaultedField[]>;
}

/**
 * The lot sent to Superset's import until it is accepted (`attempts`: how many sends it took), or
 * refused for a reason no key learned answers (`alone`). Learned keys are added to `fields`.
 */
async function sendTogether(
  scope: PlanScope,
  ready: Planned[],
  fields: JointFields,
  sending: () => void,
): Promise<{ attempts: number } | Extract<JointImport, { alone: true }>> {
  const { up, log } = scope;
  const { dropped, defaulted } = fields;
  const bundles = ready.map((p) => p.prepared.bundle);
  let attempts = 0;
  for (;;) {
    attempts++;
    try {
      const zip = mergeBundles(bundles).toZip();
      sending();
      await up.target.importBundle('dashboard', zip, true);
      return { attempts };
    } catch (err) {
      if (classifySupersetFailure(err)?.retryable) throw err; // an outage: the batch is tried again
      // Keys the target rejects or requires (another release) are learned here, as for one dashboard alone: the lot is sent again.
      const taught = attempts > MAX_STRIP_ROUNDS ? null : learnFromRefusal(err, bundles);
      if (taught) {
        logTaught(log, taught);
        for (const [at, t] of taught.entries()) {
          dropped.get(ready[at]!.dashboardId)!.push(...t.dropped);
          defaulted.get(ready[at]!.dashboardId)!.push(...t.defaulted);
        }
        continue;
      }
      log.warn(
        `Superset refused the ${ready.length} dashboards imported together (${(err as Error).message.slice(0, 300)}): each is imported alone`,
      );
      return { alone: true, learned: ready.flatMap((p) => generalise(dropped.get(p.dashboardId)!, p.prepared.bundle)) };
    }
  }
}

/**
 * After Superset accepted the lot: each dashboard's id in the target (in the order of `ready`),
 * noted in the index and confirmed in its intent, and the companions' views begun.
 */
async function landTogether(scope: PlanScope, ready: Planned[]): Promise<number[]> {
  const { svc, up, taskId } = scope;
  // The new ids, read with the columns the companions' views compare: those views list no dashboard of their own.
  const rows = await up.index.refreshDashboards(listedColumns('dashboard'));
  const landed: number[] = [];
  for (const p of ready) {
    const there = (await up.index.dashboard(p.prepared.dashboardUuid)) ?? (await up.target.findDashboard(p.prepared.dashboardUuid));
    if (!there) throw new Error(`Superset accepted the import but dashboard ${p.prepared.dashboardUuid} is not in the target`);
    noteImported(up.index, p.prepared, there.id);
    landed.push(there.id);
  }
  await svc.intents.markAllImported(
    taskId,
    ready.map((p, at) => ({ sourceDashboardId: p.dashboardId, targetDashboardId: landed[at]! })),
  );
  // The companions are written one dashboard after another; what they compare with is read side by side meanwhile.
  readImportedViewsAhead(
    scope,
    ready.map((p, at) => ({ targetDashboardId: landed[at]!, check: p.companions })),
    maxBundleBytes(svc.deps),
    landedRows(rows, landed),
  );
  return landed;
}

/** The landed dashboards' rows as the companions' views take them (ObjectMetas.listed's), by target id. */
function landedRows(rows: Array<Record<string, unknown> & { id: number }>, landed: number[]): Map<number, ListedMeta> {
  const out = new Map<number, ListedMeta>();
  for (const r of rows) {
    const row = landed.includes(r.id) ? listedRow('dashboard', r) : undefined;
    if (row) out.set(r.id, row);
  }
  return out;
}

/** The index learns of an import at once: this dashboard exists now; content it may have changed is read again. */
function noteImported(index: TargetIndex, prepared: PreparedBundle, targetDashboardId: number): void {
  const imported = prepared.bundle.of('dashboards')[0]?.content;
  index.noteDashboard({
    id: targetDashboardId,
    uuid: prepared.dashboardUuid,
    slug: typeof imported?.slug === 'string' && imported.slug ? imported.slug : null,
    title: prepared.title,
  });
  index.noteImportedContent(prepared.bundle);
}

/** Row-level security written after the import, and the dashboard's outcome. */
async function afterImport(scope: PlanScope, p: Omit<Planned, 'position'>, r: ImportedAs): Promise<DashboardOutcome> {
  const { input, up, log } = scope;
  const { prepared, rls } = p;
  // The import wrote the target (a theme, for one): the companion comparisons after it read its lists again.
  await targetWritten(scope);
  const done: DashboardOutcome = {
    ...p.outcome,
    target_dashboard_id: r.targetDashboardId,
    dropped_fields: aggregateFields(r.dropped),
    defaulted_fields: aggregateFields(r.defaulted),
    learned_rejections: r.learned,
    import_attempts: r.attempts,
    reused_previous_import: r.reusedPreviousImport,
  };
  if (rls.toCopy.length) {
    try {
      rls.report.writes = await copyRules({
        source: up.source,
        target: up.target,
        targetIndex: up.index,
        prepared,
        rules: rls.toCopy,
        replaceExisting: input.rlsOverwrite,
      });
      log.info(`row-level security of '${prepared.title}': ${rls.report.writes!.map((w) => `${w.action} '${w.rule}'`).join(', ')}`);
    } catch (err) {
      // Imported, but its rows are not filtered as in the source: never reported as a clean import.
      const failure = itemFailure(err, {
        step: 'rls',
        item: `the row-level-security rules of dashboard ${p.dashboardId}`,
        envId: input.targetEnvId,
      });
      log.error(
        `dashboard ${p.dashboardId} ('${prepared.title}') was imported, but its row-level-security rules were not written: ${failure.error}`,
      );
      return {
        ...done,
        status: 'imported_with_errors',
        ...failure,
        error: `imported, but its row-level-security rules were not written: ${failure.error}`,
      };
    }
  }
  // The import answered the dashboard's id in the target: the companions read it by that id.
  const subject = { ...prepared, targetDashboardId: r.targetDashboardId };
  const companionsFailed = await companionsAfterImport(scope, p.dashboardId, subject, p.companions, done);
  if (companionsFailed) return companionsFailed;
  log.info(
    `imported '${prepared.title}' as target dashboard ${r.targetDashboardId}${
      r.dropped.length
        ? `, dropping ${r.dropped.length} field(s) the target rejects (${aggregateFields(r.dropped)
            .map((f) => `${f.kind} ${f.field} ×${f.count}`)
            .join(', ')})`
        : ''
    }${r.defaulted.length ? `, filling ${r.defaulted.length} required field(s) with the target's defaults` : ''}`,
  );
  return { ...done, status: 'imported' };
}
