export type LogLevel = 'DEBUG' | 'INFO' | 'WARN' | 'ERROR';
export const LOG_LEVELS: LogLevel[] = ['DEBUG', 'INFO', 'WARN', 'ERROR'];
export const LOG_SOURCES = ['api', 'workflow', 'activity', 'temporal'] as const;
export type LogSource = (typeof LOG_SOURCES)[number];

/**
 * Within one millisecond (both sources are stamped to the millisecond, so ties are common on a
 * fast machine and a loaded one alike): Temporal's events come before the task's own lines (an
 * activity's start before what it logs), and the workflow's close event comes after them, since
 * everything the workflow logged happened before it closed (its last line, say "task succeeded",
 * is logged before the worker reports the workflow done). One rule, so the order never depends on timing.
 */
export const RANK = { history: 0, stored: 1, close: 2 } as const;

/** Sort key across both sources: time, then RANK, then sequence. */
export interface LogKey {
  ts: number;
  rank: number;
  seq: number;
}

export interface LogEntry {
  key: LogKey;
  ts: string;
  level: LogLevel;
  source: LogSource;
  message: string;
  activity_type?: string;
  attempt?: number;
  attrs?: Record<string, unknown>;
}

export function encodeCursor(k: LogKey): string {
  return `${k.ts}.${k.rank}.${k.seq}`;
}

export function decodeCursor(s: string): LogKey | undefined {
  const m = /^(\d{1,16})\.(\d)\.(\d{1,19})$/.exec(s);
  return m ? { ts: Number(m[1]), rank: Number(m[2]), seq: Number(m[3]) } : undefined;
}

export function compareKeys(a: LogKey, b: LogKey): number {
  return a.ts - b.ts || a.rank - b.rank || a.seq - b.seq;
}
