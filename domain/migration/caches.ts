import type { Bundle } from '../../lib/bundles/bundle.ts';
import { SourceCheckCache } from './chart-check/source-cache.ts';
import { PrefetchPlans } from './prefetch-runs.ts';
import { TargetIndexCache } from './target-index-cache.ts';

/**
 * What the migration activities keep in a worker's memory between the batches of a task, built
 * once per worker and handed to createMigrationActivities (a test hands its own).
 *
 * They are caches and nothing more. The batches of a task may run on different workers (a batch
 * retried after its worker died runs on another one; any batch may), so no batch relies on what
 * an earlier batch left here: a miss reads the environment again, exactly as the first batch of a
 * task does, and what is decided (outcomes, intents, the learned rejections, the records of what
 * was imported) is in PostgreSQL or in the workflow's input, never only here.
 */
export interface MigrationCaches {
  /**
   * Each environment's objects as the task last read them (./target-index.ts): dashboards,
   * charts, datasets and databases by uuid, slug and table, and row-level-security rules.
   *
   * Key: `<task id>:<target env id>` for a target, `<task id>:source:<source env id>` for a
   * source (which lists only its datasets, and only once it has rules). Bound: 16 indexes, each
   * dropped 30 minutes after its last use; refreshed (objects created since) when a batch finds it
   * older than 5 seconds, a source's after a minute.
   *
   * On another worker: a miss builds the index from the environment's lists, current as of that
   * batch. Back on this worker, an index built before another worker imported for the same task
   * learns of those imports at its next refresh, as it learns of what anyone else created in the
   * target meanwhile (the index is never more than such a snapshot; planning asks the target
   * itself where that is not enough: a slug's owner, the target's export of an existing dashboard).
   */
  targetIndexes: TargetIndexCache;
  /**
   * Source dashboards a batch exported, its own and a later batch's of the same task (the next
   * batch's, read during this one's import: ./read-ahead.ts exportUpcoming, the prefetch plan's
   * nextBatchExport), so they are not exported again: a task takes each source dashboard as it
   * first read it.
   *
   * Key: task id, then source dashboard id. Bound: the 4 tasks last added; a dashboard is dropped
   * once it has its outcome.
   *
   * On another worker: a miss puts the dashboard in that batch's one export call, so it is
   * planned from the source as it is then, as a dashboard is in the first batch that reads it.
   */
  exportedSources: ExportedSources;
  /**
   * Source chart checks that passed, by the hash of what each check is made from
   * (./chart-check/source-cache.ts): a rerun's verification does not query a source chart
   * unchanged since its check last passed. A failing check is never kept.
   *
   * Key: source environment, chart and check content. Bound: 20,000 entries, least recently used
   * dropped first; across tasks.
   *
   * On another worker: a miss queries the source chart, as a first verification does.
   */
  sourceChecks: SourceCheckCache;
  /**
   * Each task's reads started ahead (./prefetch-plan.ts, ./prefetch-runs.ts), held until settled:
   * a batch's own before it returns; the next batch's export, views and embedded configurations
   * until that batch takes them; the source's and the target's checks begun by the batch (only
   * passing checks stand in: ./chart-check/target-ahead.ts) until its verification takes them.
   *
   * Key: task id. Bound: everything of a task is settled and dropped when it ends
   * (finishMigration), or once it has been idle here for PREFETCH_IDLE_MS.
   *
   * On another worker: a miss reads again (the next batch exports its dashboards itself, the
   * verification reads and checks the charts), as the first batch of a task does.
   */
  prefetch: PrefetchPlans;
  /**
   * What the companions and the source's chart checks read of the source (dashboard views,
   * embedded configurations, chart lists, users and roles, the environment's lists), and the
   * target's users and roles (Switchyard never creates one), are kept under the task's snapshot,
   * an object this hands out (SourceSnapshots): the batches of a task on this worker share it, so
   * a batch reads the next batch's views during its import and no batch reads the users, roles
   * or the source's lists again.
   *
   * Key: task id. Bound: the 4 tasks last asked for; a snapshot is replaced by a new one (every read
   * asked again) once it is SOURCE_SNAPSHOT_MAX_AGE_MS old, so a long task sees a source edit
   * within that time, as it would see it in a later batch's export.
   *
   * On another worker: a miss reads the source again, as the first batch of a task does.
   */
  sourceSnapshots: SourceSnapshots;
}

