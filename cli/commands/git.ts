import type { Command } from 'commander';
import { envId, unwrap } from '../api.ts';
import { act, followTask, type Ctx } from '../context.ts';
import { EXIT, usage } from '../exit-codes.ts';
import { print } from '../output.ts';
import { positiveInt } from './args.ts';

/** The dashboard and its environment, from options or SWITCHYARD_DASHBOARD / SWITCHYARD_SOURCE_ENV (a pipeline sets them once). */
function dashboardOf(opts: { dashboard?: string; from?: string }) {
  const dashboard = opts.dashboard ?? process.env.SWITCHYARD_DASHBOARD;
  const from = opts.from ?? process.env.SWITCHYARD_SOURCE_ENV;
  if (!dashboard) throw usage('give --dashboard <id> (or SWITCHYARD_DASHBOARD)');
  if (!from) throw usage('give --from <env>, the environment the dashboard id belongs to (or SWITCHYARD_SOURCE_ENV)');
  return { dashboardId: positiveInt(dashboard), from };
}

export function gitCommands(program: Command, ctx: () => Ctx): void {
  const git = program.command('git').description("A dashboard's git repository");
  statusCommand(git, ctx);
  commitCommand(git, ctx);
  pushCommand(git, ctx);
  deployCommand(git, ctx);
}

/** The options every git command names its dashboard by. */
const withDashboard = (c: Command) =>
  c
    .option('--dashboard <id>', 'dashboard id (default: SWITCHYARD_DASHBOARD)')
    .option('--from <env>', 'its environment, id or name (default: SWITCHYARD_SOURCE_ENV)');

function statusCommand(git: Command, ctx: () => Ctx): void {
  withDashboard(git.command('status').description('What changed in Superset since the last commit; ahead/behind the remote')).action(
    act(async (opts: { dashboard?: string; from?: string }) => {
      const c = ctx();
      const { dashboardId, from } = dashboardOf(opts);
      const env_id = await envId(c.api(), from);
      const s = await unwrap(
        c.api().client.GET('/api/git/dashboards/{dashboard_id}/status', {
          params: { path: { dashboard_id: String(dashboardId) } as never, query: { env_id } as never },
        }),
      );
      print(c.format, s);
      return EXIT.OK;
    }),
  );
}

function commitCommand(git: Command, ctx: () => Ctx): void {
  withDashboard(git.command('commit').description("Commit the dashboard's current state"))
    .requiredOption('-m, --message <text>', 'commit message')
    .action(
      act(async (opts: { dashboard?: string; from?: string; message: string }) => {
        const c = ctx();
        const { dashboardId, from } = dashboardOf(opts);
        const r = await unwrap(
          c.api().client.POST('/api/git/dashboards/{dashboard_id}/commit', {
            params: { path: { dashboard_id: String(dashboardId) } as never },
            body: { env_id: await envId(c.api(), from), message: opts.message },
          }),
        );
        print(c.format, r);
        return EXIT.OK;
      }),
    );
}

function pushCommand(git: Command, ctx: () => Ctx): void {
  withDashboard(git.command('push').description('Push the dashboard repository to its remote')).action(
    act(async (opts: { dashboard?: string; from?: string }) => {
      const c = ctx();
      const { dashboardId, from } = dashboardOf(opts);
      const r = await unwrap(
        c.api().client.POST('/api/git/dashboards/{dashboard_id}/push', {
          params: { path: { dashboard_id: String(dashboardId) } as never },
          body: { env_id: await envId(c.api(), from) },
        }),
      );
      print(c.format, r);
      return EXIT.OK;
    }),
  );
}

function deployCommand(git: Command, ctx: () => Ctx): void {
  withDashboard(
    git.command('deploy').description('Deploy a commit of the dashboard into an environment (a task; a protected one waits for approval)'),
  )
    .requiredOption('--commit <sha>', 'commit id, branch or HEAD~N')
    .requiredOption('--env <env>', 'where to deploy, id or name')
    .option('--no-overwrite', 'leave it alone when it already exists there')
    .option('--wait', 'follow the task to its end; exit by its outcome')
    .action(
      act(async (opts: { dashboard?: string; from?: string; commit: string; env: string; overwrite: boolean; wait?: boolean }) => {
        const c = ctx();
        const { dashboardId, from } = dashboardOf(opts);
        const accepted = await unwrap(
          c.api().client.POST('/api/git/dashboards/{dashboard_id}/deploy', {
            params: { path: { dashboard_id: String(dashboardId) } as never },
            body: {
              env_id: await envId(c.api(), from),
              target_env_id: await envId(c.api(), opts.env),
              commit: opts.commit,
              overwrite: opts.overwrite,
            } as never,
          }),
        );
        return followTask(c, accepted as { task_id: string }, opts.wait);
      }),
    );
}
