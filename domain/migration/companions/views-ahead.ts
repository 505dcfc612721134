/**
 * After a joint import, the companions' writes go one dashboard after another (two dashboards may
 * share a chart or a dataset, and a write is decided from what the target holds). What each write
 * compares against, the dashboard's target view (./views.ts), is read ahead for all of them
 * together instead (from the target's export of them, one list read for the dashboards, one for all
 * their charts, another for their datasets), and used only
 * if nothing was written to the target since that read started: a write since then (any companion
 * written, or refused) makes the dashboard read its view again.
 */
import type { Bundle } from '../../../lib/bundles/bundle.ts';
import type { SupersetClient } from '../../../lib/superset/client.ts';
import type { DashboardChart } from '../../../lib/superset/types.ts';
import type { ListedMeta } from '../../../lib/superset/resources/object-meta.ts';
import { readView, readViews, type ChartLists, type DashboardView, type ObjectReads } from './views.ts';
import { withDashboardRows } from './views-listed.ts';

interface Ahead {
  /** The activity's writes to the target so far. */
  writes: number;
  /** Each dashboard's view read ahead, with the write count when its read started. */
  views: Map<number, { started: number; read: Promise<DashboardView | null> }>;
  /** Each dashboard's chart list as those reads read it, with the write count when it started (kept for the target's chart checks). */
  lists: Map<number, { started: number; read: Promise<DashboardChart[]> }>;
  /** Each dashboard's export the views were read from, with the write count when it started (kept for the target's chart checks). */
  exports: Map<number, { started: number; read: Promise<Bundle | undefined> }>;
  /** The charts and datasets the last joint read listed, by `<kind> <id>` (their uuids, for the target's chart checks). */
  objects: ObjectReads;
}

/** Per activity (its input object). */
const aheadByActivity = new WeakMap<object, Ahead>();

function aheadOf(activity: object): Ahead {
  let a = aheadByActivity.get(activity);
  if (!a) aheadByActivity.set(activity, (a = { writes: 0, views: new Map(), lists: new Map(), exports: new Map(), objects: new Map() }));
  return a;
}

/**
 * These target dashboards' views read ahead together (./views.ts readViews: their charts and
 * datasets in one list read each; with `exported`, the target's export of the batch's imported
 * dashboards, their own meta and chart lists from it and one dashboard list read, none with
 * `dashboardRows`, the rows the caller already read of them).
 */
export function readTargetViewsAhead(
  activity: object,
  target: Promise<SupersetClient>,
  targetDashboardIds: number[],
  exported?: { ids: number[]; bundles: Promise<Map<number, Bundle>> },
  dashboardRows: ReadonlyMap<number, ListedMeta> = new Map(),
): void {
  const ahead = aheadOf(activity);
  const lists: ChartLists = new Map();
  const objects: ObjectReads = new Map();
  ahead.objects = objects;
  // expected: without the target's export the views read their dashboards themselves (and meet their own failures).
  const bundles = exported?.bundles.catch(() => null);
  for (const id of exported?.ids ?? []) ahead.exports.set(id, { started: ahead.writes, read: bundles!.then((b) => b?.get(id)) });
  const rows = new Map([...dashboardRows].map(([id, row]) => [id, Promise.resolve(row)]));
  const together = target.then(async (client) => {
    const b = await bundles;
    return readViews(withDashboardRows(client, rows), targetDashboardIds, objects, lists, b ? (id) => b.get(id) : undefined);
  });
  // expected: a failed joint read is met by each dashboard's own read below.
  together.catch(() => undefined);
  for (const id of targetDashboardIds) {
    const read = together.then(() => lists.get(id) ?? Promise.reject(new Error('not read')));
    // expected: a chart list not read ahead is read by its taker, which meets its own failure.
    read.catch(() => undefined);
    ahead.lists.set(id, { started: ahead.writes, read });
  }
  for (const id of targetDashboardIds) {
    // A joint read that fails leaves each dashboard to read its own (and meet its own failure).
    const read = together.then(
      (views) => views.get(id) ?? null,
      // expected: the joint read's failure leaves this dashboard to its own read.
      () => target.then((client) => readView(client, id)),
    );
    ahead.views.set(id, { started: ahead.writes, read });
  }
}

/**
 * One read ahead of the dashboard (`reads`: its view, chart list or export), taken once, and only
 * when nothing was written to the target since it started (the one rule for all three).
 */
function takeCurrent<T>(
  activity: object,
  reads: (ahead: Ahead) => Map<number, { started: number; read: Promise<T> }>,
  targetDashboardId: number,
): Promise<T> | undefined {
  const ahead = aheadByActivity.get(activity);
  const entry = ahead && reads(ahead).get(targetDashboardId);
  if (!ahead || !entry) return undefined;
  reads(ahead).delete(targetDashboardId);
  // expected: a stale read is not used: its reader reads its own.
  entry.read.catch(() => undefined);
  return entry.started === ahead.writes ? entry.read : undefined;
}

/** The dashboard's view read ahead, when nothing was written to the target since its read started; taken once. */
export function takeTargetView(activity: object, targetDashboardId: number): Promise<DashboardView | null> | undefined {
  return takeCurrent(activity, (a) => a.views, targetDashboardId);
}

/**
 * The dashboard's chart list (`/dashboard/{id}/charts`) as its view read ahead read it, when
 * nothing was written to the target since that read started (a companion written since may have
 * changed a chart's params); taken once. For the target's chart checks (../target-checks-ahead.ts).
 */
export function takeTargetChartList(activity: object, targetDashboardId: number): Promise<DashboardChart[]> | undefined {
  return takeCurrent(activity, (a) => a.lists, targetDashboardId);
}

/**
 * The target's export of the dashboard the views were read from, when nothing was written to the
 * target since it started (it is then the target as the writes left it); taken once. For the
 * target's chart checks, which record it as the target's state (../target-checks-ahead.ts).
 */
export function takeTargetExport(activity: object, targetDashboardId: number): Promise<Bundle | undefined> | undefined {
  return takeCurrent(activity, (a) => a.exports, targetDashboardId);
}

/**
 * The uuids of the target's charts as the last views read ahead listed them, by chart id: taken now
 * (before the next batch reads ahead), read when awaited. A chart's uuid never changes, so a write
 * since does not matter; a chart those reads did not list, or listed without its uuid, is left out.
 * For the target's chart checks (../target-checks-ahead.ts), which list only the charts left out.
 */
export function targetChartUuidsRead(activity: object): (chartIds: number[]) => Promise<Map<number, string>> {
  const objects = aheadByActivity.get(activity)?.objects;
  return async (chartIds) => {
    const out = new Map<number, string>();
    for (const id of chartIds) {
      const uuid = await objects
        ?.get(`chart ${id}`)
        ?.then((m) => m.uuid)
        // expected: a chart whose read failed is left out: the caller lists the ones left out itself.
        .catch(() => null);
      if (uuid) out.set(id, uuid);
    }
    return out;
  };
}

/** The activity wrote to the target (or tried to): views read before now are read again. */
export function noteTargetWrite(activity: object): void {
  const ahead = aheadByActivity.get(activity);
  if (ahead) ahead.writes++;
}
