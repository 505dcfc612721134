import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import proto, { type temporal as TemporalProto } from '@temporalio/proto';

const { temporal } = proto;
import { redactText } from '../../lib/redact.ts';
import { RANK, type LogEntry } from './log-entry.ts';

const T = temporal.api.enums.v1.EventType;
type HistoryEvent = TemporalProto.api.history.v1.IHistoryEvent;

function tsToDate(t: { seconds?: unknown; nanos?: number | null }): Date {
  return new Date(Number(t.seconds ?? 0) * 1000 + Math.floor((t.nanos ?? 0) / 1e6));
}

function failureText(f: TemporalProto.api.failure.v1.IFailure | null | undefined): string {
  const parts: string[] = [];
  for (let c = f; c; c = c.cause) if (c.message) parts.push(c.message);
  return redactText(parts.join(': ') || 'unknown failure');
}

type Add = (level: LogEntry['level'], message: string, extra?: Partial<LogEntry>) => void;
/** Activity types by their scheduled event's id, with when each was scheduled. */
type ScheduledActivities = Map<string, { type: string; scheduledAt?: Date }>;

/** An activity's scheduling, attempts and end; false for any other event. */
function describeActivityEvent(ev: HistoryEvent, ts: Date, activities: ScheduledActivities, add: Add): boolean {
  const actOf = (scheduledId: unknown) => activities.get(String(scheduledId)) ?? { type: 'activity' };
  switch (ev.eventType) {
    case T.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED: {
      const a = ev.activityTaskScheduledEventAttributes!;
      activities.set(String(ev.eventId), { type: a.activityType?.name ?? 'activity', scheduledAt: ts });
      add('DEBUG', `activity ${a.activityType?.name} scheduled`, { activity_type: a.activityType?.name ?? undefined });
      break;
    }
    case T.EVENT_TYPE_ACTIVITY_TASK_STARTED: {
      const a = ev.activityTaskStartedEventAttributes!;
      const act = actOf(a.scheduledEventId);
      const retry = a.lastFailure ? `; previous attempt failed: ${failureText(a.lastFailure)}` : '';
      add(a.attempt && a.attempt > 1 ? 'WARN' : 'DEBUG', `activity ${act.type} started, attempt ${a.attempt} on ${a.identity}${retry}`, {
        activity_type: act.type,
        attempt: a.attempt ?? undefined,
      });
      break;
    }
    case T.EVENT_TYPE_ACTIVITY_TASK_COMPLETED: {
      const act = actOf(ev.activityTaskCompletedEventAttributes!.scheduledEventId);
      const ms = act.scheduledAt ? ts.getTime() - act.scheduledAt.getTime() : undefined;
      add('INFO', `activity ${act.type} completed${ms !== undefined ? ` in ${ms} ms` : ''}`, { activity_type: act.type });
      break;
    }
    case T.EVENT_TYPE_ACTIVITY_TASK_FAILED: {
      const a = ev.activityTaskFailedEventAttributes!;
      const act = actOf(a.scheduledEventId);
      add('ERROR', `activity ${act.type} failed: ${failureText(a.failure)}`, { activity_type: act.type });
      break;
    }
    case T.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT: {
      const a = ev.activityTaskTimedOutEventAttributes!;
      const act = actOf(a.scheduledEventId);
      add('ERROR', `activity ${act.type} timed out: ${failureText(a.failure)}`, { activity_type: act.type });
      break;
    }
    case T.EVENT_TYPE_ACTIVITY_TASK_CANCEL_REQUESTED:
      add('WARN', `activity ${actOf(ev.activityTaskCancelRequestedEventAttributes!.scheduledEventId).type} cancellation requested`);
      break;
    case T.EVENT_TYPE_ACTIVITY_TASK_CANCELED:
      add('WARN', `activity ${actOf(ev.activityTaskCanceledEventAttributes!.scheduledEventId).type} cancelled`);
      break;
    default:
      return false;
  }
  return true;
}

