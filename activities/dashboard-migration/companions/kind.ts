/**
 * The one shape every companion kind has (owners, roles, tags, reports, annotation layers, CSS
 * templates, saved queries, certification): it reads what the source has around the migrated
 * dashboard, compares it with the target by name or uuid (never by numeric id), and, when asked
 * to write (mode copy, after the import), creates or updates in the target what differs, with
 * every id remapped to the target's. It never deletes what only the target has.
 */
import type { CompanionItem, CompanionKindName } from '../../../contracts/companions.ts';
import type { EnvRule } from '../../../contracts/env-rules.ts';
import type { SupersetClient } from '../../../lib/superset/client.ts';
import { directoryOf, type Directory } from './people.ts';
import { memoisedLists } from './recording.ts';
import type { DashboardChart } from '../../../lib/superset/types.ts';
import { readView, readViews, type ChartLists, type DashboardView, type ObjectReads } from './views.ts';

/** What a kind reads and writes through, for one dashboard in one phase (before or after its import). */
export interface CompanionContext {
  source: SupersetClient;
  target: SupersetClient;
  sourceDashboardId: number;
  dashboardUuid: string;
  title: string;
  /** Source dataset uuid → the uuid it has in the target (another one where the import reuses an existing dataset). */
  datasetUuids: Map<string, string>;
  /** Source database id → target database id (request over persisted mappings). */
  mappings: Map<number, number>;
  pauseReports: boolean;
  /** The pair's per-environment rules (embedded configs' allowed domains pass through its text rules). */
  envRules: readonly EnvRule[];
  sourceView(): Promise<DashboardView>;
  /** The dashboard in the target as it is in this phase; null before its first import. */
  targetView(): Promise<DashboardView | null>;
  sourcePeople(): Promise<Directory>;
  targetPeople(): Promise<Directory>;
}

/** A kind's comparison (and, with `write`, its writes): one item per companion; `unavailable` when an environment lacks the kind. */
export interface KindResult {
  items: CompanionItem[];
  unavailable?: string;
}

export interface CompanionKind {
  readonly kind: CompanionKindName;
  /**
   * Superset's import overwrites what this kind writes (a chart's annotation layer entries): after
   * an import it is compared and written again even when it was unchanged before the import.
   */
  readonly undoneByImport?: boolean;
  run(ctx: CompanionContext, write: boolean): Promise<KindResult>;
}

/** A context over both clients; views and directories read once, on first use. */
export function companionContext(opts: {
  source: SupersetClient;
  target: SupersetClient;
  sourceDashboardId: number;
  dashboardUuid: string;
  /** The target's id of the dashboard when known; null when the target is known to have none (see CompanionSubject). */
  targetDashboardId?: number | null;
  /** The target view as read ahead (./views-ahead.ts), instead of reading it here. */
  targetViewRead?: Promise<DashboardView | null>;
  title: string;
  datasetUuids: Map<string, string>;
  mappings: Map<number, number>;
  pauseReports: boolean;
  envRules?: readonly EnvRule[];
  /** Directories are shared across the dashboards of one activity: its input object. */
  activity: object;
  /**
   * The target's lists read once for the activity's comparisons (before a write: see
   * forgetLists in ./recording.ts); without it each is read when asked (a phase that writes).
   */
  sharedTargetLists?: boolean;
}): CompanionContext {
  const { sharedTargetLists: _shared, targetDashboardId, targetViewRead, ...rest } = opts;
  let targetView: Promise<DashboardView | null> | undefined = targetViewRead;
  return {
    ...rest,
    envRules: opts.envRules ?? [],
    // The source does not change during a migration: its lists are read once per activity.
    source: memoisedLists(opts.source, opts.activity),
    target: opts.sharedTargetLists ? memoisedLists(opts.target, opts.activity) : opts.target,
    sourceView: () => sourceViewOf(opts.source, opts.sourceDashboardId, opts.activity),
    // Not in the target yet (the plan's index says so): nothing to read; a known id is read as it is.
    targetView: () =>
      (targetView ??=
        targetDashboardId === null
          ? Promise.resolve(null)
          : opts.sharedTargetLists
            ? targetViewForComparison(opts.target, targetDashboardId ?? opts.dashboardUuid, opts.activity)
            : readView(opts.target, targetDashboardId ?? opts.dashboardUuid)),
    sourcePeople: () => directoryOf(opts.source, opts.activity),
    targetPeople: () => directoryOf(opts.target, opts.activity),
  };
}

/**
 * The target's charts and datasets as the comparisons before any write read them, per activity
 * and client: a dataset several dashboards share is read once, until the target is written
 * (forgetTargetObjects, with the shared lists).
 */
const targetObjects = new WeakMap<
  object,
  WeakMap<SupersetClient, { objects: ObjectReads; views: Map<number, Promise<DashboardView | null>> }>
>();

function targetKept(client: SupersetClient, activity: object): { objects: ObjectReads; views: Map<number, Promise<DashboardView | null>> } {
  let byClient = targetObjects.get(activity);
  if (!byClient) targetObjects.set(activity, (byClient = new WeakMap()));
  let kept = byClient.get(client);
  if (!kept) byClient.set(client, (kept = { objects: new Map(), views: new Map() }));
  return kept;
}

