import { randomUUID } from 'node:crypto';
import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { Knex } from 'knex';
import { TaskModel, TERMINAL_STATUSES, type TaskType } from '../../db/tasks/task.model.ts';
import type { Config } from '../../lib/config.ts';
import { ConflictError, ForbiddenError, NotFoundError } from '../../lib/errors.ts';
import type { Logger } from '../../lib/logger.ts';
import { redact } from '../../lib/redact.ts';
import { SA_DASHBOARD_IDS, SA_ENV_IDS, SA_TASK_OWNER, SA_TASK_TYPE } from '../../workflows/shared.ts';
import { can, type Principal } from '../auth/principal.ts';

export interface CreateTaskRequest {
  type: TaskType;
  /** Exported workflow function name. */
  workflowType: string;
  /** The workflow's single argument; must not carry secrets (activities resolve them by reference). */
  workflowInput: unknown;
  /** What the caller asked for, as shown in the task (secrets are redacted before storing). */
  params: Record<string, unknown>;
  owner: Principal | null;
  envIds?: string[];
  dashboardIds?: string[];
  idempotencyKey?: string;
}

export interface TaskListFilter {
  type?: string;
  status?: string;
  owner?: string;
  envId?: string;
  dashboardId?: string;
  types?: readonly string[];
}

const START_CONCURRENCY = 8;

/**
 * Creates tasks so that one request yields exactly one row and one workflow: the row commits
 * first, then the workflow starts with the row id as workflow id and USE_EXISTING; a start that
 * fails leaves the row PENDING for the reconciler, which repeats the same idempotent start.
 */
export class TaskService {
  private readonly knex: Knex;
  private readonly temporal: Client;
  private readonly config: Config;
  private readonly logger: Logger;
  private readonly startQueue: TaskModel[] = [];
  private readonly pending = new Set<Promise<unknown>>();
  private startsInFlight = 0;

  constructor(deps: { knex: Knex; temporal: Client; config: Config; logger: Logger }) {
    this.knex = deps.knex;
    this.temporal = deps.temporal;
    this.config = deps.config;
    this.logger = deps.logger;
  }

  async create(req: CreateTaskRequest): Promise<{ task: TaskModel; created: boolean }> {
    const ownerId = req.owner?.userId ?? null;
    if (req.idempotencyKey) {
      const existing = await this.findByIdempotencyKey(ownerId, req.type, req.idempotencyKey);
      if (existing) return { task: existing, created: false };
    }
    const id = `${req.type}-${randomUUID()}`;
    let task: TaskModel;
    try {
      // One atomic statement: the row and its first log line, or neither.
      const { rows } = await this.knex.raw(
        `with t as (
           insert into tasks (id, type, status, owner_id, owner_username, env_ids, dashboard_ids, params, idempotency_key, workflow_type, workflow_input)
           values (?, ?, 'PENDING', ?, ?, ?, ?, ?, ?, ?, ?) returning *),
         l as (insert into task_logs (task_id, ts, level, source, message) select id, now(), 'INFO', 'api', ? from t)
         select * from t`,
        [
          id,
          req.type,
          ownerId,
          req.owner?.username ?? null,
          req.envIds ?? [],
          (req.dashboardIds ?? []).map(String),
          JSON.stringify(redact(req.params)),
          req.idempotencyKey ?? null,
          req.workflowType,
          JSON.stringify(req.workflowInput),
          `task created by ${req.owner?.username ?? 'system'}`,
        ],
      );
      task = TaskModel.fromDatabaseJson(rows[0]);
    } catch (err) {
      // Two concurrent requests with one idempotency key: the loser returns the winner's task.
      if (
        (err as { nativeError?: { code?: string }; code?: string }).code === '23505' ||
        (err as { nativeError?: { code?: string } }).nativeError?.code === '23505'
      ) {
        const winner = req.idempotencyKey ? await this.findByIdempotencyKey(ownerId, req.type, req.idempotencyKey) : undefined;
        if (winner) return { task: winner, created: false };
      }
      throw err;
    }
    this.enqueueStart(task);
    return { task, created: true };
  }

  /**
   * Starts run after the commit and off the request path (an outbox): the API answers at
   * database speed even when Temporal is slow or down. A start lost to a crash is repeated by
   * the reconciler, which is safe because the start is idempotent.
   */
  private enqueueStart(task: TaskModel): void {
    this.startQueue.push(task);
    this.pumpStarts();
  }

  private pumpStarts(): void {
    while (this.startsInFlight < START_CONCURRENCY && this.startQueue.length) {
      const task = this.startQueue.shift()!;
      this.startsInFlight++;
      const p = this.startWorkflow(task)
        .catch((err: unknown) => this.logger.warn({ err, taskId: task.id }, 'workflow start failed; the reconciler will retry'))
        .finally(() => {
          this.startsInFlight--;
          this.pending.delete(p);
          this.pumpStarts();
        });
      this.pending.add(p);
    }
  }

  /** Waits for starts in flight; queued ones stay PENDING rows for the reconciler. */
  async drainStarts(): Promise<void> {
    this.startQueue.length = 0;
    await Promise.all(this.pending);
  }

