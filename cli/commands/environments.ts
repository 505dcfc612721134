import fs from 'node:fs';
import { Option, type Command } from 'commander';
import { envId, unwrap } from '../api.ts';
import { act, type Ctx } from '../context.ts';
import { CliError, EXIT } from '../exit-codes.ts';
import { print } from '../output.ts';
import { positiveInt } from './args.ts';

export function envCommands(program: Command, ctx: () => Ctx): void {
  const env = program.command('env').description('Environments (Superset instances)');
  env
    .command('list')
    .description('List environments')
    .action(
      act(async () => {
        const c = ctx();
        const { items } = await unwrap(c.api().client.GET('/api/environments'));
        print(c.format, items, { rows: items, columns: ['id', 'name', 'base_url', 'protected'] });
        return EXIT.OK;
      }),
    );
  env
    .command('test <env>')
    .description('Check that Switchyard reaches and signs in to an environment (by id or name); exit 1 when it does not')
    .action(
      act(async (ref: string) => {
        const c = ctx();
        const id = await envId(c.api(), ref);
        const r = await unwrap(c.api().client.POST('/api/environments/{env_id}/test', { params: { path: { env_id: id } } }));
        print(
          c.format,
          r,
          () =>
            `${r.ok ? 'ok' : 'NOT ok'}: reachable ${r.reachable}, login ${r.login}, version ${r.version ?? '?'}${r.missing_permissions.length ? `, missing ${r.missing_permissions.join(', ')}` : ''}`,
        );
        return r.ok ? EXIT.OK : EXIT.FAILURE;
      }),
    );
  envWriteCommands(env, ctx);
  envRuleCommands(env, ctx);
}

interface EnvWriteOptions {
  name?: string;
  url?: string;
  username?: string;
  passwordStdin?: boolean;
  verifyTls?: boolean;
  timeout?: number;
  description?: string;
  protected?: boolean;
}

/** The password only from stdin (one line): an argument would sit in the shell history and `ps`. */
function readPassword(): string {
  const password = fs.readFileSync(0, 'utf8').replace(/\r?\n$/, '');
  if (!password) throw new CliError('--password-stdin read an empty password', EXIT.USAGE);
  return password;
}

/** The request body from the options given (unset options are left out: update keeps what is stored). */
function envBody(opts: EnvWriteOptions): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries({
      name: opts.name,
      base_url: opts.url,
      username: opts.username,
      password: opts.passwordStdin ? readPassword() : undefined,
      verify_tls: opts.verifyTls,
      timeout_seconds: opts.timeout,
      description: opts.description,
      protected: opts.protected,
    }).filter(([, v]) => v !== undefined),
  );
}

/** Options shared by add and update; add requires what the API requires. */
function envWriteOptions(cmd: Command, required: boolean): Command {
  const opt = (flags: string, text: string) => (required ? cmd.requiredOption(flags, text) : cmd.option(flags, text));
  opt('--url <base_url>', 'Superset base URL, e.g. https://bi.example.com');
  opt('--username <name>', 'Superset service account');
  return cmd
    .addOption(
      new Option('--password-stdin', "read the service account's password from stdin (never an argument)").makeOptionMandatory(required),
    )
    .option('--no-verify-tls', 'do not verify the TLS certificate of an https URL')
    .option('--timeout <seconds>', 'per-request timeout towards Superset', positiveInt)
    .option('--description <text>', 'what the environment is for')
    .option('--protected', 'every task writing into it waits for approval by another person (admin only)');
}