/** The target dashboard's view for a comparison: read together with others (targetViewsTogether), or now. */
function targetViewForComparison(client: SupersetClient, idOrUuid: number | string, activity: object): Promise<DashboardView | null> {
  const { objects, views } = targetKept(client, activity);
  return (typeof idOrUuid === 'number' ? views.get(idOrUuid) : undefined) ?? readView(client, idOrUuid, objects);
}

/**
 * These target dashboards' views read together for the comparisons before any write (a rerun's
 * dashboards told unchanged), kept until the target is written. A joint read that fails leaves
 * each dashboard to read its own.
 */
export function targetViewsTogether(client: SupersetClient, dashboardIds: number[], activity: object): void {
  const { objects, views } = targetKept(client, activity);
  const ids = dashboardIds.filter((id) => !views.has(id));
  if (!ids.length) return;
  const together = readViews(client, ids, objects);
  for (const id of ids)
    views.set(
      id,
      together.then(
        (read) => read.get(id) ?? null,
        () => readView(client, id, objects),
      ),
    );
}

/** The target was written: the comparisons read its dashboards, charts and datasets again. */
export function forgetTargetObjects(client: SupersetClient, activity: object): void {
  const kept = targetObjects.get(activity)?.get(client);
  kept?.objects.clear();
  kept?.views.clear();
}

/**
 * Per activity (its input object), client and dashboard: the comparison before the import and the
 * writes after it read the source once; a chart or dataset several dashboards share, once too.
 */
const sourceViews = new WeakMap<object, WeakMap<SupersetClient, { views: Map<number, Promise<DashboardView>>; objects: ObjectReads }>>();

function sourceKept(client: SupersetClient, activity: object): { views: Map<number, Promise<DashboardView>>; objects: ObjectReads } {
  let byClient = sourceViews.get(activity);
  if (!byClient) sourceViews.set(activity, (byClient = new WeakMap()));
  let kept = byClient.get(client);
  if (!kept) byClient.set(client, (kept = { views: new Map(), objects: new Map() }));
  return kept;
}

/** Per activity: the source dashboards' chart lists the views read together, for the source's chart checks (one source per activity). */
const sourceChartLists = new WeakMap<object, ChartLists>();

/** The source dashboard's chart list as the activity's views read it (the source does not change during a migration); undefined if not read. */
export function sourceChartList(activity: object, dashboardId: number): Promise<DashboardChart[]> | undefined {
  return sourceChartLists.get(activity)?.get(dashboardId);
}

/** A source view that must exist: the source does not lose a dashboard it is migrating unless someone deletes it. */
function existing(view: DashboardView | null | undefined, dashboardId: number): DashboardView {
  if (!view) throw new Error(`dashboard ${dashboardId} is not in the source any more`);
  return view;
}

/** Kept until it fails (a later ask reads again). */
function keep(mine: Map<number, Promise<DashboardView>>, dashboardId: number, read: Promise<DashboardView>): Promise<DashboardView> {
  read.catch(() => {
    if (mine.get(dashboardId) === read) mine.delete(dashboardId);
  });
  mine.set(dashboardId, read);
  return read;
}

/**
 * These source dashboards' views read together (./views.ts readViews: one list read for all their
 * charts, another for their datasets) and kept for sourceViewOf. If the joint read fails, each
 * dashboard is read on its own, and meets its own failure.
 */
export function sourceViewsTogether(client: SupersetClient, dashboardIds: number[], activity: object): Promise<void> {
  const { views: mine, objects } = sourceKept(client, activity);
  const ids = dashboardIds.filter((id) => !mine.has(id));
  if (!ids.length) return Promise.resolve();
  let lists = sourceChartLists.get(activity);
  if (!lists) sourceChartLists.set(activity, (lists = new Map()));
  const together = readViews(client, ids, objects, lists);
  for (const id of ids)
    keep(
      mine,
      id,
      together.then(
        (views) => existing(views.get(id), id),
        () => readView(client, id, objects).then((v) => existing(v, id)),
      ),
    );
  return together.then(
    () => undefined,
    () => undefined,
  );
}

/** The source dashboard's view, read once per activity (the source does not change during a migration, as its lists do not). */
export function sourceViewOf(client: SupersetClient, dashboardId: number, activity: object): Promise<DashboardView> {
  const { views: mine, objects } = sourceKept(client, activity);
  return (
    mine.get(dashboardId) ??
    keep(
      mine,
      dashboardId,
      readView(client, dashboardId, objects).then((v) => existing(v, dashboardId)),
    )
  );
}

/** The item for one companion, from what each side holds. */
export function item(name: string, action: CompanionItem['action'], extra: Partial<CompanionItem> = {}): CompanionItem {
  return { name, action, done: false, ...extra };
}

/** Runs a write, recording on the item that it was done or Superset's refusal. */
export async function attempt(items: CompanionItem[], write: () => Promise<number | void>): Promise<void> {
  try {
    const id = await write();
    for (const i of items) {
      i.done = true;
      if (typeof id === 'number') i.target_id = id;
    }
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    for (const i of items) i.error = message.slice(0, 500);
  }
}

/** `chart 'Sales'`, `dataset 'orders'`: what an item belongs to. */
export function onObject(kind: 'chart' | 'dataset', name: string): string {
  return `${kind} '${name}'`;
}
