import type { Command } from 'commander';
import { envId, unwrap } from '../api.ts';
import { act, followTask, type Ctx } from '../context.ts';
import { EXIT, usage } from '../exit-codes.ts';
import { print } from '../output.ts';
import { positiveInt } from './args.ts';

type DashOpts = { dashboard?: string; from?: string };

/** The dashboard and its environment, from options or SWITCHYARD_DASHBOARD / SWITCHYARD_SOURCE_ENV. */
async function target(c: Ctx, opts: DashOpts) {
  const dashboard = opts.dashboard ?? process.env.SWITCHYARD_DASHBOARD;
  const from = opts.from ?? process.env.SWITCHYARD_SOURCE_ENV;
  if (!dashboard) throw usage('give --dashboard <id> (or SWITCHYARD_DASHBOARD)');
  if (!from) throw usage('give --from <env>, the environment the dashboard id belongs to (or SWITCHYARD_SOURCE_ENV)');
  return { path: { dashboard_id: String(positiveInt(dashboard)) } as never, env_id: await envId(c.api(), from) };
}

const withDashboard = (c: Command) =>
  c
    .option('--dashboard <id>', 'dashboard id (default: SWITCHYARD_DASHBOARD)')
    .option('--from <env>', 'its environment, id or name (default: SWITCHYARD_SOURCE_ENV)');

/** `switchyard git branch ...`: a dashboard repository's branches. */
function branchCommands(git: Command, ctx: () => Ctx): void {
  const branch = git.command('branch').description("A dashboard repository's branches");
  withDashboard(branch.command('list').description('Branches, the current one, and the pull request open from each')).action(
    act(async (opts: DashOpts) => {
      const c = ctx();
      const t = await target(c, opts);
      print(
        c.format,
        await unwrap(
          c
            .api()
            .client.GET('/api/git/dashboards/{dashboard_id}/branches', { params: { path: t.path, query: { env_id: t.env_id } as never } }),
        ),
      );
      return EXIT.OK;
    }),
  );
  withDashboard(branch.command('create <name>').description('Create a branch at HEAD (local changes come along) and switch to it'))
    .option('--at <ref>', 'start from this commit or branch instead of HEAD')
    .option('--no-checkout', 'stay on the current branch')
    .action(
      act(async (name: string, opts: DashOpts & { at?: string; checkout: boolean }) => {
        const c = ctx();
        const t = await target(c, opts);
        const body = { env_id: t.env_id, name, checkout: opts.checkout, ...(opts.at ? { from: opts.at } : {}) };
        print(
          c.format,
          await unwrap(
            c.api().client.POST('/api/git/dashboards/{dashboard_id}/branches', { params: { path: t.path }, body: body as never }),
          ),
        );
        return EXIT.OK;
      }),
    );
  branchSwitchCommands(branch, ctx);
}

/** `git branch switch` and `delete`. */
function branchSwitchCommands(branch: Command, ctx: () => Ctx): void {
  withDashboard(branch.command('switch <name>').description('Switch to a branch (refused while anything is changed)')).action(
    act(async (name: string, opts: DashOpts) => {
      const c = ctx();
      const t = await target(c, opts);
      const path = { ...(t.path as object), branch: name } as never;
      print(
        c.format,
        await unwrap(
          c
            .api()
            .client.POST('/api/git/dashboards/{dashboard_id}/branches/{branch}/switch', { params: { path }, body: { env_id: t.env_id } }),
        ),
      );
      return EXIT.OK;
    }),
  );
  withDashboard(branch.command('delete <name>').description('Delete a local branch (never the current one)')).action(
    act(async (name: string, opts: DashOpts) => {
      const c = ctx();
      const t = await target(c, opts);
      const path = { ...(t.path as object), branch: name } as never;
      print(
        c.format,
        await unwrap(
          c.api().client.DELETE('/api/git/dashboards/{dashboard_id}/branches/{branch}', {
            params: { path, query: { env_id: t.env_id } as never },
          }),
        ),
      );
      return EXIT.OK;
    }),
  );
}

/** `switchyard git pr ...`: pull requests with their preview. */
function prCommands(git: Command, ctx: () => Ctx): void {
  const pr = git.command('pr').description('Pull requests of a dashboard repository, previewed by Switchyard');
  withDashboard(pr.command('list').description('Pull requests Switchyard opened for the dashboard'))
    .option('--state <state>', 'open, closed or merged')
    .action(
      act(async (opts: DashOpts & { state?: string }) => {
        const c = ctx();
        const t = await target(c, opts);
        const query = { env_id: t.env_id, ...(opts.state ? { state: opts.state } : {}) } as never;
        print(
          c.format,
          await unwrap(c.api().client.GET('/api/git/dashboards/{dashboard_id}/pull-requests', { params: { path: t.path, query } })),
        );
        return EXIT.OK;
      }),
    );
  withDashboard(pr.command('open').description('Push a branch and open a pull request; the preview (a task) writes its body and status'))
    .requiredOption('--branch <name>', 'the head branch')
    .requiredOption('--title <text>', 'its title')
    .requiredOption('--env <env>', 'where the preview plans and a merge deploys, id or name')
    .option('--base <name>', "the branch to merge into (default: the repository's)")
    .option('--description <text>', 'your own text above the preview')
    .option('--wait', 'follow the preview task to its end; exit by its outcome')
    .action(
      act(async (opts: DashOpts & { branch: string; title: string; env: string; base?: string; description?: string; wait?: boolean }) => {
        const c = ctx();
        const t = await target(c, opts);
        const body = {
          env_id: t.env_id,
          branch: opts.branch,
          title: opts.title,
          target_env_id: await envId(c.api(), opts.env),
          base: opts.base,
          description: opts.description,
        };
        const r = (await unwrap(
          c.api().client.POST('/api/git/dashboards/{dashboard_id}/pull-requests', { params: { path: t.path }, body: body as never }),
        )) as { preview_task_id: string };
        print(c.format, r);
        return opts.wait ? followTask(c, { task_id: r.preview_task_id }, true) : EXIT.OK;
      }),
    );
  withDashboard(pr.command('refresh <number>').description('Push the branch when it moved and preview the pull request again'))
    .option('--title <text>', 'a new title')
    .option('--wait', 'follow the preview task to its end')
    .action(
      act(async (number: string, opts: DashOpts & { title?: string; wait?: boolean }) => {
        const c = ctx();
        const t = await target(c, opts);
        const path = { ...(t.path as object), number: String(positiveInt(number)) } as never;
        const body = { env_id: t.env_id, ...(opts.title ? { title: opts.title } : {}) };
        const r = (await unwrap(
          c.api().client.POST('/api/git/dashboards/{dashboard_id}/pull-requests/{number}/refresh', { params: { path }, body }),
        )) as { preview_task_id: string };
        print(c.format, r);
        return opts.wait ? followTask(c, { task_id: r.preview_task_id }, true) : EXIT.OK;
      }),
    );
}

export function gitReviewCommands(program: Command, ctx: () => Ctx): void {
  const git = program.commands.find((c) => c.name() === 'git');
  if (!git) throw new Error('the git command group is registered first (cli/main.ts)');
  branchCommands(git, ctx);
  prCommands(git, ctx);
}
