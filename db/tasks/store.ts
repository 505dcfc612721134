/**
 * The task store: the only code that reads or writes `tasks` and `task_logs`. The API creates,
 * lists, cancels and reconciles through it; the lifecycle activities move a task through its
 * states; the worker's log sink appends lines. Every transition is a compare-and-set on an open
 * status, so retries and late duplicates cannot move a finished task back.
 */
import type { Knex } from 'knex';
import {
  OPEN_STATUSES,
  type ApprovalOutcome,
  type FinalStatus,
  type TaskError,
  type TaskProgress,
  type TaskStatus,
} from '../../contracts/tasks.ts';
import type { TaskType } from '../../contracts/task-kinds.ts';
import { isItemsResult } from '../../contracts/outcomes.ts';
import { recordTaskFinished } from '../../lib/telemetry/metrics.ts';
import { isUniqueViolation } from '../errors.ts';
import { preparedQuery } from '../prepared.ts';

export interface TaskRecord {
  id: string;
  type: TaskType;
  status: TaskStatus;
  owner_id: string | null;
  owner_username: string | null;
  env_ids: string[];
  dashboard_ids: string[];
  params: Record<string, unknown>;
  progress: TaskProgress | null;
  result: unknown;
  error: TaskError | null;
  idempotency_key: string | null;
  /** Whose key `idempotency_key` is (idempotencyScope); null without a key. */
  idempotency_scope: string | null;
  summary: string | null;
  details: string | null;
  workflow_type: string;
  workflow_input: unknown;
  workflow_run_id: string | null;
  /** A gated task's decision once made (who, the comment, or that the window ran out). */
  approval: (ApprovalOutcome & { decided_at: string }) | null;
  start_attempts: number;
  created_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
  updated_at: Date;
}

export interface NewTask {
  id: string;
  type: TaskType;
  ownerId: string | null;
  ownerUsername: string | null;
  envIds: string[];
  dashboardIds: string[];
  /** What the caller asked for, already free of secrets. */
  params: Record<string, unknown>;
  idempotencyKey: string | null;
  /** The API key that asked, when no user did: its Idempotency-Keys are its own (see idempotencyScope). */
  apiKeyId?: string | null;
  summary: string;
  details: string | null;
  workflowType: string;
  workflowInput: unknown;
  firstLogLine: string;
}

/** Who may see which tasks: everything, one user's own, or nothing (an API key has no user). */
export type TaskVisibility = { all: true } | { ownerId: string | null };

export interface TaskFilter {
  types?: readonly string[];
  type?: string;
  status?: string;
  /** A username, or a user id. */
  owner?: string;
  envId?: string;
  dashboardId?: string;
  /** Tasks whose id after `<type>-` starts with `prefix` (a short id, as people copy it), of `type` when given. */
  idPrefix?: { type?: string; prefix: string };
}

export type LogLevel = 'DEBUG' | 'INFO' | 'WARN' | 'ERROR';
export type LogSource = 'api' | 'workflow' | 'activity';

export interface LogRow {
  id: number;
  task_id: string;
  ts: Date;
  level: LogLevel;
  source: LogSource;
  activity_type: string | null;
  attempt: number | null;
  message: string;
  attrs: Record<string, unknown> | null;
}

export type NewLogLine = Omit<LogRow, 'id' | 'ts'> & { ts: Date | string };

export interface LogFilter {
  levels?: readonly string[];
  sources?: readonly string[];
  text?: string;
}

/**
 * Whose Idempotency-Keys a new task's key is one of: the owner user's (an API key acting for its
 * creator is that user), else the API key's, else the system's (schedules, workflows). A key
 * reused by someone else names a task of their own, never the first sender's.
 */
