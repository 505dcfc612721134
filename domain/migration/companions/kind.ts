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
import type { EmbeddedConfig } from '../../../lib/superset/resources/embedded.ts';
import { directoryOf, rolesOf, type Directory } from './people.ts';
import type { UpstreamRole } from '../../../lib/superset/types.ts';
import { memoisedLists } from './recording.ts';
import { readView, type DashboardView } from './views.ts';
import { sourceDashboardRoles, sourceEmbeddedOf, sourceViewOf, targetViewForComparison } from './view-caches.ts';

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
  /** The request lets a source embedded configuration allowing any domain replace a target's list (companions.embedded_any_domain). */
  embeddedAnyDomain?: boolean;
  /** The pair's per-environment rules (embedded configs' allowed domains pass through its text rules). */
  envRules: readonly EnvRule[];
  sourceView(): Promise<DashboardView>;
  /** The source dashboard's roles alone (its list row will do: the roles kind is compared before the import). */
  sourceDashboardRoles(): Promise<DashboardView['dashboard']['roles']>;
  /** The source dashboard's embedded configuration (null: none), read once per activity. */
  sourceEmbedded(): Promise<EmbeddedConfig | null>;
  /** The dashboard in the target as it is in this phase; null before its first import. */
  targetView(): Promise<DashboardView | null>;
  sourcePeople(): Promise<Directory>;
  targetPeople(): Promise<Directory>;
  /** The target's roles alone (no account list): what the roles kind compares by name. */
  targetRoles(): Promise<UpstreamRole[]>;
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
  /** Under `strict`, what strictRefuses (contracts/companions.ts) lets through is written after the import too (dashboard roles). */
  readonly writesUnderStrict?: boolean;
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
