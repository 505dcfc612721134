import type { Command } from 'commander';
import { unwrap } from '../api.ts';
import { act, endOf, printTask, type Ctx } from '../context.ts';
import { EXIT } from '../exit-codes.ts';
import { print } from '../output.ts';
import { renderTask, type ItemLike, type TaskLike } from '../render.ts';
import { itemsOf } from '../task-items.ts';
import { exitCodeOf, waitForTask } from '../wait.ts';

interface ReportView {
  status: string;
  task_id: string;
  task_type?: string;
  summary?: { headline?: string };
  params?: unknown;
  result?: unknown;
  items?: ItemLike[];
  next_actions?: TaskLike['next_actions'];
}
import { positiveInt } from './args.ts';

export function taskCommands(program: Command, ctx: () => Ctx): void {
  const tasks = program.command('tasks').description('Tasks: every long or risky operation');
  listCommand(tasks, ctx);
  showCommand(tasks, ctx);
  logsCommand(tasks, ctx);
  cancelCommand(tasks, ctx);
  reportCommand(program, ctx);
}

function listCommand(tasks: Command, ctx: () => Ctx): void {
  tasks
    .command('list')
    .description('Newest first')
    .option('--type <type>', 'task type (migration, backup, drift_report, ...)')
    .option('--status <status>', 'PENDING, RUNNING, SUCCEEDED, FAILED, CANCELLED, AWAITING_APPROVAL')
    .option('--page-size <n>', 'rows', positiveInt, 20)
    .action(
      act(async (opts: { type?: string; status?: string; pageSize: number }) => {
        const c = ctx();
        const query = {
          page_size: opts.pageSize,
          ...(opts.type ? { task_type: opts.type } : {}),
          ...(opts.status ? { status: opts.status } : {}),
        };
        const page = await unwrap(c.api().client.GET('/api/tasks', { params: { query: query as never } }));
        print(c.format, page, { rows: page.items, columns: ['id', 'status', 'summary', 'owner_username', 'created_at'] });
        return EXIT.OK;
      }),
    );
}

function showCommand(tasks: Command, ctx: () => Ctx): void {
  tasks
    .command('show <task>')
    .description('A task with its result; --wait follows it to its end and exits by its outcome')
    .option('--wait', 'follow the task to its end')
    .option('--diff', "a migration's differences, object by object")
    .action(
      act(async (id: string, opts: { wait?: boolean; diff?: boolean }) => {
        const c = ctx();
        const task = opts.wait
          ? await waitForTask(c.api(), id, { quiet: c.quiet })
          : await unwrap(c.api().client.GET('/api/tasks/{task_id}', { params: { path: { task_id: id } } }));
        await printTask(c, task as never, { diff: opts.diff });
        if (!['SUCCEEDED', 'FAILED', 'CANCELLED'].includes(task.status)) return EXIT.OK;
        return endOf(c, task as never);
      }),
    );
}

function logsCommand(tasks: Command, ctx: () => Ctx): void {
  tasks
    .command('logs <task>')
    .description("A task's log (--follow: live until it ends)")
    .option('--follow', 'stream new lines until the task ends')
    .option('--limit <n>', 'lines', positiveInt, 200)
    .action(
      act(async (id: string, opts: { follow?: boolean; limit: number }) => {
        const c = ctx();
        if (opts.follow) {
          const task = await waitForTask(c.api(), id);
          return exitCodeOf(task);
        }
        const page = await unwrap(
          c.api().client.GET('/api/tasks/{task_id}/logs', { params: { path: { task_id: id }, query: { limit: opts.limit } as never } }),
        );
        print(c.format, page, () => page.items.map((l) => `${l.ts} ${l.level.padEnd(5)} ${l.source.padEnd(8)} ${l.message}`).join('\n'));
        return EXIT.OK;
      }),
    );
}

function cancelCommand(tasks: Command, ctx: () => Ctx): void {
  tasks
    .command('cancel <task>')
    .description('Cancel a task (between items: the one in flight finishes)')
    .action(
      act(async (id: string) => {
        const c = ctx();
        const task = await unwrap(c.api().client.POST('/api/tasks/{task_id}/cancel', { params: { path: { task_id: id } } }));
        print(c.format, task, () => `${task.id}  ${task.status}`);
        return EXIT.OK;
      }),
    );
}

/** `switchyard report <task>`: a command of its own, not under `tasks`. */
function reportCommand(program: Command, ctx: () => Ctx): void {
  program
    .command('report <task>')
    .description("A task's report: item by item, with next actions; exits by its outcome")
    .option('--diff', "a migration's differences, object by object")
    .action(
      act(async (id: string, opts: { diff?: boolean }) => {
        const c = ctx();
        const r = await unwrap(c.api().client.GET('/api/reports/{report_id}', { params: { path: { report_id: id } } }));
        const report = (r as { report: ReportView }).report;
        // A large task's report leaves its items out: they are paged from the items endpoint.
        const items = c.format === 'table' ? ((await itemsOf(c.api(), report.task_id, report)) ?? []) : [];
        print(c.format, r, () =>
          renderTask(
            {
              id: report.task_id,
              status: report.status,
              type: report.task_type,
              headline: report.summary?.headline,
              items,
              next_actions: report.next_actions ?? [],
              dryRun: (report.params as { dry_run?: boolean } | null)?.dry_run,
            },
            { diff: opts.diff },
          ),
        );
        if (!['SUCCEEDED', 'FAILED', 'CANCELLED'].includes(report.status)) return EXIT.OK;
        return endOf(c, { id: report.task_id, status: report.status, result: report });
      }),
    );
}
