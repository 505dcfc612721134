import { z } from 'zod';
import { supersetIdParam } from '../http/schemas.ts';

const name = (what: string) => z.string().trim().min(1, `${what} may not be empty`).max(250, `${what} is at most 250 characters`);

/** What is about to change: a table (with schema and database), a dataset, or a column or metric of either, or a database. */
export const impactQuery = z
  .object({
    table: name('table')
      .optional()
      .describe('A table name: its physical datasets, the virtual datasets, saved queries and alerts whose SQL reads it'),
    schema: name('schema').optional().describe("The table's schema; SQL naming the table without one is counted as reading it"),
    database: name('database')
      .optional()
      .describe("A database by id or name: alone, everything on it; with `table`, only that database's table"),
    dataset: supersetIdParam('dataset').optional().describe('A dataset id: the charts on it (with `column` or `metric`, those using it)'),
    column: name('column').optional().describe('A column of `dataset` or of `table`'),
    metric: name('metric').optional().describe("A saved metric of `dataset` or of `table`'s datasets"),
  })
  .strict()
  .superRefine((q, ctx) => {
    if (q.table === undefined && q.dataset === undefined && q.database === undefined) {
      ctx.addIssue({ code: 'custom', path: ['table'], message: 'name what changes: table, dataset or database' });
    }
    if (q.table !== undefined && q.dataset !== undefined)
      ctx.addIssue({ code: 'custom', path: ['dataset'], message: 'name a table or a dataset, not both' });
    if (q.column !== undefined && q.metric !== undefined)
      ctx.addIssue({ code: 'custom', path: ['metric'], message: 'name a column or a metric, not both' });
    if ((q.column !== undefined || q.metric !== undefined) && q.table === undefined && q.dataset === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: [q.column !== undefined ? 'column' : 'metric'],
        message: 'a column or metric needs its table or dataset',
      });
    }
    if (q.schema !== undefined && q.table === undefined)
      ctx.addIssue({ code: 'custom', path: ['schema'], message: 'schema goes with table' });
  });

const target = z.object({
  database: z.string().optional(),
  schema: z.string().optional(),
  table: z.string().optional(),
  dataset: z.number().int().optional(),
  column: z.string().optional(),
  metric: z.string().optional(),
});

const used = { id: z.number().int(), name: z.string(), via: z.array(z.string()).describe('What of it uses the target') };

export const environmentImpact = z.object({
  env_id: z.string(),
  env_name: z.string(),
  target: target.describe('The target as this environment names it'),
  checked_at: z.iso.datetime(),
  resolved: z.object({
    databases: z.array(z.object({ id: z.number().int(), name: z.string() })),
    datasets: z.array(z.object({ id: z.number().int(), name: z.string(), kind: z.enum(['physical', 'virtual']) })),
  }),
  charts: z.array(
    z.object({
      ...used,
      viz_type: z.string().nullable(),
      dataset_id: z.number().int().nullable(),
      dashboard_ids: z.array(z.number().int()),
    }),
  ),
  dashboards: z.array(z.object(used)),
  datasets: z.array(z.object({ ...used, kind: z.enum(['physical', 'virtual']), database_id: z.number().int().nullable() })),
  saved_queries: z.array(z.object(used)),
  reports: z.array(z.object({ ...used, type: z.string() })),
  dataset_fields: z.array(z.object({ dataset_id: z.number().int(), kind: z.enum(['metric', 'calculated_column']), name: z.string() })),
  unparsed: z
    .array(
      z.object({ kind: z.enum(['dataset', 'chart', 'saved_query', 'report']), id: z.number().int(), name: z.string(), reason: z.string() }),
    )
    .describe('SQL no parser here could read: it may use the target'),
  unreadable: z
    .array(z.object({ kind: z.string(), message: z.string(), upstream_status: z.number().int().nullable() }))
    .describe('Kinds of object Superset did not list, with its message'),
  truncated: z.array(z.object({ kind: z.string(), read: z.number().int(), total: z.number().int() })),
  complete: z.boolean().describe('Every kind read whole and every SQL parsed'),
});

export const impactResponse = environmentImpact.extend({
  migrates_to: z.array(
    z.object({
      env_id: z.string(),
      env_name: z.string(),
      via: z.array(z.enum(['database_mappings', 'environment_rules'])),
      impact: environmentImpact.nullable(),
      note: z.string().nullable(),
    }),
  ),
});

const named = z.object({ id: z.number().int(), name: z.string() });

/** What uses a dataset, in short, as a write shows it before it is confirmed. */
export const impactPreviewSchema = z
  .object({
    env_id: z.string(),
    dataset_id: z.number().int(),
    checked_at: z.string(),
    charts: z.array(named),
    dashboards: z.array(named),
    reports: z.array(named),
    saved_queries: z.array(named),
    virtual_datasets: z.array(named),
    incomplete: z.array(z.string()).describe('Kinds Superset did not list and SQL no parser read: the lists may miss some'),
    error: z.string().nullable().describe('Why the impact could not be read at all'),
    request: z.object({ method: z.literal('GET'), path: z.string() }).describe('The full answer, here and in the environments migrated to'),
  })
  .describe('What uses the dataset, read before the write is confirmed (GET /api/environments/{env_id}/impact)');
