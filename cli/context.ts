import { connect, type Api } from './api.ts';
import { resolveConnection } from './config.ts';
import { EXIT, type ExitCode } from './exit-codes.ts';
import { print, say, type OutputFormat } from './output.ts';
import { renderTask, type TaskLike } from './render.ts';
import { itemsOf } from './task-items.ts';
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

type TaskView = {
  id: string;
  status: string;
  type?: string;
  summary?: string | null;
  result?: unknown;
  error?: unknown;
  items_summary?: unknown;
};

/**
 * A task for a person: headline, item table (with object counts), next actions with commands; --diff
 * adds differences. A large task's answer leaves its items out: the table pages them (cli/task-items.ts).
 */
export async function printTask(ctx: Ctx, task: TaskView, opts: { diff?: boolean } = {}): Promise<void> {
  const result = (task.result ?? {}) as { next_actions?: TaskLike['next_actions']; dry_run?: boolean };
  const items = ctx.format === 'table' ? await itemsOf(ctx.api(), task.id, task.result) : undefined;
  print(ctx.format, task, () =>
    renderTask(
      {
        id: task.id,
        status: task.status,
        type: task.type,
        summary: task.summary,
        items: items ?? [],
        next_actions: result.next_actions ?? [],
        dryRun: result.dry_run,
      },
      opts,
    ),
  );
}

/** A finished task's exit code; on failure what failed (its failed items, paged when left out) and what to do next, on stderr. */
export async function endOf(ctx: Ctx, task: TaskView): Promise<ExitCode> {
  const code = exitCodeOf(task);
  if (code !== EXIT.OK) printNextActions(task, (await itemsOf(ctx.api(), task.id, task.result, 'failed')) ?? []);
  return code;
}

/**
 * A command that started a task: without --wait prints `{task_id, status}` and exits 0; with
 * --wait follows it, prints the finished task and exits by its outcome (next actions on failure).
 */
export async function followTask(
  ctx: Ctx,
  accepted: { task_id: string; status?: string },
  wait: boolean | undefined,
  opts: { diff?: boolean } = {},
): Promise<ExitCode> {
  if (!wait) {
    print(
      ctx.format,
      accepted,
      () => `task ${accepted.task_id} ${accepted.status ?? 'started'}\nnext: switchyard tasks show ${accepted.task_id} --wait`,
    );
    return EXIT.OK;
  }
  if (!ctx.quiet) say(`task ${accepted.task_id} started; following its log`);
  const task = (await waitForTask(ctx.api(), accepted.task_id, { quiet: ctx.quiet })) as TaskView;
  await printTask(ctx, task, opts);
  return endOf(ctx, task);
}

/** Runs a command's body and sets the process's exit code from it; failures are handled by main. */
export const act =
  <A extends unknown[]>(fn: (...args: A) => Promise<number>) =>
  async (...args: A): Promise<void> => {
    process.exitCode = await fn(...args);
  };
