import type { Command } from 'commander';
import { envId, unwrap } from '../api.ts';
import { act, followTask, type Ctx } from '../context.ts';
import { EXIT } from '../exit-codes.ts';
import { print } from '../output.ts';
import { companionMode, dbMapping, idList, positiveInt } from './args.ts';

interface MigrateOptions {
  from: string;
  to: string;
  dashboards: number[];
  map?: Array<{ source_database_id: number; target_database_id: number }>;
  overwrite: boolean;
  dryRun?: boolean;
  companion?: Record<string, string>;
  pauseReports: boolean;
  wait?: boolean;
}

export function dashboardCommands(program: Command, ctx: () => Ctx): void {
  const dashboards = program.command('dashboards').description('Dashboards of an environment');
  dashboards
    .command('list')
    .description('List dashboards')
    .requiredOption('--env <env>', 'environment id or name')
    .option('--search <text>', 'title or slug contains')
    .option('--page-size <n>', 'rows per page', positiveInt, 100)
    .action(
      act(async (opts: { env: string; search?: string; pageSize: number }) => {
        const c = ctx();
        const env_id = await envId(c.api(), opts.env);
        const page = await unwrap(
          c.api().client.GET('/api/dashboards', { params: { query: { env_id, page_size: opts.pageSize, ...(opts.search ? { search: opts.search } : {}) } as never } }),
        );
        print(c.format, page, { rows: page.items, columns: ['id', 'title', 'slug', 'status', 'changed_on'] });
        return EXIT.OK;
      }),
    );
  dashboards
    .command('show <id>')
    .description('One dashboard')
    .requiredOption('--env <env>', 'environment id or name')
    .action(
      act(async (id: string, opts: { env: string }) => {
        const c = ctx();
        const env_id = await envId(c.api(), opts.env);
        const d = await unwrap(c.api().client.GET('/api/dashboards/{id}', { params: { path: { id: String(positiveInt(id)) } as never, query: { env_id } } }));
        print(c.format, d);
        return EXIT.OK;
      }),
    );

  program
    .command('migrate')
    .description('Migrate dashboards between environments (a task); exit 2 when some dashboards failed')
    .requiredOption('--from <env>', 'source environment id or name')
    .requiredOption('--to <env>', 'target environment id or name')
    .requiredOption('--dashboards <ids>', 'source dashboard ids, comma-separated', idList)
    .option('--map <src:tgt>', 'database mapping for this run (repeatable)', dbMapping)
    .option('--no-overwrite', 'leave dashboards that already exist in the target alone')
    .option('--dry-run', 'plan only: report what would change, write nothing')
    .option('--companion <kind=mode>', 'what a companion kind gets: copy, strict or ignore (repeatable; e.g. roles=copy)', companionMode)
    .option('--no-pause-reports', 'copied alerts and reports start active in the target (by default they start paused)')
    .option('--wait', 'follow the task to its end; exit by its outcome')
    .action(
      act(async (opts: MigrateOptions) => {
        const c = ctx();
        const body = {
          source_env_id: await envId(c.api(), opts.from),
          target_env_id: await envId(c.api(), opts.to),
          dashboard_ids: opts.dashboards,
          db_mappings: opts.map ?? [],
          overwrite: opts.overwrite,
          dry_run: !!opts.dryRun,
          ...(opts.companion || !opts.pauseReports ? { companions: { ...opts.companion, ...(opts.pauseReports ? {} : { pause_reports: false }) } } : {}),
        };
        const accepted = await unwrap(c.api().client.POST('/api/dashboards/migrate', { body: body as never }));
        return followTask(c, accepted as { task_id: string }, opts.wait);
      }),
    );

  program
    .command('backup')
    .description('Back up dashboards into the backup store (a task)')
    .requiredOption('--env <env>', 'environment id or name')
    .requiredOption('--dashboards <ids>', 'dashboard ids, comma-separated', idList)
    .option('--wait', 'follow the task to its end; exit by its outcome')
    .action(
      act(async (opts: { env: string; dashboards: number[]; wait?: boolean }) => {
        const c = ctx();
        const body = { env_id: await envId(c.api(), opts.env), dashboard_ids: opts.dashboards };
        const accepted = await unwrap(c.api().client.POST('/api/dashboards/backup', { body }));
        return followTask(c, accepted as { task_id: string }, opts.wait);
      }),
    );

  program
    .command('restore <backup_id>')
    .description('Restore a backup into the environment it was taken from (a task)')
    .option('--wait', 'follow the task to its end; exit by its outcome')
    .action(
      act(async (backupId: string, opts: { wait?: boolean }) => {
        const c = ctx();
        const accepted = await unwrap(
          c.api().client.POST('/api/dashboards/backups/{backup_id}/restore', { params: { path: { backup_id: backupId } }, body: {} }),
        );
        return followTask(c, accepted as { task_id: string }, opts.wait);
      }),
    );
}
