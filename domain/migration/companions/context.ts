/**
 * The context a companion kind runs in (./kind.ts): both clients, the dashboard's views and both
 * sides' people, each read once on first use. Apart from ./kind.ts, which every kind module
 * imports, because it reads through ./recording.ts, whose lists come from the registry.
 */
import type { EnvRule } from '../../../contracts/env-rules.ts';
import type { SupersetClient } from '../../../lib/superset/client.ts';
import type { CompanionContext } from './kind.ts';
import { directoryOf, rolesOf } from './people.ts';
import { memoisedLists } from './recording.ts';
import { readView, type DashboardView } from './views.ts';
import { sourceDashboardRoles, sourceEmbeddedOf, sourceViewOf, targetViewForComparison } from './view-caches.ts';

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
  embeddedAnyDomain?: boolean;
  envRules?: readonly EnvRule[];
  /** Directories are shared across the dashboards of one activity: its input object. */
  activity: object;
  /**
   * What the source's reads and both environments' people (users, roles) are kept under when not
   * the activity: a migration's task snapshot, shared by its batches (../caches.ts sourceSnapshots).
   */
  taskSnapshot?: object;
  /**
   * The target's lists read once for the activity's comparisons (before a write: see
   * forgetLists in ./recording.ts); without it each is read when asked (a phase that writes).
   */
  sharedTargetLists?: boolean;
}): CompanionContext {
  const { sharedTargetLists: _shared, targetDashboardId, targetViewRead, taskSnapshot, ...rest } = opts;
  const snapshot = taskSnapshot ?? opts.activity;
  let targetView: Promise<DashboardView | null> | undefined = targetViewRead;
  return {
    ...rest,
    envRules: opts.envRules ?? [],
    // The source is taken as the snapshot read it: its lists are read once per snapshot (a task's, or the activity).
    source: memoisedLists(opts.source, snapshot),
    target: opts.sharedTargetLists ? memoisedLists(opts.target, opts.activity) : opts.target,
    sourceView: () => sourceViewOf(opts.source, opts.sourceDashboardId, snapshot),
    sourceDashboardRoles: () => sourceDashboardRoles(opts.source, opts.sourceDashboardId, snapshot),
    sourceEmbedded: () => sourceEmbeddedOf(opts.source, opts.sourceDashboardId, snapshot),
    // Not in the target yet (the plan's index says so): nothing to read; a known id is read as it is.
    targetView: () =>
      (targetView ??=
        targetDashboardId === null
          ? Promise.resolve(null)
          : opts.sharedTargetLists
            ? targetViewForComparison(opts.target, targetDashboardId ?? opts.dashboardUuid, opts.activity)
            : readView(opts.target, targetDashboardId ?? opts.dashboardUuid)),
    // Switchyard never creates an account or a role: both sides' people are read once per snapshot.
    sourcePeople: () => directoryOf(opts.source, snapshot),
    targetPeople: () => directoryOf(opts.target, snapshot),
    targetRoles: () => rolesOf(opts.target, snapshot),
  };
}
