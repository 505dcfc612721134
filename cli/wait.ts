import { parseProgressLogLine } from '../contracts/tasks.ts';
import type { Api } from './api.ts';
import { unwrap } from './api.ts';
import { EXIT, type ExitCode } from './exit-codes.ts';
import { say } from './output.ts';
import { failedOf } from './task-items.ts';

const TERMINAL = ['SUCCEEDED', 'FAILED', 'CANCELLED'];

interface LogLine {
  ts?: string;
  level?: string;
  message?: string;
}

/** A progress bar on one terminal line, redrawn in place. */
function progressLine(done: number, total: number, message: string): string {
  const width = 24;
  const filled = total > 0 ? Math.round((done / total) * width) : 0;
  const text = `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${done}/${total} ${message}`;
  const cols = process.stderr.columns ?? 100;
  return text.length > cols - 1 ? text.slice(0, cols - 1) : text;
}

/**
 * Follows a task's live log stream to its end: on a terminal a progress bar fed by its progress
 * lines, otherwise its log lines as they come (stderr). Falls back to polling when the stream is
 * refused or breaks. Returns the finished task.
 */
export async function waitForTask(api: Api, taskId: string, opts: { quiet?: boolean } = {}) {
  const tty = !!process.stderr.isTTY && !opts.quiet;
  const show = (line: LogLine) => {
    if (opts.quiet || !line.message) return;
    const p = parseProgressLogLine(line.message);
    if (tty) {
      if (p) process.stderr.write(`\r\x1b[2K${progressLine(p.done, p.total, p.message ?? '')}`);
      else if (line.level === 'ERROR' || line.level === 'WARN') process.stderr.write(`\r\x1b[2K${line.level} ${line.message}\n`);
    } else {
      say(`${line.ts ?? ''} ${line.level ?? ''} ${line.message}`.trim());
    }
  };
  try {
    const { data, response } = await api.client.GET('/api/tasks/{task_id}/logs/stream', {
      params: { path: { task_id: taskId } },
      parseAs: 'stream',
    });
    if (response.ok && data)
      await readEvents(data as ReadableStream<Uint8Array>, (event, payload) => {
        if (event === 'log') show(payload as LogLine);
        if (event === 'status' && (payload as { status?: string }).status === 'AWAITING_APPROVAL' && !opts.quiet)
          process.stderr.write(
            `${tty ? '\r\x1b[2K' : ''}task ${taskId} waits for approval (POST /api/tasks/${taskId}/approve by a release manager)\n`,
          );
        return event === 'end';
      });
  } catch {
    // The stream broke (a proxy, a restart): the row still tells how it ends.
  }
  if (tty) process.stderr.write('\r\x1b[2K');
  for (;;) {
    const task = await unwrap(api.client.GET('/api/tasks/{task_id}', { params: { path: { task_id: taskId } } }));
    if (TERMINAL.includes(task.status)) return task;
    await new Promise((r) => setTimeout(r, 1000));
  }
}

/** Server-sent events: calls `on(event, data)` per event until it returns true or the stream ends. */
async function readEvents(stream: ReadableStream<Uint8Array>, on: (event: string, data: unknown) => boolean): Promise<void> {
  const decoder = new TextDecoder();
  const reader = stream.getReader();
  let buffer = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true });
      let cut: number;
      while ((cut = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        let event = 'message';
        const data: string[] = [];
        for (const line of block.split('\n')) {
          if (line.startsWith('event:')) event = line.slice(6).trim();
          else if (line.startsWith('data:')) data.push(line.slice(5).trimStart());
        }
        let payload: unknown = data.join('\n');
        try {
          payload = JSON.parse(payload as string);
        } catch {
          // not JSON: keep the text
        }
        if (on(event, payload)) return;
      }
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}

interface ItemLike {
  id?: unknown;
  title?: string | null;
  outcome?: string;
  error?: string;
  step?: string;
  upstream_error?: { message?: string };
  next_actions?: Array<{ action: string; description: string; request?: { method: string; path: string; body: unknown } }>;
}

/**
 * 0 when the task succeeded with no failed item; 2 when some items failed and others did not;
 * 1 otherwise (the task failed, or every item did). A large task's answer leaves its items out:
 * its counts say it (cli/task-items.ts failedOf).
 */
export function exitCodeOf(task: { status: string; result?: unknown; items_summary?: unknown }): ExitCode {
  const counts = failedOf(task);
  const failed = counts?.failed ?? 0;
  if (task.status === 'SUCCEEDED' && failed === 0) return EXIT.OK;
  if (counts && failed > 0 && failed < counts.total) return EXIT.PARTIAL;
  return EXIT.FAILURE;
}

/** What failed and what to do next, from the task's report (stderr): `failed`, its failed items, paged when its answer left them out. */
export function printNextActions(
  task: { id?: string; status: string; error?: unknown; result?: unknown },
  failed: readonly object[] = [],
): void {
  const result = (task.result ?? {}) as { next_actions?: ItemLike['next_actions'] };
  const err = task.error as { message?: string } | null | undefined;
  say(`task ${task.id ?? ''} ended ${task.status}${err?.message ? `: ${err.message}` : ''}`);
  for (const item of failed as ItemLike[]) {
    if (item.outcome !== 'failed') continue;
    say(`  ✗ ${String(item.id)}${item.title ? ` '${item.title}'` : ''}${item.step ? ` at ${item.step}` : ''}: ${item.error ?? 'failed'}`);
    if (item.upstream_error?.message) say(`    Superset said: ${item.upstream_error.message}`);
    for (const a of item.next_actions ?? [])
      say(`    next: ${a.description}${a.request ? ` (${a.request.method} ${a.request.path})` : ''}`);
  }
  for (const a of result.next_actions ?? [])
    say(`next: ${a.description}${a.request ? `\n  ${a.request.method} ${a.request.path} ${JSON.stringify(a.request.body)}` : ''}`);
}
