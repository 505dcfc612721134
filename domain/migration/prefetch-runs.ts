/**
 * The lifetimes of the prefetch plan's reads (./prefetch-plan.ts), per worker and task. Each engine
 * activity of a task opens a run (PrefetchPlans.open) and ends it before it returns (PrefetchRun.end):
 * a read is started only through a run, under a name the plan declares, and held by the task's plan
 * until it is settled:
 *
 * - a read the plan says the batch takes itself is owned by the run that started it, and awaited
 *   by that run's end;
 * - a read handed to a later activity is owned by nobody until its consumer takes it (the next
 *   batch adopts the reads begun for it, the verification takes each dashboard's part), and then
 *   awaited by that consumer's end;
 * - what is still held when the task ends (endTask: the task's last engine activity, cancelled or
 *   not), or once the task has been idle on this worker for PREFETCH_IDLE_MS (its consumer ran on
 *   another worker, its workflow failed), is aborted where the read honours its signal, awaited and
 *   dropped.
 *
 * A failed read is logged once here with its task, activity, name and item (the label), never
 * swallowed; whoever awaits it meets the failure as well. The task's plan can be watched
 * (watchPrefetch): a test checks on a real migration that no read outlives what it was for.
 */
import type { Bundle } from '../../lib/bundles/bundle.ts';
import { failureText } from '../../lib/detached.ts';
import type { TargetChecked } from './chart-check/target-ahead.ts';
import type { ChartForCheck } from './chart-check/types.ts';
import type { Log } from './port.ts';
import {
  PREFETCH_IDLE_MS,
  PREFETCH_PLAN,
  type EngineActivity,
  type HandedPart,
  type PrefetchName,
  type PrefetchRead,
} from './prefetch-plan.ts';

/** What each part a read hands to the verification holds, per dashboard. */
export interface HandedParts {
  sourceCharts: ChartForCheck[] | undefined;
  targetChecks: TargetChecked | undefined;
  targetExport: Bundle | undefined;
}

/** A read's parts, per dashboard id, as the read will settle them. */
export type Parts = { [P in HandedPart]?: ReadonlyMap<number, Promise<HandedParts[P]>> };

/** A read the task's plan holds, as a watcher sees it. */
export interface HeldRead {
  name: PrefetchName;
  label: string;
  startedBy: EngineActivity;
  /** The run that awaits it before it returns (null: it waits for its consumer), and whether that run has ended. */
  owner: { activity: EngineActivity; ended: boolean } | null;
}

export type PrefetchEvent =
  | { kind: 'started'; taskId: string; activity: EngineActivity; name: PrefetchName }
  | { kind: 'activity ended'; taskId: string; activity: EngineActivity; held: HeldRead[] }
  /** `left`: what the task still held as it ended (nobody took it), settled then; `held`: what is left after (nothing). */
  | { kind: 'task ended'; taskId: string; left: HeldRead[]; held: HeldRead[] };

/**
 * Listeners of every worker's plans in this process. The worker builds its caches itself
 * (worker/create-worker.ts), so a test running the real worker watches its plans through this.
 */
const watchers = new Set<(e: PrefetchEvent) => void>();

/** Calls `listener` with each read started and each activity's and task's end; returns the way to stop. */
export function watchPrefetch(listener: (e: PrefetchEvent) => void): () => void {
  watchers.add(listener);
  return () => watchers.delete(listener);
}

function emit(e: PrefetchEvent): void {
  for (const w of watchers) w(e);
}

interface Entry {
  name: PrefetchName;
  label: string;
  startedBy: PrefetchRun;
  /** The run that awaits it before it returns: its starter, or the consumer that took it; null until taken. */
  owner: PrefetchRun | null;
  /** Settles when the read does; never rejects (the failure is logged). */
  settled: Promise<void>;
  abort: AbortController;
  /** What it hands per dashboard, until taken: `<part> <dashboard id>` → the part. */
  parts: Map<string, Promise<unknown>>;
}