  /** Idempotent: the same id with USE_EXISTING never yields a second execution. */
  async startWorkflow(task: TaskModel): Promise<void> {
    let runId: string;
    try {
      const handle = await this.temporal.workflow.start(task.workflow_type, {
        workflowId: task.id,
        taskQueue: this.config.TEMPORAL_TASK_QUEUE,
        args: [task.workflow_input],
        workflowIdConflictPolicy: 'USE_EXISTING',
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
        typedSearchAttributes: [
          { key: SA_TASK_TYPE, value: task.type },
          ...(task.owner_username ? [{ key: SA_TASK_OWNER, value: task.owner_username }] : []),
          ...(task.env_ids.length ? [{ key: SA_ENV_IDS, value: task.env_ids }] : []),
          ...(task.dashboard_ids.length ? [{ key: SA_DASHBOARD_IDS, value: task.dashboard_ids }] : []),
        ],
        memo: { title: `${task.type} by ${task.owner_username ?? 'system'}` },
        staticSummary: `Switchyard ${task.type} task`,
      });
      runId = handle.firstExecutionRunId;
    } catch (err) {
      await this.knex('tasks').where({ id: task.id }).increment('start_attempts', 1);
      // REJECT_DUPLICATE: it ran and closed already; the row will be synced by the reconciler.
      if (err instanceof WorkflowExecutionAlreadyStartedError) return;
      throw err;
    }
    await this.knex('tasks')
      .where({ id: task.id })
      .update({
        start_attempts: this.knex.raw('start_attempts + 1'),
        workflow_run_id: this.knex.raw('coalesce(workflow_run_id, ?)', [runId]),
      });
  }

  async get(id: string): Promise<TaskModel> {
    const task = await TaskModel.query(this.knex).findById(id);
    if (!task) throw new NotFoundError('Task', id);
    return task;
  }

  /** Reading a task needs tasks:READ, or owning it. */
  async getVisible(id: string, principal: Principal): Promise<TaskModel> {
    const task = await this.get(id);
    const owns = principal.userId !== null && task.owner_id === principal.userId;
    if (!can(principal, 'tasks:READ') && !owns) throw new NotFoundError('Task', id);
    return task;
  }

  async list(filter: TaskListFilter, page: number, pageSize: number, principal: Principal) {
    const q = TaskModel.query(this.knex);
    // Without tasks:READ only one's own tasks; an API key owns none (no user behind it).
    if (!can(principal, 'tasks:READ')) {
      if (principal.userId) q.where('owner_id', principal.userId);
      else q.whereRaw('false');
    }
    if (filter.types) q.whereIn('type', filter.types as string[]);
    if (filter.type) q.where('type', filter.type);
    if (filter.status) q.where('status', filter.status);
    if (filter.owner) {
      const owner = filter.owner;
      q.where((b) => {
        b.where('owner_username', owner);
        if (isUuid(owner)) b.orWhere('owner_id', owner);
      });
    }
    if (filter.envId) q.whereRaw('? = any(env_ids)', [filter.envId]);
    if (filter.dashboardId) q.whereRaw('? = any(dashboard_ids)', [filter.dashboardId]);
    // id breaks ties so pages never overlap when timestamps are equal.
    const { results, total } = await q
      .orderBy([
        { column: 'created_at', order: 'desc' },
        { column: 'id', order: 'desc' },
      ])
      .page(page - 1, pageSize);
    return { items: results, total, page, page_size: pageSize, has_next: page * pageSize < total };
  }

  async cancel(id: string, principal: Principal): Promise<TaskModel> {
    const task = await this.getVisible(id, principal);
    if ((principal.userId === null || task.owner_id !== principal.userId) && !can(principal, 'tasks:WRITE'))
      throw new ForbiddenError('Only the task owner or a holder of tasks:WRITE can cancel it');
    if (TERMINAL_STATUSES.includes(task.status))
      throw new ConflictError(`Task ${id} already finished with status ${task.status}`, 'task_finished');
    // Not started in Temporal yet: cancel the row; the conditional update beats a concurrent start.
    if (!task.workflow_run_id) {
      const n = await this.knex('tasks')
        .where({ id, status: 'PENDING' })
        .whereNull('workflow_run_id')
        .update({
          status: 'CANCELLED',
          error: JSON.stringify({ message: 'cancelled before it started' }),
          finished_at: this.knex.fn.now(),
          updated_at: this.knex.fn.now(),
        });
      if (n === 1) {
        await this.appendLog(id, 'WARN', `cancelled by ${principal.username} before it started`);
        return this.get(id);
      }
    }
    try {
      await this.temporal.workflow.getHandle(id).cancel();
    } catch (err) {
      if (!(err instanceof WorkflowNotFoundError)) throw err;
    }
    await this.appendLog(id, 'WARN', `cancellation requested by ${principal.username}`);
    return this.get(id);
  }

  async appendLog(taskId: string, level: 'INFO' | 'WARN' | 'ERROR', message: string): Promise<void> {
    await this.knex('task_logs').insert({ task_id: taskId, ts: new Date(), level, source: 'api', message });
  }

  private async findByIdempotencyKey(ownerId: string | null, type: string, key: string): Promise<TaskModel | undefined> {
    const q = TaskModel.query(this.knex).where({ type, idempotency_key: key });
    if (ownerId) q.where('owner_id', ownerId);
    else q.whereNull('owner_id');
    return q.first();
  }

  temporalUiUrl(id: string): string | undefined {
    const base =
      this.config.TEMPORAL_UI_URL ?? (this.config.TEMPORAL_ADDRESS ? undefined : `http://127.0.0.1:${this.config.TEMPORAL_UI_PORT}`);
    return base
      ? `${base.replace(/\/$/, '')}/namespaces/${encodeURIComponent(this.config.TEMPORAL_NAMESPACE)}/workflows/${encodeURIComponent(id)}`
      : undefined;
  }
}

function isUuid(s: string): boolean {
  return /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(s);
}
