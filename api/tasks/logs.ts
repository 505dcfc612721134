import type { Knex } from 'knex';
import type { Logger } from '../../lib/logger.ts';
import type { HistoryLogReader } from './history-log.ts';
import { compareKeys, encodeCursor, type LogEntry, type LogKey, type LogLevel, type LogSource } from './log-entry.ts';

export interface LogQuery {
  limit: number;
  levels?: LogLevel[];
  sources?: LogSource[];
  text?: string;
  after?: LogKey;
}

interface DbLogRow {
  id: string;
  ts: Date;
  level: LogLevel;
  source: LogSource;
  activity_type: string | null;
  attempt: number | null;
  message: string;
  attrs: Record<string, unknown> | null;
}

/** One time-ordered view of a task's own log lines and its Temporal history. */
export class TaskLogService {
  private readonly knex: Knex;
  private readonly history: HistoryLogReader;
  private readonly logger: Logger;

  constructor(deps: { knex: Knex; history: HistoryLogReader; logger: Logger }) {
    this.knex = deps.knex;
    this.history = deps.history;
    this.logger = deps.logger;
  }

  private async all(taskId: string): Promise<{ entries: LogEntry[]; history: 'ok' | 'not_started' | 'unavailable' }> {
    const rows: DbLogRow[] = await this.knex('task_logs')
      .where({ task_id: taskId })
      .orderBy([{ column: 'ts' }, { column: 'id' }]);
    const own: LogEntry[] = rows.map((r) => ({
      key: { ts: r.ts.getTime(), rank: 1, seq: Number(r.id) },
      ts: r.ts.toISOString(),
      level: r.level,
      source: r.source,
      message: r.message,
      ...(r.activity_type ? { activity_type: r.activity_type } : {}),
      ...(r.attempt ? { attempt: r.attempt } : {}),
      ...(r.attrs ? { attrs: r.attrs } : {}),
    }));
    let hist: LogEntry[] = [];
    let history: 'ok' | 'not_started' | 'unavailable' = 'ok';
    try {
      const h = await this.history.read(taskId);
      if (h) hist = h;
      else history = 'not_started';
    } catch (err) {
      history = 'unavailable';
      this.logger.warn({ err, taskId }, 'task history unavailable; serving stored log lines only');
    }
    return { entries: [...hist, ...own].sort((a, b) => compareKeys(a.key, b.key)), history };
  }

  async read(taskId: string, q: LogQuery) {
    const { entries, history } = await this.all(taskId);
    const text = q.text?.toLowerCase();
    const matching = entries.filter(
      (e) =>
        (!q.after || compareKeys(e.key, q.after) > 0) &&
        (!q.levels || q.levels.includes(e.level)) &&
        (!q.sources || q.sources.includes(e.source)) &&
        (!text || e.message.toLowerCase().includes(text)),
    );
    const page = matching.slice(0, q.limit);
    const last = page.at(-1);
    return {
      items: page.map(({ key, ...rest }) => ({ id: encodeCursor(key), ...rest })),
      next_cursor: last ? encodeCursor(last.key) : q.after ? encodeCursor(q.after) : null,
      has_more: matching.length > page.length,
      history,
    };
  }

  async stats(taskId: string, task: { started_at: Date | null; finished_at: Date | null; created_at: Date }) {
    const { entries, history } = await this.all(taskId);
    const by_level: Record<string, number> = { DEBUG: 0, INFO: 0, WARN: 0, ERROR: 0 };
    const by_source: Record<string, number> = { api: 0, workflow: 0, activity: 0, temporal: 0 };
    for (const e of entries) {
      by_level[e.level] = (by_level[e.level] ?? 0) + 1;
      by_source[e.source] = (by_source[e.source] ?? 0) + 1;
    }
    const first = entries[0]?.ts ?? null;
    const lastTs = entries.at(-1)?.ts ?? null;
    const start = task.started_at ?? task.created_at;
    const end = task.finished_at;
    return {
      total: entries.length,
      by_level,
      by_source,
      first_at: first,
      last_at: lastTs,
      duration_ms: end ? end.getTime() - start.getTime() : null,
      log_span_ms: first && lastTs ? Date.parse(lastTs) - Date.parse(first) : 0,
      history,
    };
  }
}