/** One task's reads on this worker, and its activities running. */
class TaskPlan {
  readonly entries = new Set<Entry>();
  readonly open = new Set<PrefetchRun>();
  lastUsed = Date.now();

  held(): HeldRead[] {
    return [...this.entries].map((e) => ({
      name: e.name,
      label: e.label,
      startedBy: e.startedBy.activity,
      owner: e.owner && { activity: e.owner.activity, ended: !this.open.has(e.owner) },
    }));
  }
}

const declared = (name: PrefetchName): PrefetchRead => PREFETCH_PLAN[name];

/** Every task's plan on this worker (MigrationCaches.prefetch). */
export class PrefetchPlans {
  private readonly tasks = new Map<string, TaskPlan>();
  private readonly idleMs: number;

  constructor(opts: { idleMs?: number } = {}) {
    this.idleMs = opts.idleMs ?? PREFETCH_IDLE_MS;
  }

  /** A run for this activity of the task, after settling the plans of tasks idle here for too long. */
  async open(taskId: string, activity: EngineActivity, log: Log): Promise<PrefetchRun> {
    const now = Date.now();
    for (const [id, plan] of this.tasks) if (id !== taskId && !plan.open.size && now - plan.lastUsed > this.idleMs) await this.endTask(id);
    const run = new PrefetchRun(taskId, activity, this, log);
    this.planOf(taskId).open.add(run);
    return run;
  }

  /** The task's plan, made when it has none (a run's read started after the task's end lands in a new one, seen). */
  planOf(taskId: string): TaskPlan {
    let plan = this.tasks.get(taskId);
    if (!plan) this.tasks.set(taskId, (plan = new TaskPlan()));
    return plan;
  }

  /** A run ended: the task's plan goes when it holds nothing and no run of it is open. */
  dropIfEmpty(taskId: string): void {
    const plan = this.tasks.get(taskId);
    if (plan && !plan.entries.size && !plan.open.size) this.tasks.delete(taskId);
  }

  /** The task ended: every read it still holds aborted where it can be, awaited, and dropped. */
  async endTask(taskId: string): Promise<void> {
    const plan = this.tasks.get(taskId);
    const left = plan?.held() ?? [];
    if (plan) {
      // A read settling may begin another (an export begun ahead begins its views): until none is left.
      while (plan.entries.size) {
        const all = [...plan.entries];
        for (const e of all) if (declared(e.name).abortable) e.abort.abort(new Error('the task ended before the read was taken'));
        await Promise.all(all.map((e) => e.settled));
        for (const e of all) plan.entries.delete(e);
      }
      if (this.tasks.get(taskId) === plan) this.tasks.delete(taskId);
    }
    emit({ kind: 'task ended', taskId, left, held: this.tasks.get(taskId)?.held() ?? [] });
  }

  /** What the task's plan holds now. */
  held(taskId: string): HeldRead[] {
    return this.tasks.get(taskId)?.held() ?? [];
  }
}

/** One engine activity of a task: the reads it starts, and those it takes, held until its end. */
export class PrefetchRun {
  readonly taskId: string;
  readonly activity: EngineActivity;
  private readonly plans: PrefetchPlans;
  private readonly log: Log;

  constructor(taskId: string, activity: EngineActivity, plans: PrefetchPlans, log: Log) {
    this.taskId = taskId;
    this.activity = activity;
    this.plans = plans;
    this.log = log;
  }

  /** The task's plan: looked up each time, so a read started after the task ended is held (and seen) too. */
  private get plan(): TaskPlan {
    return this.plans.planOf(this.taskId);
  }

  /**
   * Starts the read `name` (`label`: its item, e.g. the dashboards it reads) and answers its
   * promise, which may reject: whoever awaits it meets the failure, which is also logged here.
   * `parts`: what it hands per dashboard to the verification, as the plan declares for `name`.
   */
  start<T>(name: PrefetchName, label: string, work: (signal: AbortSignal) => PromiseLike<T>, parts: Parts = {}): Promise<T> {
    return this.add(name, label, work, parts).read;
  }

