import type { Command } from 'commander';
import { envId, unwrap } from '../api.ts';
import { act, followTask, type Ctx } from '../context.ts';
import { EXIT } from '../exit-codes.ts';
import { print } from '../output.ts';
import { InvalidArgumentError } from 'commander';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** `<dashboard uuid>@<40-hex commit>` or `backup:<backup id>`. */
function source(value: string, previous: unknown[] = []): unknown[] {
  const git = /^([0-9a-f-]{36})@([0-9a-f]{40})$/.exec(value);
  if (git && UUID.test(git[1]!)) return [...previous, { kind: 'git', dashboard_uuid: git[1], commit: git[2] }];
  const backup = /^backup:([0-9a-f-]{36})$/.exec(value);
  if (backup && UUID.test(backup[1]!)) return [...previous, { kind: 'backup', backup_id: backup[1] }];
  throw new InvalidArgumentError('expected <dashboard uuid>@<commit sha> or backup:<backup id>');
}

/** `<database name or uuid>=<target database id>`. */
function mapping(value: string, previous: unknown[] = []): unknown[] {
  const m = /^(.+)=([1-9][0-9]{0,9})$/.exec(value);
  if (!m) throw new InvalidArgumentError('expected <database name or uuid>=<target database id>');
  const key = UUID.test(m[1]!) ? { database_uuid: m[1] } : { database_name: m[1] };
  return [...previous, { ...key, target_database_id: Number(m[2]) }];
}

export function releaseCommands(program: Command, ctx: () => Ctx): void {
  const release = program.command('release').description('Clean releases (/api/v2/clean-release)');
  createCommand(release, ctx);
  prepareAndCheckCommands(release, ctx);
  decisionCommands(release, ctx);
}

const path = (candidate_id: string) => ({ params: { path: { candidate_id } } });

function createCommand(release: Command, ctx: () => Ctx): void {
  release
    .command('create')
    .description('Register a release candidate at pinned sources')
    .requiredOption('--name <name>', 'release name')
    .requiredOption('--env <env>', 'target environment, id or name')
    .requiredOption('--source <src>', '<dashboard uuid>@<commit sha> or backup:<backup id> (repeatable)', source)
    .option('--map <db=id>', 'database (name or uuid) → target database id (repeatable)', mapping)
    .action(
      act(async (opts: { name: string; env: string; source: unknown[]; map?: unknown[] }) => {
        const c = ctx();
        const body = {
          name: opts.name,
          target_env_id: await envId(c.api(), opts.env),
          sources: opts.source,
          ...(opts.map ? { db_mappings: opts.map } : {}),
        };
        const r = await unwrap(c.api().client.POST('/api/v2/clean-release/candidates', { body: body as never }));
        print(c.format, r, () => `${(r as { id: string }).id}  ${(r as { state: string }).state}`);
        return EXIT.OK;
      }),
    );
}

function prepareAndCheckCommands(release: Command, ctx: () => Ctx): void {
  release
    .command('prepare <candidate>')
    .description('Fetch the pinned sources, digest them and write the manifest')
    .action(
      act(async (id: string) => {
        const c = ctx();
        print(c.format, await unwrap(c.api().client.POST('/api/v2/clean-release/candidates/{candidate_id}/prepare', path(id))));
        return EXIT.OK;
      }),
    );
  release
    .command('check <candidate>')
    .description('Run the release checks (a task)')
    .option('--wait', 'follow the task to its end; exit by its outcome')
    .action(
      act(async (id: string, opts: { wait?: boolean }) => {
        const c = ctx();
        const r = await unwrap(c.api().client.POST('/api/v2/clean-release/candidates/{candidate_id}/checks', path(id)));
        return followTask(c, r as { task_id: string }, opts.wait);
      }),
    );
}

/** `approve` and `publish`: the same shape, a comment kept with the decision; publish starts a task. */
function decisionCommands(release: Command, ctx: () => Ctx): void {
  for (const [name, what] of [
    ['approve', 'Approve a checked candidate (someone other than its author)'],
    ['publish', 'Publish an approved candidate into its target (a task)'],
  ] as const) {
    release
      .command(`${name} <candidate>`)
      .description(what)
      .option('--comment <text>', 'a note kept with the decision')
      .option('--wait', 'publish: follow the task to its end')
      .action(
        act(async (id: string, opts: { comment?: string; wait?: boolean }) => {
          const c = ctx();
          const init = { ...path(id), body: opts.comment ? { comment: opts.comment } : {} };
          const r = (await unwrap(
            name === 'approve'
              ? c.api().client.POST('/api/v2/clean-release/candidates/{candidate_id}/approve', init)
              : c.api().client.POST('/api/v2/clean-release/candidates/{candidate_id}/publish', init),
          )) as { task_id?: string };
          if (r.task_id && opts.wait) return followTask(c, { task_id: r.task_id }, true);
          print(c.format, r);
          return EXIT.OK;
        }),
      );
  }
}
