import type { Command } from 'commander';
import { envId, unwrap } from '../api.ts';
import { act, followTask, type Ctx } from '../context.ts';
import { idList } from './args.ts';

interface ValidateOptions {
  dashboard?: number[];
  tag?: string;
  owner?: string;
  browser?: boolean;
  wait?: boolean;
}

/** `validate <env>`: the content validator as a task; with --wait, exit by its outcome (a broken dashboard fails it). */
export function validateCommand(program: Command, ctx: () => Ctx): void {
  program
    .command('validate <env>')
    .description(
      "Validate an environment's dashboards: every chart's query run in its Superset (a task; reads only); exit 2 with --wait when a dashboard is broken",
    )
    .option('--dashboard <ids>', 'only these dashboard ids, comma-separated (repeatable)', idList)
    .option('--tag <name>', 'only dashboards carrying this custom tag (exact name)')
    .option('--owner <username>', 'only dashboards this Superset user owns')
    .option('--browser', 'also open each dashboard in headless Chromium (the browser check)')
    .option('--wait', 'follow the task to its end; exit by its outcome')
    .action(
      act(async (ref: string, opts: ValidateOptions) => {
        const c = ctx();
        const id = await envId(c.api(), ref);
        const body = {
          ...(opts.dashboard?.length ? { dashboard_ids: opts.dashboard } : {}),
          ...(opts.tag ? { tag: opts.tag } : {}),
          ...(opts.owner ? { owner: opts.owner } : {}),
          ...(opts.browser ? { browser: true } : {}),
        };
        const accepted = await unwrap(
          c.api().client.POST('/api/environments/{env_id}/validate', { params: { path: { env_id: id } }, body }),
        );
        return followTask(c, accepted as { task_id: string }, opts.wait);
      }),
    );
}
