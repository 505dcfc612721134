/**
 * The companions' dashboard views kept per scope and client, so each is read once where it can
 * be: a source's under the caller's source key (a migration's task snapshot, shared by the
 * batches of the task on a worker: ../caches.ts sourceSnapshots; else the activity's input),
 * read together for the dashboards a batch plans, or the next batch's during an import; a
 * target's per activity (its input object) for the comparisons
 * before any write, read together for a rerun's dashboards and forgotten once the target is
 * written. How one view is read is ./views.ts's.
 */
import type { Bundle } from '../../../lib/bundles/bundle.ts';
import type { SupersetClient } from '../../../lib/superset/client.ts';
import type { EmbeddedConfig } from '../../../lib/superset/resources/embedded.ts';
import { plainMeta, type ListedMeta, type ObjectMeta } from '../../../lib/superset/resources/object-meta.ts';
import type { DashboardChart } from '../../../lib/superset/types.ts';
import { inParallel, readView, readViews, type ChartLists, type DashboardView, type ObjectReads } from './views.ts';
import { withDashboardRows } from './views-listed.ts';

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
export function targetViewForComparison(
  client: SupersetClient,
  idOrUuid: number | string,
  activity: object,
): Promise<DashboardView | null> {
  const { objects, views } = targetKept(client, activity);
  return (typeof idOrUuid === 'number' ? views.get(idOrUuid) : undefined) ?? readView(client, idOrUuid, objects);
}

/**
 * These target dashboards' views read together for the comparisons before any write (a rerun's
 * dashboards told unchanged), kept until the target is written. A joint read that fails leaves
 * each dashboard to read its own.
 */
