import { Bundle } from '../../lib/bundles/bundle.ts';
import {
  fillRequiredFields,
  generalise,
  stripKnownRejections,
  stripRejectedFields,
  type DefaultedField,
  type DroppedField,
} from '../../lib/bundles/rewrite.ts';
import { SupersetImportError } from '../../lib/superset/errors.ts';
import type { MigrationItemsStore } from '../../db/dashboard-migration/items.ts';
import { mergeBundles } from '../../lib/bundles/split.ts';
import type { DashboardOutcome, ObjectPlan, RejectionRule } from '../../contracts/migration.ts';
import type { PreparedBundle } from './plan.ts';
import type { ActivityPort } from './port.ts';
import type { MigrationUpstream } from './upstream.ts';

/** How many times one import is sent again after Superset named keys to strip or fill (each round may name more). */
export const MAX_STRIP_ROUNDS = 4;

export interface ImportResult {
  targetDashboardId: number;
  dropped: DroppedField[];
  /** Fields the target's importer required and the bundle lacked, filled with the target release's defaults. */
  defaulted: DefaultedField[];
  learned: RejectionRule[];
  attempts: number;
  reusedPreviousImport: boolean;
  updatedObjects: ObjectPlan[];
}

/** One prepared bundle to import, and where its intent is kept. */
export interface ImportRequest {
  intents: MigrationItemsStore;
  taskId: string;
  sourceDashboardId: number;
  target: MigrationUpstream;
  prepared: PreparedBundle;
  learned: RejectionRule[];
  overwrite: boolean;
  /** The activity the import runs in: its log, and the heartbeat each round sends (with its attempt). */
  activity: ActivityPort;
}

/**
 * Imports a prepared bundle. The target's Superset says which keys it rejects (a newer bundle
 * into an older release): exactly those are stripped and the import is retried, so the list of
 * dropped fields comes from the target itself. A refused import changes nothing in Superset.
 *
 * Idempotent across activity retries: an intent row is written before the import and confirmed
 * after it; a retry that finds the intent and the dashboard in the target does not import again.
 * The intents go through the caller's store: a migration's imports, alone or together, share
 * its one store (MigrationServices.intents).
 */
export async function importPrepared(opts: ImportRequest): Promise<ImportResult> {
  const { intents: items, target, prepared, activity: ctx } = opts;
  const dropped: DroppedField[] = stripKnownRejections(prepared.bundle, opts.learned);
  const hash = prepared.bundle.contentHash();
  const key = { task_id: opts.taskId, source_dashboard_id: opts.sourceDashboardId };

  const previous = await items.intent(opts.taskId, opts.sourceDashboardId);
  if (previous && previous.bundle_hash === hash) {
    const there = await target.findDashboard(prepared.dashboardUuid);
    if (there) {
      ctx.log.info(`dashboard '${prepared.title}' was already imported by an earlier attempt of this task; not importing it again`);
      await items.markImported(opts.taskId, opts.sourceDashboardId, there.id);
      return {
        targetDashboardId: there.id,
        dropped,
        defaulted: [],
        learned: generalise(dropped, prepared.bundle),
        attempts: 0,
        reusedPreviousImport: true,
        updatedObjects: [],
      };
    }
  }
  await items.markImporting([{ ...key, dashboard_uuid: prepared.dashboardUuid, bundle_hash: hash }]);

  const defaulted: DefaultedField[] = [];
  let attempts = 0;
  for (;;) {
    attempts++;
    ctx.heartbeat({ attempts });
    try {
      await target.importBundle('dashboard', prepared.bundle.toZip(), true);
      break;
    } catch (err) {
      const taught = attempts > MAX_STRIP_ROUNDS ? null : learnFromRefusal(err, [prepared.bundle]);
      if (!taught) throw err; // refused for another reason: report it as it is
      logTaught(ctx.log, taught);
      dropped.push(...taught[0]!.dropped);
      defaulted.push(...taught[0]!.defaulted);
    }
  }

  const updatedObjects = opts.overwrite ? await pushUpdatedObjects(target, [prepared], ctx.log) : [];

  const imported = await target.findDashboard(prepared.dashboardUuid);
  if (!imported) throw new Error(`Superset accepted the import but dashboard ${prepared.dashboardUuid} is not in the target`);
  await items.markImported(opts.taskId, opts.sourceDashboardId, imported.id);
  return {
    targetDashboardId: imported.id,
    dropped,
    defaulted,
    learned: generalise(dropped, prepared.bundle),
    attempts,
    reusedPreviousImport: false,
    updatedObjects,
  };
}

/** What one bundle of a refused import was changed by: keys stripped, keys filled. */
export interface Taught {
  dropped: DroppedField[];
  defaulted: DefaultedField[];
}