/** The workflow's own events: start, signals, updates, cancellation, failures and its end. */
function describeWorkflowEvent(ev: HistoryEvent, add: Add): void {
  switch (ev.eventType) {
    case T.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED: {
      const a = ev.workflowExecutionStartedEventAttributes!;
      add(
        'INFO',
        `workflow ${a.workflowType?.name} started on task queue ${a.taskQueue?.name}${a.attempt && a.attempt > 1 ? ` (attempt ${a.attempt})` : ''}${
          // A long task continues as new: this history is its latest run; earlier runs' own log lines are kept.
          a.continuedExecutionRunId ? ` as a new run continuing run ${a.continuedExecutionRunId}` : ''
        }`,
      );
      break;
    }
    case T.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED: {
      const a = ev.workflowExecutionSignaledEventAttributes!;
      add('INFO', `signal ${a.signalName} received${a.identity ? ` from ${a.identity}` : ''}`);
      break;
    }
    case T.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED: {
      const a = ev.workflowExecutionUpdateAcceptedEventAttributes!;
      add('INFO', `update ${a.acceptedRequest?.input?.name} accepted`);
      break;
    }
    case T.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED:
      add('INFO', `update completed`);
      break;
    case T.EVENT_TYPE_WORKFLOW_EXECUTION_CANCEL_REQUESTED: {
      const a = ev.workflowExecutionCancelRequestedEventAttributes!;
      add('WARN', `workflow cancellation requested${a.identity ? ` by ${a.identity}` : ''}`);
      break;
    }
    case T.EVENT_TYPE_WORKFLOW_TASK_FAILED: {
      const a = ev.workflowTaskFailedEventAttributes!;
      add('WARN', `workflow task failed (${temporal.api.enums.v1.WorkflowTaskFailedCause[a.cause ?? 0]}): ${failureText(a.failure)}`);
      break;
    }
    case T.EVENT_TYPE_TIMER_STARTED:
      add('DEBUG', `timer started`);
      break;
    case T.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED:
      add('INFO', 'workflow completed');
      break;
    case T.EVENT_TYPE_WORKFLOW_EXECUTION_FAILED:
      add('ERROR', `workflow failed: ${failureText(ev.workflowExecutionFailedEventAttributes!.failure)}`);
      break;
    case T.EVENT_TYPE_WORKFLOW_EXECUTION_CANCELED:
      add('WARN', 'workflow cancelled');
      break;
    case T.EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED: {
      const a = ev.workflowExecutionTerminatedEventAttributes!;
      add('ERROR', `workflow terminated${a.reason ? `: ${redactText(a.reason)}` : ''}${a.identity ? ` by ${a.identity}` : ''}`);
      break;
    }
    case T.EVENT_TYPE_WORKFLOW_EXECUTION_TIMED_OUT:
      add('ERROR', 'workflow timed out');
      break;
    default:
      break; // workflow-task bookkeeping and markers are noise to a reader
  }
}

const CLOSED_EVENTS = [
  T.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED,
  T.EVENT_TYPE_WORKFLOW_EXECUTION_FAILED,
  T.EVENT_TYPE_WORKFLOW_EXECUTION_CANCELED,
  T.EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED,
  T.EVENT_TYPE_WORKFLOW_EXECUTION_TIMED_OUT,
];

/**
 * Turns a workflow's Temporal history into readable log lines: activity attempts and failures,
 * signals, updates, cancellation and the close event. Payloads are never decoded into the log.
 */
export function historyToEntries(events: HistoryEvent[]): LogEntry[] {
  const activities: ScheduledActivities = new Map(); // by scheduled event id
  const out: LogEntry[] = [];
  for (const ev of events) {
    const ts = ev.eventTime ? tsToDate(ev.eventTime) : new Date(0);
    const seq = Number(ev.eventId ?? 0);
    const rank = ev.eventType !== null && ev.eventType !== undefined && CLOSED_EVENTS.includes(ev.eventType) ? RANK.close : RANK.history;
    const add: Add = (level, message, extra = {}) =>
      out.push({ key: { ts: ts.getTime(), rank, seq }, ts: ts.toISOString(), level, source: 'temporal', message, ...extra });
    if (!describeActivityEvent(ev, ts, activities, add)) describeWorkflowEvent(ev, add);
  }
  return out;
}

/**
 * Bounded work per task, however many readers follow it: a closed workflow's history never
 * changes (kept in a bounded cache); an open one is fetched at most once per `openTtlMs`, and
 * concurrent readers share that fetch.
 */
export class HistoryLogReader {
  private readonly closed = new Map<string, LogEntry[]>();
  private readonly open = new Map<string, { at: number; read: Promise<LogEntry[] | undefined> }>();
  private readonly client: Client;
  private readonly openTtlMs: number;

  constructor(client: Client, opts: { openTtlMs?: number } = {}) {
    this.client = client;
    this.openTtlMs = opts.openTtlMs ?? 1000;
  }

  /** undefined when the workflow does not exist (not started yet). `fresh`: no older read of an open workflow. */
  async read(workflowId: string, opts: { fresh?: boolean } = {}): Promise<LogEntry[] | undefined> {
    const cached = this.closed.get(workflowId);
    if (cached) return cached;
    const recent = this.open.get(workflowId);
    if (recent && !opts.fresh && Date.now() - recent.at < this.openTtlMs) return recent.read;
    const read = this.fetch(workflowId);
    if (this.open.size >= 1000) this.open.delete(this.open.keys().next().value!);
    this.open.set(workflowId, { at: Date.now(), read });
    read.catch(() => this.open.delete(workflowId));
    return read;
  }

  private async fetch(workflowId: string): Promise<LogEntry[] | undefined> {
    let history;
    try {
      history = await this.client.workflow.getHandle(workflowId).fetchHistory();
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) return undefined;
      throw err;
    }
    const events = history.events ?? [];
    const entries = historyToEntries(events);
    const last = events.at(-1)?.eventType;
    if (last !== undefined && last !== null && CLOSED_EVENTS.includes(last)) {
      if (this.closed.size >= 500) this.closed.delete(this.closed.keys().next().value!);
      this.closed.set(workflowId, entries);
      this.open.delete(workflowId);
    }
    return entries;
  }
}
