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
}
