/**
 * After a joint import, the companions' writes go one dashboard after another (two dashboards may
 * share a chart or a dataset, and a write is decided from what the target holds). What each write
 * compares against, the dashboard's target view (./views.ts), is read ahead for all of them side
 * by side instead, and used only if nothing was written to the target since its read started: a
 * write since then (any companion written, or refused) makes the dashboard read its view again.
 */
import type { SupersetClient } from '../../../lib/superset/client.ts';
import { inParallel, readView, type DashboardView } from './views.ts';

/** Most target views read at once. */
const READ_AT_ONCE = 3;

interface Ahead {
  /** The activity's writes to the target so far. */
  writes: number;
  views: Map<number, { started?: number; read: () => Promise<DashboardView | null> }>;
}

/** Per activity (its input object). */
const aheadByActivity = new WeakMap<object, Ahead>();

function aheadOf(activity: object): Ahead {
  let a = aheadByActivity.get(activity);
  if (!a) aheadByActivity.set(activity, (a = { writes: 0, views: new Map() }));
  return a;
}

/** These target dashboards' views read ahead (a few at a time); a dashboard asking first starts its own read. */
export function readTargetViewsAhead(activity: object, target: Promise<SupersetClient>, targetDashboardIds: number[]): void {
  const ahead = aheadOf(activity);
  for (const id of targetDashboardIds) {
    let read: Promise<DashboardView | null> | undefined;
    const entry = {
      started: undefined as number | undefined,
      read: () => {
        if (!read) {
          entry.started = ahead.writes;
          read = target.then((client) => readView(client, id));
        }
        return read;
      },
    };
    ahead.views.set(id, entry);
  }
  void inParallel(
    targetDashboardIds.map((id) => () => (ahead.views.get(id)?.read() ?? Promise.resolve(null)).catch(() => null)),
    READ_AT_ONCE,
  );
}

/** The dashboard's view read ahead, when nothing was written to the target since its read started; taken once. */
export function takeTargetView(activity: object, targetDashboardId: number): Promise<DashboardView | null> | undefined {
  const ahead = aheadByActivity.get(activity);
  const entry = ahead?.views.get(targetDashboardId);
  if (!ahead || !entry) return undefined;
  ahead.views.delete(targetDashboardId);
  const view = entry.read();
  if (entry.started !== ahead.writes) {
    view.catch(() => undefined); // read before a write: not used
    return undefined;
  }
  return view;
}

/** The activity wrote to the target (or tried to): views read before now are read again. */
export function noteTargetWrite(activity: object): void {
  const ahead = aheadByActivity.get(activity);
  if (ahead) ahead.writes++;
}
