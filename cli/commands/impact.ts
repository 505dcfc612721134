import type { Command } from 'commander';
import { envId, unwrap } from '../api.ts';
import { act, type Ctx } from '../context.ts';
import { CliError, EXIT } from '../exit-codes.ts';
import { print, table } from '../output.ts';
import { positiveInt } from './args.ts';

interface ImpactOptions {
  table?: string;
  schema?: string;
  database?: string;
  dataset?: number;
  column?: string;
  metric?: string;
}

type Used = { id: number; name: string; via: string[] };
interface EnvImpact {
  env_name: string;
  checked_at: string;
  charts: Used[];
  dashboards: Used[];
  datasets: Used[];
  saved_queries: Used[];
  reports: Used[];
  unparsed: Array<{ kind: string; id: number; name: string; reason: string }>;
  unreadable: Array<{ kind: string; message: string; upstream_status: number | null }>;
  complete: boolean;
}

/** One environment's impact for a person: each kind's objects with why, then what could not be read. */
function describe(e: EnvImpact): string {
  const rows = (kind: string, xs: Used[]) => xs.map((x) => ({ kind, id: x.id, name: x.name, via: x.via.join('; ') }));
  const all = [
    ...rows('dashboard', e.dashboards),
    ...rows('chart', e.charts),
    ...rows('dataset', e.datasets),
    ...rows('saved query', e.saved_queries),
    ...rows('report', e.reports),
  ];
  const lines = [
    `${e.env_name} (checked ${e.checked_at}): ${e.dashboards.length} dashboards, ${e.charts.length} charts, ${e.datasets.length} datasets, ${e.saved_queries.length} saved queries, ${e.reports.length} reports`,
  ];
  if (all.length) lines.push(table(all, ['kind', 'id', 'name', 'via']));
  for (const u of e.unreadable) lines.push(`NOT READ: ${u.kind}: ${u.message}${u.upstream_status ? ` (${u.upstream_status})` : ''}`);
  for (const u of e.unparsed) lines.push(`NOT PARSED: ${u.kind} ${u.id} (${u.name}): ${u.reason}`);
  return lines.join('\n');
}

export function impactCommand(program: Command, ctx: () => Ctx): void {
  program
    .command('impact <env>')
    .description(
      'What uses a table, dataset, column, metric or database, here and in the environments it migrates to; exit 1 when something could not be read',
    )
    .option('--table <name>', 'a table')
    .option('--schema <name>', "the table's schema")
    .option('--database <id-or-name>', 'a database (alone: everything on it)')
    .option('--dataset <id>', 'a dataset id', positiveInt)
    .option('--column <name>', 'a column of --table or --dataset')
    .option('--metric <name>', 'a saved metric of --table or --dataset')
    .action(
      act(async (ref: string, opts: ImpactOptions) => {
        if (!opts.table && !opts.dataset && !opts.database)
          throw new CliError('name what changes: --table, --dataset or --database', EXIT.USAGE);
        const c = ctx();
        const id = await envId(c.api(), ref);
        const query = Object.fromEntries(
          Object.entries(opts)
            .filter(([, v]) => v !== undefined)
            .map(([k, v]) => [k, String(v)]),
        );
        const r = await unwrap(c.api().client.GET('/api/environments/{env_id}/impact', { params: { path: { env_id: id }, query } }));
        const answer = r as unknown as EnvImpact & {
          migrates_to: Array<{ env_name: string; impact: EnvImpact | null; note: string | null }>;
        };
        print(c.format, r, () =>
          [
            describe(answer),
            ...answer.migrates_to.map((m) => (m.impact ? describe(m.impact) : `${m.env_name}: ${m.note ?? 'not asked'}`)),
          ].join('\n\n'),
        );
        const complete = answer.complete && answer.migrates_to.every((m) => !m.impact || m.impact.complete);
        return complete ? EXIT.OK : EXIT.FAILURE;
      }),
    );
}