  /** The same, for a read nobody awaits but the plan: its consumer finds what it kept. */
  begin(name: PrefetchName, label: string, work: (signal: AbortSignal) => PromiseLike<unknown>, parts: Parts = {}): void {
    // Not awaited here: the plan holds it until its end (its failure is logged by the entry's `settled`).
    this.add(name, label, work, parts);
  }

  /**
   * A dashboard's part of a read handed to the verification, once (undefined: none is held here).
   * The read is then this run's, awaited before it returns.
   */
  take<P extends HandedPart>(part: P, dashboardId: number): Promise<HandedParts[P]> | undefined {
    for (const e of this.plan.entries) {
      const got = e.parts.get(`${part} ${dashboardId}`);
      if (!got || declared(e.name).consumer !== 'verification') continue;
      e.parts.delete(`${part} ${dashboardId}`);
      e.owner ??= this;
      return got as Promise<HandedParts[P]>;
    }
    return undefined;
  }

  /** The reads begun for the task's next batch by an earlier one (`name`), now this run's: settles once they have. */
  adopt(name?: PrefetchName): Promise<void> {
    const mine = [...this.plan.entries].filter(
      (e) => e.owner === null && e.startedBy !== this && declared(e.name).consumer === 'next batch' && (!name || e.name === name),
    );
    for (const e of mine) e.owner = this;
    return Promise.all(mine.map((e) => e.settled)).then(() => undefined);
  }

  /** Before the activity returns: every read it owns (and, a batch, those begun for it) awaited and dropped. */
  async end(): Promise<void> {
    for (;;) {
      if (this.activity === 'migrateBatch') await this.adopt();
      const mine = [...this.plan.entries].filter((e) => e.owner === this);
      if (!mine.length) break;
      await Promise.all(mine.map((e) => e.settled));
      for (const e of mine) this.plan.entries.delete(e);
    }
    this.plan.open.delete(this);
    this.plan.lastUsed = Date.now();
    emit({ kind: 'activity ended', taskId: this.taskId, activity: this.activity, held: this.plan.held() });
    this.plans.dropIfEmpty(this.taskId);
  }

  /** Starts `work` and holds it in the task's plan (see start). */
  private add<T>(name: PrefetchName, label: string, work: (signal: AbortSignal) => PromiseLike<T>, parts: Parts): { read: Promise<T> } {
    const r = declared(name);
    const abort = new AbortController();
    let read: Promise<T>;
    try {
      read = Promise.resolve(work(abort.signal));
    } catch (err) {
      read = Promise.reject(err as Error);
    }
    const entry: Entry = {
      name,
      label,
      startedBy: this,
      owner: null,
      settled: this.logged(name, label, read, abort),
      abort,
      parts: new Map(),
    };
    for (const [part, byDashboard] of Object.entries(parts) as Array<[HandedPart, ReadonlyMap<number, Promise<unknown>>]>) {
      if (!r.hands?.includes(part)) throw new Error(`the prefetch plan's ${name} hands no ${part}`);
      for (const [id, p] of byDashboard) entry.parts.set(`${part} ${id}`, p);
    }
    if (r.consumer === 'itself') {
      entry.owner = this;
      if (!this.plan.open.has(this)) this.log.warn(`task ${this.taskId}: ${label} (${name}) started after its ${this.activity} returned`);
    }
    this.plan.entries.add(entry);
    emit({ kind: 'started', taskId: this.taskId, activity: this.activity, name });
    return { read };
  }

  /** Settles when the read does; its failure logged with the task, the activity and the read's name and item. */
  private logged(name: PrefetchName, label: string, read: Promise<unknown>, abort: AbortController): Promise<void> {
    const what = `task ${this.taskId}, ${this.activity}: ${label} (${name})`;
    return read.then(
      () => undefined,
      (err: unknown) => {
        if (abort.signal.aborted) this.log.info(`${what} stopped: ${failureText(abort.signal.reason)}`);
        else this.log.warn(`${what} failed: ${failureText(err)}`);
      },
    );
  }
}
