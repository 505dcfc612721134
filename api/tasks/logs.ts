import { TERMINAL_STATUSES } from '../../contracts/tasks.ts';
import type { LogRow, TaskStore } from '../../db/tasks/store.ts';
import type { Logger } from '../../lib/logger.ts';
import type { HistoryLogReader } from './history-log.ts';
import { compareKeys, encodeCursor, LOG_LEVELS, RANK, type LogEntry, type LogKey, type LogLevel, type LogSource } from './log-entry.ts';
import { concealLogLine } from './query-rows.ts';

export interface LogQuery {
  limit: number;
  levels?: LogLevel[];
  sources?: LogSource[];
  text?: string;
  after?: LogKey;
  /** Only entries stamped at or before this time (ms): a live follower's settled past. */
  upTo?: number;
  /** Read the Temporal history anew (a follower that saw the workflow close wants its last events). */
  fresh?: boolean;
  /** Hide the text of lines that may quote a caller's query rows (query-rows.ts); a text search skips them. */
  conceal?: boolean;
}

type HistoryState = 'ok' | 'not_started' | 'unavailable';

/**
 * One time-ordered view of a task's own log lines (the task store) and its Temporal history.
 * Reads are incremental: stored lines are read from the cursor on, at most one page; the
 * history comes from a reader that caches closed workflows and coalesces reads of open ones.
 */
export class TaskLogService {
  private readonly store: TaskStore;
  private readonly history: HistoryLogReader;
  private readonly logger: Logger;

  constructor(deps: { store: TaskStore; history: HistoryLogReader; logger: Logger }) {
    this.store = deps.store;
    this.history = deps.history;
    this.logger = deps.logger;
  }

  private async historyOf(taskId: string, fresh = false): Promise<{ entries: LogEntry[]; history: HistoryState }> {
    try {
      const h = await this.history.read(taskId, { fresh });
      return h ? { entries: h, history: 'ok' } : { entries: [], history: 'not_started' };
    } catch (err) {
      this.logger.warn({ err, taskId }, 'task history unavailable; serving stored log lines only');
      return { entries: [], history: 'unavailable' };
    }
  }

  async read(taskId: string, q: LogQuery) {
    const text = q.text?.toLowerCase();
    // A concealed line must not be found by its hidden text: a text search reads only the lines shown whole.
    const levels = q.conceal && text ? (q.levels ?? LOG_LEVELS).filter((l) => l !== 'WARN' && l !== 'ERROR') : q.levels;
    if (levels && levels.length === 0) {
      return {
        items: [],
        next_cursor: q.after ? encodeCursor(q.after) : null,
        has_more: false,
        history: (await this.historyOf(taskId, q.fresh)).history,
      };
    }
    const [rows, hist] = await Promise.all([
      this.store.readLogs(taskId, {
        after: q.after ? storedAfter(q.after) : undefined,
        upTo: q.upTo,
        limit: q.limit + 1,
        filter: { levels, sources: q.sources, text: q.text },
      }),
      this.historyOf(taskId, q.fresh),
    ]);
    const fromHistory = hist.entries.filter(
      (e) =>
        (!q.after || compareKeys(e.key, q.after) > 0) &&
        (q.upTo === undefined || e.key.ts <= q.upTo) &&
        (!levels || levels.includes(e.level)) &&
        (!q.sources || q.sources.includes(e.source)) &&
        (!text || e.message.toLowerCase().includes(text)),
    );
    // Both lists are sorted by key: the first `limit` of their merge is the page.
    const merged = [...fromHistory.slice(0, q.limit + 1), ...rows.map(entryOf)]
      .sort((a, b) => compareKeys(a.key, b.key))
      .map((e) => (q.conceal ? concealLogLine(e) : e));
    const page = merged.slice(0, q.limit);
    const last = page.at(-1);
    return {
      items: page.map(({ key, ...rest }) => ({ id: encodeCursor(key), ...rest })),
      next_cursor: last ? encodeCursor(last.key) : q.after ? encodeCursor(q.after) : null,
      has_more: merged.length > page.length,
      history: hist.history,
    };
  }

  /** The last warnings and errors the task logged, oldest first. */
  lastProblems(taskId: string, limit: number): Promise<LogRow[]> {
    return this.store.tailLogs(taskId, limit, { levels: ['WARN', 'ERROR'] });
  }

  async stats(taskId: string, task: { status: string; started_at: Date | null; finished_at: Date | null; created_at: Date }) {
    const finished = (TERMINAL_STATUSES as readonly string[]).includes(task.status);
    const [groups, hist] = await Promise.all([this.store.logStats(taskId), this.historyOf(taskId, finished)]);
    const by_level: Record<string, number> = { DEBUG: 0, INFO: 0, WARN: 0, ERROR: 0 };
    const by_source: Record<string, number> = { api: 0, workflow: 0, activity: 0, temporal: 0 };
    let first: number | null = null;
    let lastTs: number | null = null;
    const seen = (ts: number) => {
      first = first === null ? ts : Math.min(first, ts);
      lastTs = lastTs === null ? ts : Math.max(lastTs, ts);
    };
    let total = 0;
    for (const g of groups) {
      by_level[g.level] = (by_level[g.level] ?? 0) + g.n;
      by_source[g.source] = (by_source[g.source] ?? 0) + g.n;
      total += g.n;
      seen(new Date(g.first).getTime());
      seen(new Date(g.last).getTime());
    }
    for (const e of hist.entries) {
      by_level[e.level] = (by_level[e.level] ?? 0) + 1;
      by_source[e.source] = (by_source[e.source] ?? 0) + 1;
      total++;
      seen(e.key.ts);
    }
    const start = task.started_at ?? task.created_at;
    const end = task.finished_at;
    const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
    return {
      total,
      by_level,
      by_source,
      first_at: iso(first),
      last_at: iso(lastTs),
      duration_ms: end ? end.getTime() - start.getTime() : null,
      log_span_ms: first !== null && lastTs !== null ? lastTs - first : 0,
      history: hist.history,
    };
  }
}

/**
 * The stored lines after a cursor (log-entry.ts, RANK): after a history event, every line of its
 * millisecond; after a stored line, the later ones of its millisecond; after a close event, none of it.
 */
function storedAfter(k: LogKey): { ts: number; id: number } {
  if (k.rank === RANK.close) return { ts: k.ts + 1, id: 0 };
  return { ts: k.ts, id: k.rank === RANK.stored ? k.seq : 0 };
}

function entryOf(r: LogRow): LogEntry {
  return {
    key: { ts: r.ts.getTime(), rank: RANK.stored, seq: r.id },
    ts: r.ts.toISOString(),
    level: r.level,
    source: r.source,
    message: r.message,
    ...(r.activity_type ? { activity_type: r.activity_type } : {}),
    ...(r.attempt ? { attempt: r.attempt } : {}),
    ...(r.attrs ? { attrs: r.attrs } : {}),
  };
}
