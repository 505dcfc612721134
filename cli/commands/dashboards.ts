import type { Command } from 'commander';
import { envId, unwrap } from '../api.ts';
import { act, followTask, type Ctx } from '../context.ts';
import { EXIT } from '../exit-codes.ts';
import { print } from '../output.ts';
import { addRequestOptions, bodyFrom, requestSchema } from '../request-options.ts';
import { selectDashboards, type Selection } from '../selection.ts';
import { collect, companionMode, dbMapping, idList, positiveInt } from './args.ts';

/** Request properties the hand-made flags above cover; every other one is generated. */
const HAND_MADE = ['source_env_id', 'target_env_id', 'dashboard_ids', 'db_mappings', 'overwrite', 'dry_run'];

interface MigrateOptions extends Selection {
  from: string;
  to: string;
  map?: Array<{ source_database_id: number; target_database_id: number }>;
  overwrite: boolean;
  dryRun?: boolean;
  companion?: Record<string, string>;
  pauseReports: boolean;
  embeddedAnyDomain?: boolean;
  wait?: boolean;
  diff?: boolean;
}

export function dashboardCommands(program: Command, ctx: () => Ctx): void {
  const dashboards = program.command('dashboards').description('Dashboards of an environment');
  listAndShowCommands(dashboards, ctx);
  migrateCommand(program, ctx);
  backupAndRestoreCommands(program, ctx);
}

function listAndShowCommands(dashboards: Command, ctx: () => Ctx): void {
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
          c.api().client.GET('/api/dashboards', {
            params: { query: { env_id, page_size: opts.pageSize, ...(opts.search ? { search: opts.search } : {}) } as never },
          }),
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
        const d = await unwrap(
          c.api().client.GET('/api/dashboards/{id}', { params: { path: { id: String(positiveInt(id)) } as never, query: { env_id } } }),
        );
        print(c.format, d);
        return EXIT.OK;
      }),
    );
}

function backupAndRestoreCommands(program: Command, ctx: () => Ctx): void {
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

/** `migrate`: the hand-made flags, then every other option of the migration request from the OpenAPI document. */
function migrateCommand(program: Command, ctx: () => Ctx): void {
  const migrate = program
    .command('migrate')
    .description('Migrate dashboards between environments (a task); exit 2 when some dashboards failed')
    .requiredOption('--from <env>', 'source environment id or name')
    .requiredOption('--to <env>', 'target environment id or name')
    .option('--dashboards <ids>', 'source dashboard ids, comma-separated', idList)
    .option('--title <title>', 'a source dashboard by its exact title (repeatable)', collect)
    .option('--search <text>', 'every source dashboard whose title or slug contains the text')
    .option('--all', 'every dashboard of the source environment')
    .option('--map <src:tgt>', 'database mapping for this run (repeatable)', dbMapping)
    .option('--no-overwrite', 'leave dashboards that already exist in the target alone')
    .option('--dry-run', 'plan only: report what would change, write nothing')
    .option('--companion <kind=mode>', 'what a companion kind gets: copy, strict or ignore (repeatable; e.g. roles=copy)', companionMode)
    .option('--no-pause-reports', 'copied alerts and reports start active in the target (by default they start paused)')
    .option(
      '--embedded-any-domain',
      "a source embedded configuration allowing any domain replaces the target's list (by default it is kept)",
    )
    .option('--wait', 'follow the task to its end; exit by its outcome')
    .option('--diff', 'with --wait: print the differences, object by object');
  // Every other option of the migration request, generated from the OpenAPI document.
  const generated = addRequestOptions(migrate, requestSchema('post', '/api/dashboards/migrate'), HAND_MADE);
  migrate.action(
    act(async (opts: MigrateOptions, cmd: Command) => {
      const c = ctx();
      const source_env_id = await envId(c.api(), opts.from);
      const extra = bodyFrom(cmd, generated);
      const companions = {
        ...(extra.companions as object | undefined),
        ...opts.companion,
        ...(opts.pauseReports ? {} : { pause_reports: false }),
        ...(opts.embeddedAnyDomain ? { embedded_any_domain: true } : {}),
      };
      const body = {
        ...extra,
        source_env_id,
        target_env_id: await envId(c.api(), opts.to),
        dashboard_ids: await selectDashboards(c.api(), source_env_id, opts),
        db_mappings: opts.map ?? [],
        overwrite: opts.overwrite,
        dry_run: !!opts.dryRun,
        ...(Object.keys(companions).length ? { companions } : {}),
      };
      const accepted = await unwrap(c.api().client.POST('/api/dashboards/migrate', { body: body as never }));
      return followTask(c, accepted as { task_id: string }, opts.wait, { diff: opts.diff });
    }),
  );
}
