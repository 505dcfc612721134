import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { Knex } from 'knex';
import { OPEN_STATUSES, TaskModel } from '../../db/tasks/task.model.ts';
import type { Logger } from '../../lib/logger.ts';
import type { TaskService } from './service.ts';

const LOCK_KEY = 0x5317_7a5d; // one reconciler at a time across API replicas

/**
 * Repairs the two ways the tasks table and Temporal can disagree: a row whose workflow never
 * started (Temporal was down at creation), and an open row whose workflow closed without
 * writing its outcome (terminated or timed out from the Temporal console).
 */
export class TaskReconciler {
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private readonly deps: { knex: Knex; temporal: Client; tasks: TaskService; logger: Logger; afterSeconds: number };

  constructor(deps: { knex: Knex; temporal: Client; tasks: TaskService; logger: Logger; afterSeconds: number }) {
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
    const { knex } = this.deps;
    return knex.transaction(async (trx) => {
      const { rows } = await trx.raw<{ rows: Array<{ ok: boolean }> }>('select pg_try_advisory_xact_lock(?) as ok', [LOCK_KEY]);
      if (!rows[0].ok) return { started: 0, synced: 0 };
      const stale = trx.raw(`now() - make_interval(secs => ?)`, [this.deps.afterSeconds]);
      const unstarted = await TaskModel.query(trx)
        .where('status', 'PENDING')
        .whereNull('workflow_run_id')
        .where('created_at', '<', stale)
        .limit(100);
      let started = 0;
      for (const task of unstarted) {
        try {
          await this.deps.tasks.startWorkflow(task);
          started++;
          this.deps.logger.info({ taskId: task.id }, 'reconciler started a pending task');
        } catch (err) {
          this.deps.logger.warn({ err, taskId: task.id }, 'reconciler could not start a pending task');
        }
      }
      const open = await TaskModel.query(trx)
        .whereIn('status', OPEN_STATUSES as string[])
        .whereNotNull('workflow_run_id')
        .where('updated_at', '<', stale)
        .limit(100);
      let synced = 0;
      for (const task of open) if (await this.syncClosed(trx, task)) synced++;
      return { started, synced };
    });
  }

  private async syncClosed(trx: Knex, task: TaskModel): Promise<boolean> {
    let status: string;
    try {
      status = (await this.deps.temporal.workflow.getHandle(task.id).describe()).status.name;
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) status = 'NOT_FOUND';
      else throw err;
    }
    const outcome: Record<string, ['SUCCEEDED' | 'FAILED' | 'CANCELLED', string] | undefined> = {
      COMPLETED: ['SUCCEEDED', 'workflow completed'],
      FAILED: ['FAILED', 'workflow failed'],
      CANCELLED: ['CANCELLED', 'workflow cancelled'],
      TERMINATED: ['FAILED', 'workflow was terminated in Temporal'],
      TIMED_OUT: ['FAILED', 'workflow timed out in Temporal'],
      NOT_FOUND: ['FAILED', 'workflow no longer exists in Temporal (retention expired or namespace reset)'],
    };
    const o = outcome[status];
    if (!o) {
      await trx('tasks').where({ id: task.id }).update({ updated_at: trx.fn.now() }); // still running: look again later
      return false;
    }
    const n = await trx('tasks')
      .where({ id: task.id })
      .whereIn('status', OPEN_STATUSES as string[])
      .update({
        status: o[0],
        error: o[0] === 'SUCCEEDED' ? null : JSON.stringify({ message: o[1] }),
        finished_at: trx.fn.now(),
        updated_at: trx.fn.now(),
      });
    if (n)
      await trx('task_logs').insert({
        task_id: task.id,
        ts: new Date(),
        level: o[0] === 'SUCCEEDED' ? 'INFO' : 'WARN',
        source: 'api',
        message: `reconciled: ${o[1]}`,
      });
    return n > 0;
  }
}
