import type { LogLevel, LogMetadata, Logger as TemporalLogger } from '@temporalio/common';
import { detached } from '../lib/detached.ts';
import type { NewLogLine, TaskStore } from '../db/tasks/store.ts';
import type { Logger } from '../lib/logger.ts';
import { redact, redactText } from '../lib/redact.ts';

type Row = NewLogLine;

const RANK: Record<LogLevel, number> = { TRACE: 0, DEBUG: 1, INFO: 2, WARN: 3, ERROR: 4 };
// Correlation keys the SDK adds to every line; the row's own columns already say them.
const NOISE = new Set([
  'workflowId',
  'workflowRunId',
  'runId',
  'namespace',
  'taskQueue',
  'workflowType',
  'activityId',
  'activityType',
  'attempt',
  'sdkComponent',
  'taskToken',
  'isLocal',
]);

/**
 * The Temporal Runtime logger: forwards every line to the process log and captures lines that
 * belong to a workflow (task id = workflow id) into the task store. The SDK calls it synchronously,
 * so rows are buffered and written in batches; logs are best-effort by design, durable facts
 * live in the task row and in Temporal's history.
 */
export class TaskLogSink implements TemporalLogger {
  private buffer: Row[] = [];
  private store?: TaskStore;
  private timer?: NodeJS.Timeout;
  private flushing?: Promise<void>;
  /** Lines taken into the buffer, and lines written (or dropped) since: flush() waits for the difference. */
  private logged = 0;
  private handled = 0;
  private readonly logger: Logger;

  constructor(logger: Logger) {
    this.logger = logger;
  }

  /** The live log stream reads 1 s behind now (api/tasks/routes.ts, LOG_SETTLE_MS): keep the interval well under it. */
  attach(store: TaskStore, flushEveryMs = 200): void {
    this.store = store;
    if (this.timer) clearInterval(this.timer);
    // Detached: a timer's flush; a failed one is logged and its lines stay buffered for the next.
    this.timer = setInterval(() => {
      detached('flushing task logs', this.flush(), this.logger);
    }, flushEveryMs);
    this.timer.unref();
  }

  log(level: LogLevel, message: string, meta?: LogMetadata): void {
    const pinoLevel = level === 'TRACE' ? 'trace' : (level.toLowerCase() as 'debug' | 'info' | 'warn' | 'error');
    const taskId = meta?.workflowId;
    // The task's id under the name every other line of the task uses (the workflow id is the task id).
    this.logger[pinoLevel](typeof taskId === 'string' ? { taskId, ...meta } : (meta ?? {}), message);
    if (typeof taskId !== 'string' || RANK[level] < RANK.INFO) return;
    const attrs: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(meta ?? {})) if (!NOISE.has(k)) attrs[k] = v;
    this.logged++;
    this.buffer.push({
      task_id: taskId,
      ts: new Date().toISOString(),
      level: level as Row['level'],
      source: meta?.sdkComponent === 'activity' || meta?.activityType ? 'activity' : 'workflow',
      activity_type: typeof meta?.activityType === 'string' ? meta.activityType : null,
      attempt: typeof meta?.attempt === 'number' ? meta.attempt : null,
      message: redactText(message),
      attrs: Object.keys(attrs).length ? redact(jsonSafe(attrs)) : null,
    });
  }

  trace(message: string, meta?: LogMetadata) {
    this.log('TRACE', message, meta);
  }
  debug(message: string, meta?: LogMetadata) {
    this.log('DEBUG', message, meta);
  }
  info(message: string, meta?: LogMetadata) {
    this.log('INFO', message, meta);
  }
  warn(message: string, meta?: LogMetadata) {
    this.log('WARN', message, meta);
  }
  error(message: string, meta?: LogMetadata) {
    this.log('ERROR', message, meta);
  }

  /**
   * Resolves once every line logged before the call is stored (or given up on: logs are
   * best-effort). One batch is written at a time; callers meanwhile wait for the batches that
   * hold their lines.
   */
  async flush(): Promise<void> {
    const upTo = this.logged;
    while (this.store && this.handled < upTo) {
      this.flushing ??= this.writeBatch();
      await this.flushing;
    }
  }

  private async writeBatch(): Promise<void> {
    const rows = this.buffer.splice(0, 1000);
    try {
      await this.store!.appendLogs(rows);
    } catch (err) {
      this.logger.warn({ err }, `could not store ${rows.length} task log lines`);
    } finally {
      this.handled += rows.length;
      this.flushing = undefined;
    }
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.flush();
  }
}

function jsonSafe(value: Record<string, unknown>): Record<string, unknown> {
  try {
    return JSON.parse(
      JSON.stringify(value, (_k, v) => (v instanceof Error ? { name: v.name, message: v.message } : typeof v === 'bigint' ? String(v) : v)),
    );
  } catch {
    return {};
  }
}