/** `env add|update|remove`: the password is read from stdin only, never taken as an argument. */
function envWriteCommands(env: Command, ctx: () => Ctx): void {
  const show = (r: { id: string; name: string; base_url: string }) =>
    `${r.name}  ${r.base_url}  (${r.id})\nnext: switchyard env test ${r.name}`;
  envWriteOptions(
    env.command('add <name>').description('Register a Superset instance (password from stdin: --password-stdin)'),
    true,
  ).action(
    act(async (name: string, opts: EnvWriteOptions) => {
      const c = ctx();
      const r = await unwrap(c.api().client.POST('/api/environments', { body: { ...envBody(opts), name } as never }));
      print(c.format, r, () => `added environment ${show(r)}`);
      return EXIT.OK;
    }),
  );
  envWriteOptions(
    env.command('update <env>').description('Change an environment (by id or name); options left out keep their value'),
    false,
  )
    .option('--name <name>', 'a new name')
    .option('--verify-tls', 'verify the TLS certificate again')
    .option('--no-protected', 'clear protection (admin only)')
    .action(
      act(async (ref: string, opts: EnvWriteOptions, cmd: Command) => {
        const c = ctx();
        const id = await envId(c.api(), ref);
        // Only what was typed: commander's defaults for --no-* flags must not overwrite stored values.
        const typed = Object.fromEntries(Object.entries(opts).filter(([k]) => cmd.getOptionValueSource(k) === 'cli')) as EnvWriteOptions;
        const body = envBody(typed);
        if (!Object.keys(body).length) throw new CliError('nothing to change: give at least one option (see --help)', EXIT.USAGE);
        const r = await unwrap(c.api().client.PUT('/api/environments/{env_id}', { params: { path: { env_id: id } }, body: body as never }));
        print(c.format, r, () => `updated environment ${show(r)}`);
        return EXIT.OK;
      }),
    );
  env
    .command('remove <env>')
    .description('Remove an environment (by id or name); its stored password goes with it')
    .action(
      act(async (ref: string) => {
        const c = ctx();
        const id = await envId(c.api(), ref);
        await unwrap(c.api().client.DELETE('/api/environments/{env_id}', { params: { path: { env_id: id } } }));
        print(c.format, { removed: id }, () => `removed environment ${ref} (${id})\nnext: switchyard env list`);
        return EXIT.OK;
      }),
    );
}

/** `env rules`: the per-environment rules of a pair (schema/catalog renames, text and URL rules). */
function envRuleCommands(env: Command, ctx: () => Ctx): void {
  const rules = env
    .command('rules')
    .description('Per-environment rules from one environment to another (applied by migrations, deploys, publishes and drift reports)');
  rules
    .command('list <source> <target>')
    .description('The rules of the pair, in the order they apply')
    .action(
      act(async (source: string, target: string) => {
        const c = ctx();
        const r = await unwrap(
          c.api().client.GET('/api/environments/{env_id}/rules/{target_env_id}', { params: { path: await rulePair(c, source, target) } }),
        );
        print(c.format, r, { rows: r.items, columns: ['id', 'position', 'kind', 'from', 'to', 'description'] });
        return EXIT.OK;
      }),
    );
  addRuleCommand(rules, ctx);
  rules
    .command('remove <source> <target> <rule_id>')
    .description('Remove a rule')
    .action(
      act(async (source: string, target: string, ruleId: string) => {
        const c = ctx();
        await unwrap(
          c.api().client.DELETE('/api/environments/{env_id}/rules/{target_env_id}/{rule_id}', {
            params: { path: { ...(await rulePair(c, source, target)), rule_id: ruleId } },
          }),
        );
        print(c.format, { removed: ruleId }, () => `removed rule ${ruleId}`);
        return EXIT.OK;
      }),
    );
}

/** The pair's two environments, by name or id. */
async function rulePair(c: Ctx, source: string, target: string): Promise<{ env_id: string; target_env_id: string }> {
  return { env_id: await envId(c.api(), source), target_env_id: await envId(c.api(), target) };
}

function addRuleCommand(rules: Command, ctx: () => Ctx): void {
  rules
    .command('add <source> <target>')
    .description('Add a rule after the existing ones')
    .requiredOption('--kind <kind>', 'schema, catalog or text (a text rule whose --from is an http(s) URL rewrites links on that origin)')
    .requiredOption('--from <value>', 'the name or text in the source')
    .requiredOption('--to <value>', 'what it becomes in the target')
    .option('--description <text>', 'why the rule exists')
    .action(
      act(
        async (
          source: string,
          target: string,
          opts: { kind: 'schema' | 'catalog' | 'text'; from: string; to: string; description?: string },
        ) => {
          const c = ctx();
          const body = { kind: opts.kind, from: opts.from, to: opts.to, ...(opts.description ? { description: opts.description } : {}) };
          const r = await unwrap(
            c.api().client.POST('/api/environments/{env_id}/rules/{target_env_id}', {
              params: { path: await rulePair(c, source, target) },
              body,
            }),
          );
          print(c.format, r, () => `added rule ${r.id}: ${r.kind} '${r.from}' → '${r.to}'`);
          return EXIT.OK;
        },
      ),
    );
}