/**
 * What Superset's refusal of an import teaches, for each bundle the import carried: the keys its
 * schema rejects (a newer bundle into an older release) stripped, the required keys it lacks (an
 * older bundle into a newer release) filled with the release's defaults, changed in place. Null
 * when it teaches nothing (refused for another reason), for the caller to report as it is. The
 * one rule for a dashboard imported alone and for several imported together.
 */
export function learnFromRefusal(err: unknown, bundles: Bundle[]): Taught[] | null {
  if (!(err instanceof SupersetImportError)) return null;
  const taught = bundles.map((b) => ({ defaulted: fillRequiredFields(b, err.files), dropped: stripRejectedFields(b, err.files) }));
  return taught.some((t) => t.dropped.length || t.defaulted.length) ? taught : null;
}

/** One warning per file and field a refusal changed (a file several bundles share is named once). */
export function logTaught(log: { warn(m: string): void }, taught: Taught[]): void {
  const said = new Set<string>();
  const once = (key: string, message: string) => {
    if (said.has(key)) return;
    said.add(key);
    log.warn(message);
  };
  for (const t of taught) {
    for (const d of t.dropped) once(`-${d.file}:${d.field}`, `the target rejects ${d.object} field '${d.field}': dropped (${d.file})`);
    for (const d of t.defaulted)
      once(
        `+${d.file}:${d.field}`,
        `the target requires ${d.object} field '${d.field}', which the source does not export: set to ${JSON.stringify(d.value)} (${d.file})`,
      );
  }
}

/**
 * Superset's dashboard import reuses existing charts and datasets as they are: the ones the plans
 * found changed are pushed explicitly, one chart import and one dataset import for all of them.
 */
export async function pushUpdatedObjects(
  target: MigrationUpstream,
  plans: PreparedBundle[],
  log: { info(m: string): void },
): Promise<ObjectPlan[]> {
  const updated: ObjectPlan[] = [];
  for (const kind of ['dataset', 'chart'] as const) {
    const changed = plans.flatMap((p) => p.objects.filter((o) => o.kind === kind && o.action === 'update').map((o) => ({ p, o })));
    if (!changed.length) continue;
    const bundle = mergeBundles(changed.map(({ p, o }) => subBundle(p.bundle, [o.file])));
    delete bundle.files.get('metadata.yaml')?.content.type;
    await target.importBundle(kind, bundle.toZip(), true);
    updated.push(...changed.map(({ o }) => o));
    log.info(`updated ${changed.length} existing ${kind}(s) in the target: ${changed.map(({ o }) => o.name).join(', ')}`);
  }
  return updated;
}

/**
 * A bundle for Superset's chart or dataset import: the named files plus what they link to
 * (a chart's dataset, a dataset's database). metadata.yaml loses its `type`, which must otherwise
 * match the endpoint's model name.
 */
function subBundle(bundle: Bundle, files: string[]): Bundle {
  const keep = new Set<string>(['metadata.yaml', ...files]);
  const byUuid = new Map([...bundle.files.values()].map((f) => [String(f.content.uuid), f.path]));
  for (const file of files) {
    const f = bundle.files.get(file)!;
    const datasetPath = f.content.dataset_uuid ? byUuid.get(String(f.content.dataset_uuid)) : undefined;
    if (datasetPath) keep.add(datasetPath);
  }
  for (const path of [...keep]) {
    const f = bundle.files.get(path);
    const dbPath = f?.content.database_uuid ? byUuid.get(String(f.content.database_uuid)) : undefined;
    if (dbPath) keep.add(dbPath);
  }
  const sub = bundle.clone();
  for (const path of [...sub.files.keys()]) if (!keep.has(path)) sub.files.delete(path);
  delete sub.files.get('metadata.yaml')!.content.type;
  return sub;
}

export function outcomeBase(sourceDashboardId: number, p: PreparedBundle | undefined): DashboardOutcome {
  return {
    kind: 'dashboard',
    id: sourceDashboardId,
    title: p?.title ?? null,
    status: 'failed',
    outcome: 'failed',
    target_dashboard_id: p?.targetDashboardId ?? null,
    dashboard_uuid: p?.dashboardUuid ?? null,
    objects: p?.objects ?? [],
    database_mappings: p?.databaseMappings ?? [],
    collisions: p?.collisions ?? [],
    dropped_fields: [],
    defaulted_fields: [],
    learned_rejections: [],
    chart_uuids: p?.chartUuids ?? [],
    next_actions: [...(p?.nextActions ?? [])],
    import_attempts: 0,
    ...(p?.envRules.length ? { env_rules: p.envRules } : {}),
    ...(p?.warnings?.length ? { warnings: p.warnings } : {}),
  };
}
