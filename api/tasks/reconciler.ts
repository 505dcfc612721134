import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { FinalStatus } from '../../contracts/tasks.ts';
import type { TaskRecord, TaskStore } from '../../db/tasks/store.ts';
import type { Logger } from '../../lib/logger.ts';
import type { TaskService } from './service.ts';

const OUTCOME: Record<string, [FinalStatus, string] | undefined> = {
  COMPLETED: ['SUCCEEDED', 'workflow completed'],
  FAILED: ['FAILED', 'workflow failed'],
  CANCELLED: ['CANCELLED', 'workflow cancelled'],
  TERMINATED: ['FAILED', 'workflow was terminated in Temporal'],
  TIMED_OUT: ['FAILED', 'workflow timed out in Temporal'],
  NOT_FOUND: ['FAILED', 'workflow no longer exists in Temporal (retention expired or namespace reset)'],
};

/**
 * Repairs the two ways the tasks table and Temporal can disagree: a row whose workflow never
 * started (Temporal was down at creation), and an open row whose workflow closed without
 * writing its outcome (terminated or timed out from the Temporal console).
 */
export class TaskReconciler {
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private readonly deps: { store: TaskStore; temporal: Client; tasks: TaskService; logger: Logger; afterSeconds: number };

  constructor(deps: { store: TaskStore; temporal: Client; tasks: TaskService; logger: Logger; afterSeconds: number }) {
    this.deps = deps;
  }

  start(everyMs = 5000): void {
    this.timer = setInterval(() => {
      this.running ??= this.runOnce()
        .catch((err: unknown) => this.deps.logger.warn({ err }, 'task reconciliation failed'))
        .then(() => undefined)
        .finally(() => (this.running = undefined));
    }, everyMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.running;
  }

  async runOnce(): Promise<{ started: number; synced: number }> {
    const { afterSeconds, logger, tasks } = this.deps;
    const done = await this.deps.store.withReconcileLock(async (store) => {
      let started = 0;
      for (const task of await store.listUnstarted(afterSeconds)) {
        try {
          await tasks.startWorkflow(task);
          started++;
          logger.info({ taskId: task.id }, 'reconciler started a pending task');
        } catch (err) {
          logger.warn({ err, taskId: task.id }, 'reconciler could not start a pending task');
        }
      }
      let synced = 0;
      for (const task of await store.listStaleOpen(afterSeconds)) if (await this.syncClosed(store, task)) synced++;
      return { started, synced };
    });
    return done ?? { started: 0, synced: 0 };
  }

  private async syncClosed(store: TaskStore, task: TaskRecord): Promise<boolean> {
    let status: string;
    try {
      status = (await this.deps.temporal.workflow.getHandle(task.id).describe()).status.name;
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) status = 'NOT_FOUND';
      else throw err;
    }
    const o = OUTCOME[status];
    if (!o) {
      await store.touch(task.id);
      return false;
    }
    return store.closeFromTemporal(task.id, o[0], o[1]);
  }
}
