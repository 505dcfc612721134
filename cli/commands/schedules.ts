import type { Command } from 'commander';
import { unwrap } from '../api.ts';
import { act, type Ctx } from '../context.ts';
import { EXIT } from '../exit-codes.ts';
import { print } from '../output.ts';

export function scheduleCommands(program: Command, ctx: () => Ctx): void {
  const schedules = program.command('schedules').description('Recurring backups, drift reports and validations (Temporal Schedules)');
  schedules
    .command('list')
    .description('Every schedule')
    .action(
      act(async () => {
        const c = ctx();
        const r = await unwrap(c.api().client.GET('/api/schedules'));
        print(c.format, r, { rows: r.items, columns: ['id', 'name', 'kind', 'spec', 'paused', 'note'] });
        return EXIT.OK;
      }),
    );
  schedules
    .command('show <schedule>')
    .description('One schedule, its next runs and the tasks of its latest runs')
    .action(
      act(async (id: string) => {
        const c = ctx();
        print(c.format, await unwrap(c.api().client.GET('/api/schedules/{schedule_id}', path(id))));
        return EXIT.OK;
      }),
    );
  schedules
    .command('trigger <schedule>')
    .description('Run it once now')
    .action(
      act(async (id: string) => {
        const c = ctx();
        print(c.format, await unwrap(c.api().client.POST('/api/schedules/{schedule_id}/trigger', path(id))));
        return EXIT.OK;
      }),
    );
  pauseCommands(schedules, ctx);
}

/** A schedule's path parameters. */
const path = (schedule_id: string) => ({ params: { path: { schedule_id } } });

/** `schedules pause` and `resume`. */
function pauseCommands(schedules: Command, ctx: () => Ctx): void {
  schedules
    .command('pause <schedule>')
    .description('Pause it, with a note')
    .option('--note <text>', 'why (shown in the Temporal web UI too)')
    .action(
      act(async (id: string, opts: { note?: string }) => {
        const c = ctx();
        print(
          c.format,
          await unwrap(
            c.api().client.POST('/api/schedules/{schedule_id}/pause', { ...path(id), body: opts.note ? { note: opts.note } : {} }),
          ),
        );
        return EXIT.OK;
      }),
    );
  schedules
    .command('resume <schedule>')
    .description('Resume it')
    .action(
      act(async (id: string) => {
        const c = ctx();
        print(c.format, await unwrap(c.api().client.POST('/api/schedules/{schedule_id}/resume', path(id))));
        return EXIT.OK;
      }),
    );
}
