import type { Bundle } from '../../lib/bundles/bundle.ts';
import { SourceCheckCache } from './chart-check/source-cache.ts';
import { TargetChecksAhead } from './chart-check/target-ahead.ts';
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
   * Source dashboards a batch exported for a later batch of the same task (the next batch's,
   * read during this one's import: ./read-ahead.ts exportUpcoming), so they are not exported
   * again: a task takes each source dashboard as it first read it.
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
   * Target dashboards' chart checks made in the batch that imported them, right after its imports
   * (./target-checks-ahead.ts), for that task's verification to take once; only passing checks
   * stand in (./chart-check/target-ahead.ts).
   *
   * Key: task id and target dashboard id. Bound: 256 dashboards, the oldest dropped first.
   *
   * On another worker: a miss reads and checks the target dashboard, as the verification always did.
   */
  targetChecks: TargetChecksAhead;
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
    targetChecks: new TargetChecksAhead(),
    sourceSnapshots: new SourceSnapshots(),
  };
}

/** Source bundles by task and source dashboard id (see MigrationCaches.exportedSources). */
export class ExportedSources {
  private readonly tasks = new Map<string, Map<number, Bundle>>();
  private readonly pending = new Map<string, Promise<void>>();
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

  /**
   * An export of some of the task's dashboards begun ahead (a batch reading the next one's during
   * its import, ./read-ahead.ts exportUpcoming), kept here once read: a batch starting meanwhile
   * waits for it (settled) instead of exporting them again.
   */
  readingAhead(taskId: string, read: Promise<void>): void {
    const forget = () => {
      if (this.pending.get(taskId) === mine) this.pending.delete(taskId);
    };
    // Settles either way, never rejects: settled() only waits for the export begun ahead; its failure is
    // logged by its starter (read-ahead.ts exportUpcoming) and the batch exports what is missing itself.
    const mine: Promise<void> = read.then(forget, forget);
    this.pending.set(taskId, mine);
  }

  /** Settles once the task's export begun ahead (if any) is kept or failed; never rejects. */
  settled(taskId: string): Promise<void> {
    return this.pending.get(taskId) ?? Promise.resolve();
  }

  forget(taskId: string, id: number): void {
    const m = this.tasks.get(taskId);
    m?.delete(id);
    if (m && !m.size) this.tasks.delete(taskId);
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
}
