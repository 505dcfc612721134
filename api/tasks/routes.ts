import { PassThrough } from 'node:stream';
import { WorkflowNotFoundError } from '@temporalio/client';
import type { z } from 'zod';
import { detached } from '../../lib/detached.ts';
import type { Context } from 'koa';
import { ANSWER_ITEMS_LIMIT, LIST_ITEMS_LIMIT } from '../../contracts/task-answer.ts';
import { TERMINAL_STATUSES } from '../../contracts/tasks.ts';
import { TooManyRequestsError, ValidationError } from '../../lib/errors.ts';
import type { Principal } from '../auth/principal.ts';
import type { AppContext } from '../context.ts';
import type { CreateTaskRequest } from './service.ts';
import { TASK_KINDS, type TaskKindName } from '../../contracts/task-kinds.ts';
import { defineRoute, type Access, type AnyRoute, type RouteInput } from '../http/routes.ts';
import { decodeCursor, type LogKey, type LogLevel, type LogSource } from './log-entry.ts';
import { itemsSummaryOf } from './items.routes.ts';
import { hidesQueryRows } from './query-rows.ts';
import {
  logPage,
  logQuery,
  logStats,
  selfcheckBody,
  taskAccepted,
  taskIdParams,
  taskList,
  taskListQuery,
  taskView,
  toTaskView,
} from './schemas.ts';

const IDEMPOTENCY_KEY = /^[A-Za-z0-9._:-]{1,200}$/;

