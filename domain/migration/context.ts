/**
 * What the migration's steps share, as explicit objects instead of a closure's variables:
 * `MigrationServices` (built once per worker) and `PlanScope` (a task's view of both environments
 * while it plans and imports); a batch's own is `BatchContext` (./batch-context.ts).
 */
import { ApplicationFailure } from '@temporalio/activity';
import { FAILURE_TYPES, type ItemFailure } from '../../contracts/failures.ts';
import { settingsToApply } from '../../db/environments/pair-settings.ts';
import type { EnvRule } from '../../contracts/env-rules.ts';
import type { MigrationInput } from '../../contracts/migration.ts';
import type { MigrationItemsStore } from '../../db/dashboard-migration/items.ts';
import type { MigrationStateStore } from '../../db/dashboard-migration/store.ts';
import type { TaskItemStore } from '../../db/tasks/items.ts';
import type { MigrationDeps } from './deps.ts';
import type { MigrationCaches } from './caches.ts';
import { sharedChartQueryGates, type ChartQueryGates } from './chart-check/limit.ts';
import { upstreamFor } from './superset-upstream.ts';
import type { TargetIndex } from './target-index.ts';
import type { ActivityPort, Log } from './port.ts';
import type { MigrationUpstream } from './upstream.ts';
import type { Verifier } from './verifier.ts';

/** A migration request as its activities get it (without the dashboard list). */
export type Request = Omit<MigrationInput, 'dashboardIds'>;

export type { Log } from './port.ts';

/** A dashboard of a batch, with its place in the request. */
export interface BatchDashboard {
  id: number;
  position: number;
}

/** What the migration activities share in a worker: the stores they write, the worker's caches, the verifier. */
export interface MigrationServices {
  deps: MigrationDeps;
  caches: MigrationCaches;
  /** What each migration left in a target, for the next one's unchanged check. */
  states: MigrationStateStore;
  /** Each dashboard's outcome, as the task's item. */
  outcomes: TaskItemStore;
  /** The one store of import intents (written before an import, confirmed after it), for every import path. */
  intents: MigrationItemsStore;
  verifier: Verifier;
  /** The worker's bound on chart queries per environment (VERIFY_CONCURRENCY), shared by every verification it runs. */
  chartQueries: ChartQueryGates;
}

export function createMigrationServices(deps: MigrationDeps, caches: MigrationCaches, verifier: Verifier): MigrationServices {
  return {
    deps,
    caches,
    states: deps.stores.migrationStates,
    outcomes: deps.stores.taskItems,
    intents: deps.stores.migrationItems,
    verifier,
    chartQueries: sharedChartQueryGates(deps.config.VERIFY_CONCURRENCY),
  };
}

/** Both environments as a task sees them: Superset clients and the indexes its dashboards share. */
export interface Upstreams {
  source: MigrationUpstream;
  target: MigrationUpstream;
  index: TargetIndex;
  sourceIndex: TargetIndex;
}

/** A task planning and importing dashboards: the request, both environments opened, its database mappings. */
export interface PlanScope {
  svc: MigrationServices;
  input: Request;
  taskId: string;
  log: Log;
  /** The running activity's heartbeat (./port.ts): a long import beats between its rounds. */
  heartbeat: ActivityPort['heartbeat'];
  up: Upstreams;
  mappings: Map<number, number>;
  /** The pair's per-environment rules, read once per task's batch (see envRulesFor). */
  envRules?: EnvRule[];
  /** What the source's reads and both sides' people are kept under: the task's snapshot (MigrationCaches.sourceSnapshots); without it, the activity's input. */
  taskSnapshot?: object;
}

/**
 * Refuses a run whose frozen rules or mappings (`input.frozen`) no longer match the stored ones,
 * before it reads or writes anything: every dashboard of the batch fails alike (ItemFailed, not
 * retried) with the next action to request it again. See db/environments/pair-settings.ts.
 */
export async function refuseStale(deps: MigrationDeps, input: Request): Promise<void> {
  const r = await settingsToApply(deps.stores, input, input.frozen, input.approval?.required === true);
  if (!('stale' in r)) return;
  const failure: ItemFailure = {
    error: `the migration is stale: ${r.stale}`,
    step: 'rules',
    next_actions: [
      {
        action: 'request_again',
        description: `The rules or saved database mappings of ${input.sourceEnvId} → ${input.targetEnvId} changed after this migration was requested (and approved): request the migration again, so that what is approved is what is applied`,
      },
    ],
  };
  throw ApplicationFailure.nonRetryable(failure.error, FAILURE_TYPES.itemFailed, failure);
}

/** Persisted mappings for the pair (as frozen with the task), overridden by the ones sent with the request. */
export async function mappingsFor(deps: MigrationDeps, input: Request): Promise<Map<number, number>> {
  const rows = input.frozen?.db_mappings ?? (await deps.stores.databaseMappings.list(input.sourceEnvId, input.targetEnvId));
  const m = new Map<number, number>(rows.map((r) => [Number(r.source_database_id), Number(r.target_database_id)]));
  for (const o of input.dbMappings) m.set(o.source_database_id, o.target_database_id);
  return m;
}

/** The pair's per-environment rules (as frozen with the task), in the order they apply. */
export async function envRulesFor(deps: MigrationDeps, input: Pick<Request, 'sourceEnvId' | 'targetEnvId' | 'frozen'>): Promise<EnvRule[]> {
  return input.frozen?.rules ?? deps.stores.environmentRules.rulesFor(input.sourceEnvId, input.targetEnvId);
}

/**
 * The task's view of both environments: Superset clients and the indexes shared by its
 * dashboards (MigrationCaches.targetIndexes). `targetLists: false` (a rerun's first look) reads
 * the target's databases and rules only; a later call without it lists the rest into the same index.
 */
export async function openUpstreams(
  svc: MigrationServices,
  input: Request,
  taskId: string,
  opts: { targetLists?: boolean } = {},
): Promise<Upstreams> {
  const { deps, caches } = svc;
  const lists = opts.targetLists !== false;
  // Two instances: read side by side.
  const [[source, sourceIndex], [target, index]] = await Promise.all([
    upstreamFor(deps, input.sourceEnvId).then(
      async (u) => [u, await caches.targetIndexes.get(`${taskId}:source:${input.sourceEnvId}`, u, { kinds: [], rls: 'always' })] as const,
    ),
    upstreamFor(deps, input.targetEnvId).then(async (u) => {
      // A migration that imports needs the target's CSRF token: fetched beside its lists, not once the import is ready.
      if (lists && !input.dryRun) u.prepareWrites?.();
      const index = await caches.targetIndexes.get(`${taskId}:${input.targetEnvId}`, u, {
        ...(lists ? { rls: 'withDatasets' } : { kinds: [], rls: 'always' }),
      });
      if (lists) await index.includeAll();
      return [u, index] as const;
    }),
  ]);
  return { source, target, index, sourceIndex };
}