export function idempotencyScope(t: Pick<NewTask, 'ownerId' | 'apiKeyId'>): string {
  if (t.ownerId) return `user:${t.ownerId}`;
  return t.apiKeyId ? `api-key:${t.apiKeyId}` : 'system';
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const OPEN = OPEN_STATUSES as TaskStatus[];

/** What a final write reads back for the task metrics (lib/telemetry/metrics.ts): here, where every task ends. */
type FinishedRow = Pick<TaskRecord, 'type' | 'created_at' | 'finished_at'>;
const FINISHED_COLUMNS = ['type', 'created_at', 'finished_at'];
function countFinished(row: FinishedRow, status: FinalStatus, items?: number): void {
  const seconds = (new Date(row.finished_at ?? Date.now()).getTime() - new Date(row.created_at).getTime()) / 1000;
  recordTaskFinished(row.type, status, seconds, items);
}

export class TaskStore {
  private readonly knex: Knex;

  constructor(knex: Knex) {
    this.knex = knex;
  }

  /** Runs `work` with a store bound to one transaction: all of its writes commit, or none. */
  transaction<T>(work: (store: TaskStore) => Promise<T>): Promise<T> {
    return this.knex.transaction((trx) => work(new TaskStore(trx)));
  }

  /** The row and its first log line in one statement; a duplicate idempotency key returns the existing task. */
  async create(t: NewTask): Promise<{ task: TaskRecord; created: boolean }> {
    const scope = idempotencyScope(t);
    if (t.idempotencyKey) {
      const existing = await this.findByIdempotencyKey(scope, t.type, t.idempotencyKey);
      if (existing) return { task: existing, created: false };
    }
    try {
      const rows = await preparedQuery<TaskRecord>(
        this.knex,
        'tasks.create',
        `with t as (
           insert into tasks (id, type, status, owner_id, owner_username, env_ids, dashboard_ids, params, idempotency_key,
                              summary, details, workflow_type, workflow_input, idempotency_scope)
           values ($1, $2, 'PENDING', $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $14) returning *),
         l as (insert into task_logs (task_id, ts, level, source, message) select id, now(), 'INFO', 'api', $13 from t)
         select * from t`,
        [
          t.id,
          t.type,
          t.ownerId,
          t.ownerUsername,
          t.envIds,
          t.dashboardIds,
          JSON.stringify(t.params),
          t.idempotencyKey,
          t.summary,
          t.details,
          t.workflowType,
          JSON.stringify(t.workflowInput),
          t.firstLogLine,
          t.idempotencyKey ? scope : null,
        ],
      );
      return { task: rows[0]!, created: true };
    } catch (err) {
      // Two concurrent requests with one idempotency key: the loser returns the winner's task.
      if (isUniqueViolation(err) && t.idempotencyKey) {
        const winner = await this.findByIdempotencyKey(scope, t.type, t.idempotencyKey);
        if (winner) return { task: winner, created: false };
      }
      throw err;
    }
  }

  private async findByIdempotencyKey(scope: string, type: string, key: string): Promise<TaskRecord | undefined> {
    return this.knex<TaskRecord>('tasks').where('idempotency_scope', scope).where('type', type).where('idempotency_key', key).first();
  }

  async get(id: string): Promise<TaskRecord | undefined> {
    return this.knex<TaskRecord>('tasks').where({ id }).first();
  }

  async list(filter: TaskFilter, visibility: TaskVisibility, page: number, pageSize: number) {
    const q = this.knex<TaskRecord>('tasks');
    if (!('all' in visibility)) {
      if (visibility.ownerId) q.where('owner_id', visibility.ownerId);
      else q.whereRaw('false');
    }
    if (filter.types) q.whereIn('type', filter.types as string[]);
    if (filter.type) q.where('type', filter.type);
    if (filter.status) q.where('status', filter.status);
    if (filter.owner) {
      const owner = filter.owner;
      q.where((b) => {
        b.where('owner_username', owner);
        if (UUID.test(owner)) b.orWhere('owner_id', owner);
      });
    }
    if (filter.envId) q.whereRaw('? = any(env_ids)', [filter.envId]);
    if (filter.dashboardId) q.whereRaw('? = any(dashboard_ids)', [filter.dashboardId]);
    if (filter.idPrefix) {
      // An id is `<type>-<rest>`: the prefix is matched on the rest, as a plain string (no pattern characters).
      q.whereRaw('starts_with(substr(id, char_length(type) + 2), ?)', [filter.idPrefix.prefix]);
      if (filter.idPrefix.type) q.where('type', filter.idPrefix.type);
    }
    const [{ n }] = await q.clone().count<{ n: string }[]>({ n: '*' });
    // Instants, then the id in byte order: a total order, so pages never overlap.
    const items = await q
      .orderByRaw('created_at desc, id collate "C" desc')
      .limit(pageSize)
      .offset((page - 1) * pageSize);
    const total = Number(n);
    return { items, total, page, page_size: pageSize, has_next: page * pageSize < total };
  }

  /** Records start attempts in one statement (a task may appear more than once); `runId` once Temporal accepted the start. */
  async recordStarts(starts: ReadonlyArray<{ id: string; runId: string | null }>): Promise<void> {
    if (!starts.length) return;
    // Grouped by task first: an update joins each row once, so repeats are counted here.
    await this.knex.raw(
      `update tasks t
          set start_attempts = t.start_attempts + s.attempts,
              workflow_run_id = coalesce(t.workflow_run_id, s.run_id)
         from (select id, count(*)::int as attempts, max(run_id) as run_id
                 from jsonb_to_recordset(?::jsonb) as r(id text, run_id text) group by id) s
        where t.id = s.id`,
      [JSON.stringify(starts.map((x) => ({ id: x.id, run_id: x.runId })))],
    );
  }

  /** Cancels a task whose workflow has not started; false when it started meanwhile (or finished). */
  async cancelUnstarted(id: string, by: string): Promise<boolean> {
    return this.knex.transaction(async (trx) => {
      const rows: FinishedRow[] = await trx('tasks')
        .where({ id, status: 'PENDING' })
        .whereNull('workflow_run_id')
        .update(
          {
            status: 'CANCELLED',
            error: JSON.stringify({ message: 'cancelled before it started' }),
            finished_at: trx.fn.now(),
            updated_at: trx.fn.now(),
          },
          FINISHED_COLUMNS,
        );
      for (const row of rows) countFinished(row, 'CANCELLED');
      const n = rows.length;
      if (n === 1)
        await trx('task_logs').insert({
          task_id: id,
          ts: new Date(),
          level: 'WARN',
          source: 'api',
          message: `cancelled by ${by} before it started`,
        });
      return n === 1;
    });
  }

  /**
   * The workflow begins: 'running' when the row was open, 'closed' when it was cancelled before
   * the workflow got to run, 'missing' when no row exists (a start that bypassed the API).
   */
  async markRunning(id: string, runId: string): Promise<'running' | 'closed' | 'missing'> {
    const n = await this.knex('tasks')
      .where({ id })
      .whereIn('status', OPEN)
      .update({
        status: 'RUNNING',
        started_at: this.knex.raw('coalesce(started_at, now())'),
        workflow_run_id: runId,
        updated_at: this.knex.fn.now(),
      });
    if (n > 0) return 'running';
    return (await this.knex('tasks').where({ id }).first('id')) ? 'closed' : 'missing';
  }

  async setProgress(id: string, progress: TaskProgress): Promise<void> {
    await this.knex('tasks')
      .where({ id })
      .whereIn('status', OPEN)
      .update({ progress: JSON.stringify(progress), updated_at: this.knex.fn.now() });
  }

  /**
   * A gated task starts or stops waiting for a person's decision (RUNNING <-> AWAITING_APPROVAL);
   * when it stops, the decision is kept in `approval`. A repeated call changes nothing more.
   */
  async recordApproval(id: string, change: { waiting: true } | { waiting: false; outcome: ApprovalOutcome }): Promise<boolean> {
    const n = await this.knex('tasks')
      .where({ id, status: change.waiting ? 'RUNNING' : 'AWAITING_APPROVAL' })
      .update({
        status: change.waiting ? 'AWAITING_APPROVAL' : 'RUNNING',
        ...(change.waiting ? {} : { approval: JSON.stringify({ ...change.outcome, decided_at: new Date().toISOString() }) }),
        updated_at: this.knex.fn.now(),
      });
    return n > 0;
  }

  /** The final write; a no-op on a task that is already closed. `result` and `error` must be free of secrets. */
  async finish(id: string, status: FinalStatus, result: unknown, error: TaskError | null): Promise<boolean> {
    const rows: FinishedRow[] = await this.knex('tasks')
      .where({ id })
      .whereIn('status', OPEN)
      .update(
        {
          status,
          result: result === undefined ? null : JSON.stringify(result),
          error: error ? JSON.stringify(error) : null,
          finished_at: this.knex.fn.now(),
          updated_at: this.knex.fn.now(),
        },
        FINISHED_COLUMNS,
      );
    for (const row of rows) countFinished(row, status, isItemsResult(result) ? result.items.length : undefined);
    return rows.length > 0;
  }

  // --- reconciliation -------------------------------------------------------------------------

  /** Runs `work` when no other replica is reconciling (a transaction-scoped advisory lock). */
  async withReconcileLock<T>(work: (store: TaskStore) => Promise<T>): Promise<T | undefined> {
    return this.knex.transaction(async (trx) => {
      const { rows } = await trx.raw<{ rows: Array<{ ok: boolean }> }>('select pg_try_advisory_xact_lock(?) as ok', [RECONCILE_LOCK]);
      if (!rows[0]!.ok) return undefined;
      return work(new TaskStore(trx));
    });
  }

  /** PENDING rows older than `seconds` whose workflow never started. */
  async listUnstarted(seconds: number, limit = 100): Promise<TaskRecord[]> {
    return this.knex<TaskRecord>('tasks')
      .where('status', 'PENDING')
      .whereNull('workflow_run_id')
      .where('created_at', '<', this.knex.raw('now() - make_interval(secs => ?)', [seconds]))
      .limit(limit);
  }

  /** Open rows with a started workflow and no change for `seconds`. */
  async listStaleOpen(seconds: number, limit = 100): Promise<TaskRecord[]> {
    return this.knex<TaskRecord>('tasks')
      .whereIn('status', OPEN)
      .whereNotNull('workflow_run_id')
      .where('updated_at', '<', this.knex.raw('now() - make_interval(secs => ?)', [seconds]))
      .limit(limit);
  }

  /** Still running: look again later. */
  async touch(id: string): Promise<void> {
    await this.knex('tasks').where({ id }).update({ updated_at: this.knex.fn.now() });
  }

  /** Closes a row whose workflow closed without writing its outcome (terminated, timed out, gone). */
  async closeFromTemporal(id: string, status: FinalStatus, reason: string): Promise<boolean> {
    const closed = await this.finish(id, status, undefined, status === 'SUCCEEDED' ? null : { message: reason });
    if (closed) await this.appendLog(id, status === 'SUCCEEDED' ? 'INFO' : 'WARN', `reconciled: ${reason}`);
    return closed;
  }

  // --- logs -----------------------------------------------------------------------------------

  async appendLog(taskId: string, level: LogLevel, message: string): Promise<void> {
    await this.knex('task_logs').insert({ task_id: taskId, ts: new Date(), level, source: 'api', message });
  }

  /** A batch from the worker's log sink; lines of tasks that have no row are dropped. */
  async appendLogs(lines: readonly NewLogLine[]): Promise<void> {
    if (!lines.length) return;
    await this.knex.raw(
      `insert into task_logs (task_id, ts, level, source, activity_type, attempt, message, attrs)
       select r.task_id, r.ts, r.level, r.source, r.activity_type, r.attempt, r.message, r.attrs
       from jsonb_to_recordset(?::jsonb) as r(task_id text, ts timestamptz, level text, source text,
            activity_type text, attempt int, message text, attrs jsonb)
       where exists (select 1 from tasks t where t.id = r.task_id)`,
      [JSON.stringify(lines)],
    );
  }

  /**
   * Lines in (ts, id) order strictly after the position `after` (a timestamp in ms and an id),
   * at most `limit`, and stamped no later than `upTo` (ms) when given. Reads only what is asked
   * for: a follower re-reads nothing it has seen.
   */
  async readLogs(
    taskId: string,
    opts: { after?: { ts: number; id: number }; upTo?: number; limit: number; filter?: LogFilter },
  ): Promise<LogRow[]> {
    const q = this.knex<LogRow>('task_logs').where({ task_id: taskId });
    if (opts.upTo !== undefined) q.where('ts', '<', new Date(opts.upTo + 1));
    if (opts.after) {
      // The cursor has millisecond precision; stored timestamps may have microseconds.
      const from = new Date(opts.after.ts);
      const nextMs = new Date(opts.after.ts + 1);
      const afterId = opts.after.id;
      q.where('ts', '>=', from).where((b) => {
        b.where('ts', '>=', nextMs).orWhere('id', '>', afterId);
      });
    }
    applyLogFilter(q, opts.filter);
    const rows = await q.orderByRaw("date_trunc('milliseconds', ts), id").limit(opts.limit);
    return rows.map((r) => ({ ...r, id: Number(r.id) }));
  }

  /** The last `limit` lines matching `filter`, oldest first (a report's excerpt). */
  async tailLogs(taskId: string, limit: number, filter?: LogFilter): Promise<LogRow[]> {
    const q = this.knex<LogRow>('task_logs').where({ task_id: taskId });
    applyLogFilter(q, filter);
    const rows = await q
      .orderBy([
        { column: 'ts', order: 'desc' },
        { column: 'id', order: 'desc' },
      ])
      .limit(limit);
    return rows.reverse().map((r) => ({ ...r, id: Number(r.id) }));
  }

  /** Counts by level and source, and the first and last timestamps: one aggregate query. */
  async logStats(taskId: string) {
    const rows = await this.knex('task_logs')
      .where({ task_id: taskId })
      .groupBy('level', 'source')
      .select('level', 'source')
      .count<{ level: string; source: string; n: string }[]>({ n: '*' })
      .min({ first: 'ts' })
      .max({ last: 'ts' });
    return (rows as unknown as Array<{ level: string; source: string; n: string; first: Date; last: Date }>).map((r) => ({
      level: r.level,
      source: r.source,
      n: Number(r.n),
      first: r.first,
      last: r.last,
    }));
  }
}

function applyLogFilter(q: Knex.QueryBuilder, f?: LogFilter): void {
  if (f?.levels?.length) q.whereIn('level', f.levels as string[]);
  if (f?.sources?.length) q.whereIn('source', f.sources as string[]);
  if (f?.text) q.whereRaw('strpos(lower(message), lower(?)) > 0', [f.text]);
}

const RECONCILE_LOCK = 0x5317_7a5d; // one reconciler at a time across API replicas