/** Writes one server-sent event (with its id, when it has one) to the stream. */
function eventSender(stream: PassThrough): (event: string, data: unknown, id?: string) => boolean {
  return (event, data, id) => stream.write(`${id ? `id: ${id}\n` : ''}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
}

/** A task-creating route's access rule, from the task-kind registry (one place says who may start what). */
export function taskAccess(kind: TaskKindName): Access {
  const needed = TASK_KINDS[kind].permission;
  return needed === 'admin' ? 'admin' : { permission: needed };
}

/**
 * The optional Idempotency-Key header makes a create safe to retry: the same key from the same
 * sender (user, else API key: db/tasks/store.ts idempotencyScope) returns the same task.
 */
export function idempotencyKey(ctx: Context): string | undefined {
  const key = ctx.get('idempotency-key');
  if (!key) return undefined;
  if (!IDEMPOTENCY_KEY.test(key))
    throw new ValidationError('Idempotency-Key must be 1-200 characters of A-Z a-z 0-9 . _ : -', [
      { field: 'header.Idempotency-Key', message: 'invalid' },
    ]);
  return key;
}

/**
 * Creates a task for a request and answers as every task-creating endpoint does: 202 with
 * `{ task_id, status }` and a Location header, or 200 when the Idempotency-Key names an existing task.
 */
export async function acceptTask<K extends TaskKindName>(
  ctx: Context,
  app: AppContext,
  request: Omit<CreateTaskRequest<K>, 'idempotencyKey'>,
): Promise<{ taskId: string; created: boolean }> {
  const { task, created } = await app.tasks.create({ ...request, idempotencyKey: idempotencyKey(ctx) });
  ctx.status = created ? 202 : 200;
  ctx.set('Location', `/api/tasks/${task.id}`);
  ctx.body = { task_id: task.id, status: task.status };
  return { taskId: task.id, created };
}

const MAX_STREAMS_PER_CALLER = 5;
const SESSION_CHECK_MS = 2_000;
/**
 * How far behind now a live stream reads. A worker stamps a log line when it is written but stores
 * it in a later batch (every 200 ms), while Temporal's history events are there at once: a follower
 * that moved its cursor past a fresh history event would never see a line stamped before it and
 * stored after. Lines younger than this are sent on a later tick, in their order.
 */
const LOG_SETTLE_MS = 1_000;

/** Open log streams per caller (user, or API key), so one caller cannot hold unbounded streams open. */
class StreamCounter {
  private readonly counts = new Map<string, number>();

  open(principal: Principal): () => void {
    const key = principal.apiKeyId ? `key:${principal.apiKeyId}` : `user:${principal.userId}`;
    const n = this.counts.get(key) ?? 0;
    if (n >= MAX_STREAMS_PER_CALLER)
      throw new TooManyRequestsError(`At most ${MAX_STREAMS_PER_CALLER} log streams may be open at once; close one first`, 5);
    this.counts.set(key, n + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.counts.get(key) ?? 1) - 1;
      if (left > 0) this.counts.set(key, left);
      else this.counts.delete(key);
    };
  }
}

export function taskRoutes(app: AppContext): AnyRoute[] {
  const streams = new StreamCounter();
  const view = (t: Parameters<typeof toTaskView>[0], itemsLimit?: number) => toTaskView(t, app.tasks.temporalUiUrl(t.id), itemsLimit);

  return [
    defineRoute({
      method: 'get',
      path: '/api/tasks',
      tag: 'Tasks',
      summary: 'List tasks',
      description:
        "Newest first. Callers without `tasks:READ` see only their own tasks. A row carries no items of an item-by-item task's result (`items_omitted: true`, `items_total`, `items_url`): read the task, or page its items.",
      access: 'authenticated',
      query: taskListQuery,
      responses: { 200: { description: 'A page of tasks', schema: taskList } },
      async handler(_ctx, { query, principal }) {
        const page = await app.tasks.list(
          {
            type: query.task_type ?? query.type,
            status: query.status,
            owner: query.owner,
            envId: query.env_id,
            dashboardId: query.dashboard_id,
          },
          query.page,
          query.page_size,
          principal,
        );
        return { ...page, items: page.items.map((t) => view(t, LIST_ITEMS_LIMIT)) };
      },
    }),

    defineRoute({
      method: 'post',
      path: '/api/tasks/selfcheck',
      tag: 'Tasks',
      summary: 'Start a selfcheck task (deployment smoke test)',
      description:
        'Checks the database, Temporal and a polling worker step by step. `sleep_seconds` and `fail` exist for drills: retries, non-retryable failure, cancellation, a killed worker. Send `Idempotency-Key` to make retries safe.',
      access: taskAccess('selfcheck'),
      body: selfcheckBody,
      responses: { 202: { description: 'Task accepted', schema: taskAccepted } },
      async handler(ctx, { body, principal }) {
        await acceptTask(ctx, app, {
          kind: 'selfcheck',
          input: { sleepSeconds: body.sleep_seconds, fail: body.fail, failAttempts: body.fail_attempts },
          params: body,
          owner: principal,
        });
      },
    }),

    defineRoute({
      method: 'get',
      path: '/api/tasks/:task_id',
      tag: 'Tasks',
      summary: 'Get a task',
      description: `The task with its progress, result and \`items_summary\`; an item-by-item task's items are in the result up to ${ANSWER_ITEMS_LIMIT}, beyond that paged from \`GET /api/tasks/{task_id}/items\`. Details: docs/tasks.md#get-apitaskstask_id.`,
      access: 'authenticated',
      params: taskIdParams,
      responses: { 200: { description: 'The task', schema: taskView }, 404: { description: 'Unknown task' } },
      async handler(_ctx, { params, principal }) {
        const task = await app.tasks.getVisible(params.task_id, principal);
        return { ...view(task), items_summary: await itemsSummaryOf(app, task) };
      },
    }),

    defineRoute({
      method: 'post',
      path: '/api/tasks/:task_id/cancel',
      tag: 'Tasks',
      summary: 'Cancel a task',
      description:
        'Requests cancellation; the task reaches CANCELLED once its workflow has stopped. The owner or a holder of `tasks:WRITE` may cancel. 409 when the task already finished.',
      access: 'authenticated',
      params: taskIdParams,
      responses: {
        202: { description: 'Cancellation requested', schema: taskView },
        404: { description: 'Unknown task' },
        409: { description: 'Already finished' },
      },
      async handler(ctx, { params, principal }) {
        ctx.status = 202;
        ctx.body = view(await app.tasks.cancel(params.task_id, principal));
      },
    }),

    defineRoute({
      method: 'get',
      path: '/api/tasks/:task_id/logs',
      tag: 'Tasks',
      summary: "A task's logs",
      description:
        "Lines written by the task's workflow and activities (secrets redacted) merged in time order with its Temporal history (activity attempts, failures, signals, updates, cancellation). Page forward with `after=next_cursor`.",
      access: 'authenticated',
      params: taskIdParams,
      query: logQuery,
      responses: { 200: { description: 'Log entries', schema: logPage }, 404: { description: 'Unknown task' } },
      async handler(_ctx, { params, query, principal }) {
        const task = await app.tasks.getVisible(params.task_id, principal);
        return app.taskLogs.read(params.task_id, {
          // A finished task's history is read anew once (then kept): no stale open-workflow read.
          fresh: TERMINAL_STATUSES.includes(task.status),
          conceal: hidesQueryRows(task, principal),
          limit: query.limit,
          levels: query.level as LogLevel[] | undefined,
          sources: query.source as LogSource[] | undefined,
          text: query.text,
          after: query.after ? decodeCursor(query.after) : undefined,
        });
      },
    }),

    defineRoute({
      method: 'get',
      path: '/api/tasks/:task_id/logs/stats',
      tag: 'Tasks',
      summary: "Statistics of a task's logs",
      access: 'authenticated',
      params: taskIdParams,
      responses: {
        200: { description: 'Counts by level and source, first and last timestamps, duration', schema: logStats },
        404: { description: 'Unknown task' },
      },
      async handler(_ctx, { params, principal }) {
        const task = await app.tasks.getVisible(params.task_id, principal);
        return app.taskLogs.stats(task.id, task);
      },
    }),

    defineRoute({
      method: 'get',
      path: '/api/tasks/:task_id/logs/stream',
      tag: 'Tasks',
      summary: "Follow a task's logs live (server-sent events)",
      description:
        'Server-sent `log`, `status` and `end` events of a task, resumable from `Last-Event-ID` or `after`. Details: docs/tasks.md#get-apitaskstask_idlogsstream.',
      access: 'authenticated',
      params: taskIdParams,
      query: logQuery.pick({ after: true, level: true, source: true }),
      responses: {
        200: { description: 'An event stream', contentType: 'text/event-stream' },
        404: { description: 'Unknown task' },
        429: { description: 'Too many open streams for this caller' },
      },
      handler: (ctx, input) => streamTaskLog(app, streams, ctx, input),
    }),
  ];
}

