import { connect, type Api } from './api.ts';
import { resolveConnection } from './config.ts';
import { EXIT, type ExitCode } from './exit-codes.ts';
import { print, say, type OutputFormat } from './output.ts';
import { exitCodeOf, printNextActions, waitForTask } from './wait.ts';

/** What every command gets: the chosen output format and the API (connected on first use). */
export interface Ctx {
  format: OutputFormat;
  quiet: boolean;
  api(): Api;
}

export function createCtx(opts: { output: OutputFormat; quiet?: boolean }): Ctx {
  let api: Api | undefined;
  return {
    format: opts.output,
    quiet: !!opts.quiet,
    api: () => (api ??= connect(resolveConnection())),
  };
}

type TaskView = { id: string; status: string; type?: string; summary?: string | null; result?: unknown; error?: unknown };

/** A task as a table: its line, then its items. */
export function printTask(ctx: Ctx, task: TaskView): void {
  const items = ((task.result as { items?: Array<Record<string, unknown>> } | null)?.items ?? []).map((i) => ({ ...i }));
  print(ctx.format, task, () =>
    [
      `${task.id}  ${task.status}${task.summary ? `  ${task.summary}` : ''}`,
      ...items.map(
        (i) => `  ${String(i.outcome === 'failed' ? '✗' : '✓')} ${String(i.id)}  ${String(i.title ?? '')}  ${String(i.status)}${i.error ? `  ${String(i.error)}` : ''}`,
      ),
    ].join('\n'),
  );
}

/**
 * A command that started a task: without --wait prints `{task_id, status}` and exits 0; with
 * --wait follows it, prints the finished task and exits by its outcome (next actions on failure).
 */
export async function followTask(ctx: Ctx, accepted: { task_id: string; status?: string }, wait: boolean | undefined): Promise<ExitCode> {
  if (!wait) {
    print(ctx.format, accepted);
    return EXIT.OK;
  }
  if (!ctx.quiet) say(`task ${accepted.task_id} started; following its log`);
  const task = await waitForTask(ctx.api(), accepted.task_id, { quiet: ctx.quiet });
  printTask(ctx, task as TaskView);
  const code = exitCodeOf(task);
  if (code !== EXIT.OK) printNextActions(task as TaskView);
  return code;
}

/** Runs a command's body and sets the process's exit code from it; failures are handled by main. */
export const act =
  <A extends unknown[]>(fn: (...args: A) => Promise<number>) =>
  async (...args: A): Promise<void> => {
    process.exitCode = await fn(...args);
  };