export function targetViewsTogether(
  client: SupersetClient,
  dashboardIds: number[],
  activity: object,
  /** The batch's export of a target dashboard, made before anything was written (./views-listed.ts). */
  exportOf?: (dashboardId: number) => Bundle | undefined,
): void {
  const { objects, views } = targetKept(client, activity);
  const ids = dashboardIds.filter((id) => !views.has(id));
  if (!ids.length) return;
  const together = readViews(client, ids, objects, undefined, exportOf);
  for (const id of ids)
    views.set(
      id,
      together.then(
        (read) => read.get(id) ?? null,
        // expected: a failed joint read leaves each dashboard to read its own, which meets its own failure.
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
 * Per source key (the task's snapshot, or the activity's input), client and dashboard: the
 * comparison before the import and the writes after it read the source once; a chart or dataset
 * several dashboards share, once too.
 */
const sourceViews = new WeakMap<object, WeakMap<SupersetClient, { views: Map<number, Promise<DashboardView>>; objects: ObjectReads }>>();

function sourceKept(client: SupersetClient, activity: object): { views: Map<number, Promise<DashboardView>>; objects: ObjectReads } {
  let byClient = sourceViews.get(activity);
  if (!byClient) sourceViews.set(activity, (byClient = new WeakMap()));
  let kept = byClient.get(client);
  if (!kept) byClient.set(client, (kept = { views: new Map(), objects: new Map() }));
  return kept;
}

/** Per source key: the source dashboards' chart lists the views read together, for the source's chart checks (one source per key). */
const sourceChartLists = new WeakMap<object, ChartLists>();

/** The source dashboard's chart list as the activity's views read it (the source does not change during a migration); undefined if not read. */
export function sourceChartList(activity: object, dashboardId: number): Promise<DashboardChart[]> | undefined {
  return sourceChartLists.get(activity)?.get(dashboardId);
}

/** Per source key: the source dashboards' chart uuids by chart id, as the views read them together (from the chart list). */
const sourceChartUuidMaps = new WeakMap<object, Map<number, Promise<Map<number, string | null> | undefined>>>();

/**
 * The source dashboard's chart uuids by chart id as the activity's views read them (undefined if
 * they did not, or the read failed): with the source's export they stand in for each
 * chart's detail in its check (../chart-check/exported.ts).
 */
export function sourceChartUuids(activity: object, dashboardId: number): Promise<Map<number, string | null> | undefined> | undefined {
  return sourceChartUuidMaps.get(activity)?.get(dashboardId);
}

/** Per source key: the source dashboards' embedded configurations read ahead with their views (sourceEmbeddedOf). */
const sourceEmbedded = new WeakMap<object, Map<number, Promise<EmbeddedConfig | null>>>();

/** Embedded configurations read at once ahead of the plans (each is one small read per dashboard: no list gives them). */
const EMBEDDED_AT_ONCE = 4;

/** Begins each dashboard's embedded configuration read, a few at a time, kept under the key (a failed read is asked again). */
export function readSourceEmbeddedAhead(client: SupersetClient, dashboardIds: number[], activity: object): Promise<void> {
  let kept = sourceEmbedded.get(activity);
  if (!kept) sourceEmbedded.set(activity, (kept = new Map()));
  const ids = dashboardIds.filter((id) => !kept.has(id));
  const waits = ids.map(() => Promise.withResolvers<EmbeddedConfig | null>());
  for (const [at, id] of ids.entries()) {
    const read = waits[at]!.promise;
    // expected: a failed read is only forgotten here (asked again later); whoever awaits it meets the error.
    read.catch(() => {
      if (kept.get(id) === read) kept.delete(id);
    });
    kept.set(id, read);
  }
  // Settles once all are read; never rejects: each read's failure is met by whoever awaits it (kept above).
  return inParallel(
    ids.map((id, at) => () => {
      const read = client.embedded.get(id);
      waits[at]!.resolve(read);
      return read.then(
        () => undefined,
        // expected: met by whoever awaits the kept read; this only keeps the bound's slot from failing the rest.
        () => undefined,
      );
    }),
    EMBEDDED_AT_ONCE,
  ).then(() => undefined);
}

/** The source dashboard's embedded configuration, read once per activity (read ahead with the views, or now). */
export function sourceEmbeddedOf(client: SupersetClient, dashboardId: number, activity: object): Promise<EmbeddedConfig | null> {
  const hit = sourceEmbedded.get(activity)?.get(dashboardId);
  if (hit) return hit;
  const begun = readSourceEmbeddedAhead(client, [dashboardId], activity);
  const read = sourceEmbedded.get(activity)!.get(dashboardId)!;
  return begun.then(() => read);
}

/** A source view that must exist: the source does not lose a dashboard it is migrating unless someone deletes it. */
function existing(view: DashboardView | null | undefined, dashboardId: number): DashboardView {
  if (!view) throw new Error(`dashboard ${dashboardId} is not in the source any more`);
  return view;
}

/** Kept until it fails (a later ask reads again). */
function keep(mine: Map<number, Promise<DashboardView>>, dashboardId: number, read: Promise<DashboardView>): void {
  // expected: a failed read is only forgotten here; whoever awaits it meets the error.
  read.catch(() => {
    if (mine.get(dashboardId) === read) mine.delete(dashboardId);
  });
  mine.set(dashboardId, read);
}

/** Per source key: the source dashboards' list rows, read in one list read ahead of their views (sourceDashboardRoles). */
const sourceDashboardRows = new WeakMap<object, Map<number, Promise<ListedMeta | undefined>>>();

function rowsKept(activity: object): Map<number, Promise<ListedMeta | undefined>> {
  let kept = sourceDashboardRows.get(activity);
  if (!kept) sourceDashboardRows.set(activity, (kept = new Map()));
  return kept;
}

/**
 * Begins reading these source dashboards' list rows (their roles, owners, tags) in one list read,
 * kept under the key: what a migration compares before its import (roles) needs no more of the
 * views, whose joint read later takes these rows instead of listing the dashboards again.
 */
export function readSourceDashboardRows(client: SupersetClient, dashboardIds: number[], activity: object): void {
  const kept = rowsKept(activity);
  // A dashboard whose view is read or being read (the previous batch read it ahead) needs no row: its roles come from the view.
  const views = sourceKept(client, activity).views;
  const fresh = [...new Set(dashboardIds)].filter((id) => !kept.has(id) && !views.has(id));
  if (!fresh.length) return;
  const listing = client.meta.listed('dashboard', fresh);
  for (const id of fresh) {
    const row = listing.then((rows) => rows.find((r) => r.id === id));
    // expected: a failed read is only forgotten here; whoever awaits it meets the error.
    row.catch(() => {
      if (kept.get(id) === row) kept.delete(id);
    });
    kept.set(id, row);
  }
}

/** Settles once these dashboards' list rows kept under the key are read (or failed: their readers meet that); never rejects. */
export function sourceDashboardRowsRead(activity: object, dashboardIds: number[]): Promise<void> {
  const kept = rowsKept(activity);
  return Promise.allSettled(dashboardIds.flatMap((id) => kept.get(id) ?? [])).then(() => undefined);
}

/** The client whose dashboard list reads take the rows kept under the key, asking Superset only for the others. */
function withKeptRows(client: SupersetClient, activity: object): SupersetClient {
  return withDashboardRows(client, sourceDashboardRows.get(activity) ?? new Map());
}

/**
 * The source dashboard's roles: from its view when the view is read or being read, else from its
 * list row (read ahead by readSourceDashboardRows, or now), else from its view.
 */
export function sourceDashboardRoles(client: SupersetClient, dashboardId: number, activity: object): Promise<ObjectMeta['roles']> {
  const view = sourceKept(client, activity).views.get(dashboardId);
  if (view) return view.then((v) => v.dashboard.roles);
  if (!rowsKept(activity).has(dashboardId)) readSourceDashboardRows(client, [dashboardId], activity);
  const fromView = () => sourceViewOf(client, dashboardId, activity).then((v) => v.dashboard.roles);
  return rowsKept(activity)
    .get(dashboardId)!
    .then(
      (row) => (row ? plainMeta(row).roles : fromView()),
      // expected: a failed row read falls back to the dashboard's view, which meets its own failure.
      () => fromView(),
    );
}

/**
 * These source dashboards' views read together (./views.ts readViews: one list read for all their
 * charts, another for their datasets; with the batch's export, one for the dashboards too) and
 * kept for sourceViewOf. If the joint read fails, each
 * dashboard is read on its own, and meets its own failure.
 */
export function sourceViewsTogether(
  client: SupersetClient,
  dashboardIds: number[],
  activity: object,
  /** The batch's source export of a dashboard, when it holds one (./views-listed.ts). */
  exportOf?: (dashboardId: number) => Bundle | undefined,
): Promise<void> {
  const { views: mine, objects } = sourceKept(client, activity);
  const ids = dashboardIds.filter((id) => !mine.has(id));
  if (!ids.length) return Promise.resolve();
  const lists = chartListsOf(activity);
  // (The embedded configurations are begun by the callers: a migration's only once its import is sent, ../batch.ts.)
  const together = readViews(withKeptRows(client, activity), ids, objects, lists, exportOf);
  for (const id of ids) {
    const read = together.then(
      (views) => existing(views.get(id), id),
      // expected: a failed joint read leaves each dashboard to read its own, which meets its own failure.
      () => readView(client, id, objects, lists).then((v) => existing(v, id)),
    );
    keepSource(activity, mine, id, read);
  }
  return together.then(
    () => undefined,
    // expected: the joint read's failure is met by each dashboard's own read above.
    () => undefined,
  );
}

function chartListsOf(activity: object): ChartLists {
  let lists = sourceChartLists.get(activity);
  if (!lists) sourceChartLists.set(activity, (lists = new Map()));
  return lists;
}

/** A source view kept for the activity, with its charts' uuids for the source's chart checks (sourceChartUuids). */
function keepSource(activity: object, mine: Map<number, Promise<DashboardView>>, dashboardId: number, read: Promise<DashboardView>): void {
  let uuids = sourceChartUuidMaps.get(activity);
  if (!uuids) sourceChartUuidMaps.set(activity, (uuids = new Map()));
  uuids.set(
    dashboardId,
    read.then(
      (v) => new Map(v.charts.map((c) => [c.id, c.uuid])),
      // expected: no uuids when the view failed; the view's reader meets the failure.
      () => undefined,
    ),
  );
  keep(mine, dashboardId, read);
}

/** The source dashboard's view, read once per activity (the source does not change during a migration, as its lists do not). */
export function sourceViewOf(client: SupersetClient, dashboardId: number, activity: object): Promise<DashboardView> {
  const { views: mine, objects } = sourceKept(client, activity);
  const hit = mine.get(dashboardId);
  if (hit) return hit;
  const read = readView(client, dashboardId, objects, chartListsOf(activity)).then((v) => existing(v, dashboardId));
  keepSource(activity, mine, dashboardId, read);
  return read;
}