export function createMigrationCaches(): MigrationCaches {
  return {
    targetIndexes: new TargetIndexCache(),
    exportedSources: new ExportedSources(),
    sourceChecks: new SourceCheckCache(),
    prefetch: new PrefetchPlans(),
    sourceSnapshots: new SourceSnapshots(),
  };
}

/** Source bundles by task and source dashboard id (see MigrationCaches.exportedSources). */
export class ExportedSources {
  private readonly tasks = new Map<string, Map<number, Bundle>>();
  private readonly maxTasks: number;

  constructor(opts: { maxTasks?: number } = {}) {
    this.maxTasks = opts.maxTasks ?? 4;
  }

  get(taskId: string, id: number): Bundle | undefined {
    return this.tasks.get(taskId)?.get(id);
  }

  put(taskId: string, id: number, bundle: Bundle): void {
    let m = this.tasks.get(taskId);
    if (!m) {
      m = new Map();
      this.tasks.set(taskId, m);
      while (this.tasks.size > this.maxTasks) this.tasks.delete(this.tasks.keys().next().value!);
    }
    m.set(id, bundle);
  }

  forget(taskId: string, id: number): void {
    const m = this.tasks.get(taskId);
    m?.delete(id);
    if (m && !m.size) this.tasks.delete(taskId);
  }

  /** The task ended: every dashboard it kept (one exported ahead for a batch that never came). */
  forgetTask(taskId: string): void {
    this.tasks.delete(taskId);
  }
}

/** How long the batches of a task share what they read of the source (MigrationCaches.sourceSnapshots). */
export const SOURCE_SNAPSHOT_MAX_AGE_MS = 60_000;

/**
 * The object each task's source reads are kept under (weakly, by the companions' and checks'
 * caches): the same one for every batch of the task on this worker until it is
 * SOURCE_SNAPSHOT_MAX_AGE_MS old, then a new one. The clock is injected for tests.
 */
export class SourceSnapshots {
  private readonly tasks = new Map<string, { key: object; since: number }>();
  private readonly maxTasks: number;
  private readonly now: () => number;

  constructor(opts: { maxTasks?: number; now?: () => number } = {}) {
    this.maxTasks = opts.maxTasks ?? 4;
    this.now = opts.now ?? Date.now;
  }

  of(taskId: string): object {
    const at = this.now();
    const hit = this.tasks.get(taskId);
    const kept = hit && at - hit.since < SOURCE_SNAPSHOT_MAX_AGE_MS ? hit : { key: { taskId }, since: at };
    this.tasks.delete(taskId); // set again, last: the bound drops the task asked for least recently
    this.tasks.set(taskId, kept);
    while (this.tasks.size > this.maxTasks) this.tasks.delete(this.tasks.keys().next().value!);
    return kept.key;
  }

  /** The task ended: its snapshot goes, and with it what the companions and checks kept under it. */
  forget(taskId: string): void {
    this.tasks.delete(taskId);
  }
}

/**
 * A task ended (its last engine activity, finishMigration, cancelled or not): its reads still held
 * are settled and dropped (MigrationCaches.prefetch), and what this worker kept of its source goes.
 */
export async function forgetTask(caches: MigrationCaches, taskId: string): Promise<void> {
  await caches.prefetch.endTask(taskId);
  caches.exportedSources.forgetTask(taskId);
  caches.sourceSnapshots.forget(taskId);
}
