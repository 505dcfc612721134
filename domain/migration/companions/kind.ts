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
import type { UpstreamRole } from '../../../lib/superset/types.ts';
import type { CompanionDocuments } from './kind-documents.ts';
import type { Directory } from './people.ts';
import type { DashboardView } from './views.ts';

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

/** A resource of the Superset client (`tags`, `reports`): what a kind reads and writes through. */
export type ClientResource = {
  [R in keyof SupersetClient]: SupersetClient[R] extends (...args: never[]) => unknown
    ? never
    : SupersetClient[R] extends object
      ? R
      : never;
}[keyof SupersetClient];

/** One read of a resource, `resource.method` (`tags.list`). */
export type ResourceRead = { [R in ClientResource]: `${R}.${Extract<keyof SupersetClient[R], string>}` }[ClientResource];

/**
 * A companion kind, one module each (./kinds.ts holds the registry; docs/layout.md, "Adding a
 * companion kind"). Its name, default mode and label are the contract's (contracts/companions.ts),
 * which the API, console and CLI read without the domain.
 */
export interface CompanionKind<K extends CompanionKindName = CompanionKindName> {
  readonly kind: K;
  /**
   * The client's resources it reads and writes through besides the dashboard's views and people
   * (`meta`, `dashboards`, `users`, `roles`, which every kind shares): what a capture records and a
   * replay answers (./recording.ts).
   */
  readonly reads?: readonly ClientResource[];
  /** Its list reads every dashboard of an activity makes alike: read once per scope (./recording.ts memoisedLists). */
  readonly lists?: readonly ResourceRead[];
  /**
   * Its git document (a versioned format: a repository's and a backup's `companions/<kind>/`):
   * written from what its reads recorded, read back into their answers (./kind-documents.ts).
   * None: what the kind compares travels in the bundle's own files (certification).
   */
  readonly documents?: CompanionDocuments<any>;
  /**
   * Superset's import overwrites what this kind writes (a chart's annotation layer entries): after
   * an import it is compared and written again even when it was unchanged before the import.
   */
  readonly undoneByImport?: boolean;
  /** Under `strict`, what strictRefuses (contracts/companions.ts) lets through is written after the import too (dashboard roles). */
  readonly writesUnderStrict?: boolean;
  run(ctx: CompanionContext, write: boolean): Promise<KindResult>;
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
