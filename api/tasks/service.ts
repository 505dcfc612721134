import { detached } from '../../lib/detached.ts';
import { taskPolicy } from './policy.ts';
import { randomUUID } from 'node:crypto';
import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError, type Client } from '@temporalio/client';
import { SA_DASHBOARD_IDS, SA_ENV_IDS, SA_TASK_OWNER, SA_TASK_TYPE } from '../../contracts/search-attributes.ts';
import { approvalFor, TASK_KINDS, type TaskInputOf, type TaskKind, type TaskKindName } from '../../contracts/task-kinds.ts';
import { TERMINAL_STATUSES } from '../../contracts/tasks.ts';
import { readPairSettings, type PairSettingsStores } from '../../db/environments/pair-settings.ts';
import type { EnvironmentStore } from '../../db/environments/store.ts';
import type { TaskFilter, TaskRecord, TaskStore } from '../../db/tasks/store.ts';
import type { Config } from '../../lib/config.ts';
import { ConflictError, ForbiddenError, NotFoundError } from '../../lib/errors.ts';
import type { Logger } from '../../lib/logger.ts';
import { redact } from '../../lib/redact.ts';
import { metrics } from '../../lib/telemetry/metrics.ts';
import { noteTask } from '../../lib/telemetry/scope.ts';
import { captureContext } from '../../lib/telemetry/tracing.ts';
import { actorLabel, can, isAdmin, type Principal } from '../auth/principal.ts';
import { taskForReader } from './query-rows.ts';

export interface CreateTaskRequest<K extends TaskKindName> {
  kind: K;
  /** The workflow's single argument; never carries secrets (activities read them by id). */
  input: TaskInputOf<K>;
  /** What the caller asked for, as shown in the task (redacted again before storing). */
  params: Record<string, unknown>;
  owner: Principal | null;
  idempotencyKey?: string;
  /** A shorter approval window than APPROVAL_TIMEOUT_SECONDS, should the task need approval. */
  approvalSeconds?: number;
}

const START_CONCURRENCY = 8;

/**
 * Creates tasks so that one request yields exactly one row and one workflow: the row commits
 * first, then the workflow starts with the row id as workflow id and USE_EXISTING; a start that
 * fails leaves the row PENDING for the reconciler, which repeats the same idempotent start.
 */
export class TaskService {
  private readonly store: TaskStore;
  private readonly environments: EnvironmentStore;
  private readonly temporal: Client;
  private readonly config: Config;
  private readonly logger: Logger;
  private readonly pairs: PairSettingsStores;
  private readonly startQueue: Array<{ task: TaskRecord; inTrace: ReturnType<typeof captureContext> }> = [];
  private readonly pending = new Set<Promise<unknown>>();
  private startsInFlight = 0;
  private readonly startsToRecord: Array<{ id: string; runId: string | null; resolve: () => void; reject: (err: unknown) => void }> = [];
  private recordingStarts = false;

  constructor(deps: {
    store: TaskStore;
    environments: EnvironmentStore;
    temporal: Client;
    config: Config;
    logger: Logger;
    pairs: PairSettingsStores;
  }) {
    this.store = deps.store;
    this.pairs = deps.pairs;
    this.environments = deps.environments;
    this.temporal = deps.temporal;
    this.config = deps.config;
    this.logger = deps.logger;
  }

  async create<K extends TaskKindName>(req: CreateTaskRequest<K>): Promise<{ task: TaskRecord; created: boolean }> {
    const kind = TASK_KINDS[req.kind] as TaskKind<TaskInputOf<K>>;
    const envIds = kind.envIds(req.input);
    const envs = await this.environments.labelsById(envIds);
    const requestedBy = req.owner?.userId ?? null;
    const approval = approvalFor(
      kind,
      req.input,
      (id) => envs.get(id)?.protected === true,
      requestedBy,
      this.config.APPROVAL_TIMEOUT_SECONDS,
      req.approvalSeconds,
    );
    // What the task will apply is frozen now, so what an approver sees is what runs (db/environments/pair-settings.ts).
    const pair = kind.frozenPair?.(req.input);
    const frozen = pair ? await readPairSettings(this.pairs, pair.sourceEnvId, pair.targetEnvId) : undefined;
    const input = { ...(req.input as object), ...(approval ? { approval } : {}), ...(frozen ? { frozen } : {}) } as TaskInputOf<K>;
    const { summary, details } = kind.describe(input, (id) => envs.get(id)?.name ?? id);
    const { task, created } = await this.store.create({
      id: `${kind.type}-${randomUUID()}`,
      type: kind.type,
      ownerId: req.owner?.userId ?? null,
      ownerUsername: req.owner?.username ?? null,
      envIds,
      dashboardIds: kind.dashboardIds(req.input),
      params: redact(req.params) as Record<string, unknown>,
      idempotencyKey: req.idempotencyKey ?? null,
      apiKeyId: req.owner?.apiKeyId ?? null,
      summary,
      details: details ?? null,
      workflowType: kind.workflow,
      workflowInput: input,
      firstLogLine: `task created by ${req.owner ? actorLabel(req.owner) : 'system'}: ${summary}`,
    });
    if (created) {
      metrics.tasksCreated.inc({ kind: kind.type });
      noteTask(task.id, envIds);
      this.logger.info({ taskId: task.id, kind: kind.type }, 'task created');
      this.enqueueStart(task);
    }
    return { task, created };
  }

  /** May the principal start this kind of task? */
  mayStart(kind: TaskKindName, principal: Principal): boolean {
    const needed = TASK_KINDS[kind].permission;
    return needed === 'admin' ? isAdmin(principal) : can(principal, needed);
  }