type LogStreamQuery = Pick<z.output<typeof logQuery>, 'after' | 'level' | 'source'>;

/** Answers with a server-sent event stream of the task's log, written (detached) until the task ends, the session ends or the client goes. */
async function streamTaskLog(
  app: AppContext,
  streams: StreamCounter,
  ctx: Context,
  {
    params,
    query,
    principal,
  }: Pick<RouteInput<z.output<typeof taskIdParams>, LogStreamQuery, undefined>, 'params' | 'query' | 'principal'>,
): Promise<void> {
  const conceal = hidesQueryRows(await app.tasks.getVisible(params.task_id, principal), principal);
  const release = streams.open(principal);
  const resume = ctx.get('last-event-id');
  const after = decodeCursor(resume) ?? (query.after ? decodeCursor(query.after) : undefined);
  const stream = new PassThrough();
  ctx.req.socket.setTimeout(0);
  ctx.set({ 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache', Connection: 'keep-alive', 'X-Accel-Buffering': 'no' });
  ctx.status = 200;
  ctx.body = stream;
  let closed = false;
  ctx.req.on('close', () => {
    closed = true;
    release(); // the place is free as soon as the client goes
  });
  const streaming = followLog(app, { taskId: params.task_id, query, principal, conceal, after, stream, release, isClosed: () => closed });
  detached(`task ${params.task_id}: its log stream`, streaming, app.logger); // the response body, written until the task ends or the client goes
}

/** What one log stream follows, and how it ends. */
interface LogFollow {
  taskId: string;
  query: LogStreamQuery;
  principal: Principal;
  conceal: boolean;
  after: LogKey | undefined;
  stream: PassThrough;
  release: () => void;
  isClosed: () => boolean;
}

/** Sends the task's log lines and status changes until the task has ended and settled, the session ends or the client goes. */
async function followLog(app: AppContext, f: LogFollow): Promise<void> {
  const { principal, query, conceal, stream, release } = f;
  let after = f.after;
  let checkedAt = Date.now();
  const send = eventSender(stream);
  let lastStatus: string | undefined;
  try {
    while (!f.isClosed()) {
      if (Date.now() - checkedAt >= SESSION_CHECK_MS) {
        checkedAt = Date.now();
        if (!(await app.auth.isStillValid(principal))) {
          send('end', { reason: 'session_ended' });
          break;
        }
      }
      const task = await app.tasks.get(f.taskId);
      // Decided before reading, so the read below already holds the final lines.
      const finished = TERMINAL_STATUSES.includes(task.status) && (await workflowClosed(app, task.id));
      // Once the task has been finished for a settle window, every line it will have is stored.
      const now = Date.now();
      const settled = finished && (!task.finished_at || now - task.finished_at.getTime() >= LOG_SETTLE_MS);
      const page = await app.taskLogs.read(task.id, {
        limit: 1000,
        after,
        upTo: settled ? undefined : now - LOG_SETTLE_MS,
        fresh: finished,
        conceal,
        levels: query.level as LogLevel[] | undefined,
        sources: query.source as LogSource[] | undefined,
      });
      for (const item of page.items) send('log', item, item.id);
      if (page.next_cursor) after = decodeCursor(page.next_cursor);
      if (task.status !== lastStatus) send('status', { status: (lastStatus = task.status), progress: task.progress });
      if (settled && !page.has_more) {
        send('end', { status: task.status });
        break;
      }
      await new Promise((r) => setTimeout(r, page.has_more ? 0 : 500));
    }
  } catch (err) {
    app.logger.warn({ err, taskId: f.taskId }, 'log stream ended with an error');
    send('error', { detail: 'log stream interrupted' });
  } finally {
    release();
    stream.end();
  }
}

/** The row can finish a moment before the workflow's close event is in history; wait for it so the stream is complete. */
async function workflowClosed(app: AppContext, id: string): Promise<boolean> {
  try {
    return (await app.temporal.workflow.getHandle(id).describe()).status.name !== 'RUNNING';
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return true; // cancelled before it ever started
    throw err;
  }
}
