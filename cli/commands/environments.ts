import type { Command } from 'commander';
import { envId, unwrap } from '../api.ts';
import { act, type Ctx } from '../context.ts';
import { EXIT } from '../exit-codes.ts';
import { print } from '../output.ts';

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
        print(c.format, r, () => `${r.ok ? 'ok' : 'NOT ok'}: reachable ${r.reachable}, login ${r.login}, version ${r.version ?? '?'}${r.missing_permissions.length ? `, missing ${r.missing_permissions.join(', ')}` : ''}`);
        return r.ok ? EXIT.OK : EXIT.FAILURE;
      }),
    );
  envRuleCommands(env, ctx);
}

/** `env rules`: the per-environment rules of a pair (schema/catalog renames, text and URL rules). */
function envRuleCommands(env: Command, ctx: () => Ctx): void {
  const rules = env.command('rules').description('Per-environment rules from one environment to another (applied by migrations, deploys, publishes and drift reports)');
  const pair = async (c: Ctx, source: string, target: string) => ({ env_id: await envId(c.api(), source), target_env_id: await envId(c.api(), target) });
  rules
    .command('list <source> <target>')
    .description('The rules of the pair, in the order they apply')
    .action(
      act(async (source: string, target: string) => {
        const c = ctx();
        const r = await unwrap(c.api().client.GET('/api/environments/{env_id}/rules/{target_env_id}', { params: { path: await pair(c, source, target) } }));
        print(c.format, r, { rows: r.items, columns: ['id', 'position', 'kind', 'from', 'to', 'description'] });
        return EXIT.OK;
      }),
    );
  rules
    .command('add <source> <target>')
    .description('Add a rule after the existing ones')
    .requiredOption('--kind <kind>', 'schema, catalog or text (a text rule whose --from is an http(s) URL rewrites links on that origin)')
    .requiredOption('--from <value>', 'the name or text in the source')
    .requiredOption('--to <value>', 'what it becomes in the target')
    .option('--description <text>', 'why the rule exists')
    .action(
      act(async (source: string, target: string, opts: { kind: 'schema' | 'catalog' | 'text'; from: string; to: string; description?: string }) => {
        const c = ctx();
        const body = { kind: opts.kind, from: opts.from, to: opts.to, ...(opts.description ? { description: opts.description } : {}) };
        const r = await unwrap(c.api().client.POST('/api/environments/{env_id}/rules/{target_env_id}', { params: { path: await pair(c, source, target) }, body }));
        print(c.format, r, () => `added rule ${r.id}: ${r.kind} '${r.from}' → '${r.to}'`);
        return EXIT.OK;
      }),
    );
  rules
    .command('remove <source> <target> <rule_id>')
    .description('Remove a rule')
    .action(
      act(async (source: string, target: string, ruleId: string) => {
        const c = ctx();
        await unwrap(
          c.api().client.DELETE('/api/environments/{env_id}/rules/{target_env_id}/{rule_id}', { params: { path: { ...(await pair(c, source, target)), rule_id: ruleId } } }),
        );
        print(c.format, { removed: ruleId }, () => `removed rule ${ruleId}`);
        return EXIT.OK;
      }),
    );
}