  /**
   * Starts run after the commit and off the request path (an outbox): the API answers at
   * database speed even when Temporal is slow or down. A start lost to a crash is repeated by
   * the reconciler, which is safe because the start is idempotent.
   */
  private enqueueStart(task: TaskRecord): void {
    // A start that waits in the queue still belongs to the request's trace.
    this.startQueue.push({ task, inTrace: captureContext() });
    this.pumpStarts();
  }

  private pumpStarts(): void {
    while (this.startsInFlight < START_CONCURRENCY && this.startQueue.length) {
      const { task, inTrace } = this.startQueue.shift()!;
      this.startsInFlight++;
      const p = inTrace(() => this.startWorkflow(task))
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
  async startWorkflow(task: TaskRecord): Promise<void> {
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
          ...(task.dashboard_ids.length && fitsSearchAttribute(task.dashboard_ids)
            ? [{ key: SA_DASHBOARD_IDS, value: task.dashboard_ids }]
            : []),
        ],
        memo: { title: `${task.type} by ${task.owner_username ?? 'system'}` },
        // What operators read in the Temporal web console instead of bare ids.
        staticSummary: task.summary ?? `Switchyard ${task.type} task`,
        ...(task.details ? { staticDetails: `${task.details}\nRequested by ${task.owner_username ?? 'system'}.` } : {}),
      });
      runId = handle.firstExecutionRunId;
    } catch (err) {
      await this.recordStart(task.id, null);
      // REJECT_DUPLICATE: it ran and closed already; the row will be synced by the reconciler.
      if (err instanceof WorkflowExecutionAlreadyStartedError) return;
      throw err;
    }
    await this.recordStart(task.id, runId);
  }

  /** Starts queued behind the recording in flight: its next statement records them (a test waits on this). */
  get startsWaitingToRecord(): number {
    return this.startsToRecord.length;
  }

  /**
   * Starts are recorded in groups: while one update is in flight the next starts queue, and one
   * statement records them all (under a burst, one commit for many tasks instead of one each).
   */
  private recordStart(id: string, runId: string | null): Promise<void> {
    return new Promise((resolve, reject) => {
      this.startsToRecord.push({ id, runId, resolve, reject });
      // Detached: each start's own promise settles with its group's outcome (recordQueuedStarts rejects none of them unseen).
      detached('recording queued task starts', this.recordQueuedStarts(), this.logger);
    });
  }

  private async recordQueuedStarts(): Promise<void> {
    if (this.recordingStarts) return;
    this.recordingStarts = true;
    try {
      while (this.startsToRecord.length) {
        const batch = this.startsToRecord.splice(0, 500);
        try {
          await this.store.recordStarts(batch);
          for (const s of batch) s.resolve();
        } catch (err) {
          for (const s of batch) s.reject(err);
        }
      }
    } finally {
      this.recordingStarts = false;
    }
  }

  async get(id: string): Promise<TaskRecord> {
    const task = await this.store.get(id);
    if (!task) throw new NotFoundError('Task', id);
    return task;
  }

  /** Reading a task needs tasks:READ, or owning it; a hidden task answers like an absent one. */
  async getVisible(id: string, principal: Principal, what = 'Task'): Promise<TaskRecord> {
    const task = await this.store.get(id);
    if (!task || !taskPolicy.read(principal, task)) throw new NotFoundError(what, id);
    // As this reader may see it: a caller's query rows only for its owner and admins (query-rows.ts).
    return taskForReader(task, principal);
  }

  async list(filter: TaskFilter, page: number, pageSize: number, principal: Principal) {
    const found = await this.store.list(filter, taskPolicy.listOwner(principal), page, pageSize);
    return { ...found, items: found.items.map((t) => taskForReader(t, principal)) };
  }

  async cancel(id: string, principal: Principal): Promise<TaskRecord> {
    const task = await this.getVisible(id, principal);
    if (!taskPolicy.cancel(principal, task)) throw new ForbiddenError('Only the task owner or a holder of tasks:WRITE can cancel it');
    if (TERMINAL_STATUSES.includes(task.status))
      throw new ConflictError(`Task ${id} already finished with status ${task.status}`, 'task_finished');
    // Not started in Temporal yet: cancel the row; the conditional update beats a concurrent start.
    if (!task.workflow_run_id && (await this.store.cancelUnstarted(id, principal.username))) return this.get(id);
    try {
      await this.temporal.workflow.getHandle(id).cancel();
    } catch (err) {
      if (!(err instanceof WorkflowNotFoundError)) throw err;
    }
    await this.store.appendLog(id, 'WARN', `cancellation requested by ${principal.username}`);
    return this.get(id);
  }

  temporalUiUrl(id: string): string | undefined {
    const base =
      this.config.TEMPORAL_UI_URL ?? (this.config.TEMPORAL_ADDRESS ? undefined : `http://127.0.0.1:${this.config.TEMPORAL_UI_PORT}`);
    return base
      ? `${base.replace(/\/$/, '')}/namespaces/${encodeURIComponent(this.config.TEMPORAL_NAMESPACE)}/workflows/${encodeURIComponent(id)}`
      : undefined;
  }
}

/**
 * Temporal refuses a start whose search attribute value passes 2 KB (its default
 * `limit.searchAttributesSizeOfValue`; a backup of a thousand dashboards does): such a list is left
 * out of the Temporal console's search, while the task row keeps every id for the API's filters.
 */
function fitsSearchAttribute(values: readonly string[]): boolean {
  return Buffer.byteLength(JSON.stringify(values)) <= 2000;
}
