import { z } from 'zod';
import type { DatasetChangeRow } from '../../db/datasets/changes.ts';
import type { SuggestionRow } from '../../db/datasets/suggestions.ts';
import { envIdQuery } from '../dashboards/schemas.ts';
import { pageEnvelope, pagination, supersetId, supersetIdParam } from '../http/schemas.ts';

const MAX_DATASETS = 100;
const datasetId = supersetId('dataset');
const datasetIds = z
  .array(datasetId, { error: 'dataset_ids must be a list of dataset ids' })
  .min(1, 'dataset_ids must not be empty')
  .max(MAX_DATASETS, `at most ${MAX_DATASETS} datasets per task`)
  .transform((ids) => [...new Set(ids)]);
const envId = z.string({ error: 'env_id is required' }).trim().min(1, 'env_id is required').max(200);
const databaseId = supersetId('database');
const sourceType = z.enum(['sqllab', 'xlsx'], { error: 'source_type must be sqllab or xlsx' });
const uuid = z.uuid({ error: 'must be a UUID' });

const mapColumnsFields = {
  env_id: envId,
  dataset_ids: datasetIds,
  source_type: sourceType.describe('`sqllab`: a query run through SQL Lab against `database_id`; `xlsx`: an uploaded workbook'),
  database_id: databaseId.optional().describe('required for `sqllab`: the Superset database the query runs against'),
  sql: z
    .string()
    .trim()
    .min(1)
    .max(20_000)
    .optional()
    .describe(
      "`sqllab` only: one read-only SELECT returning `column_name`, `verbose_name` and/or `description` (optionally `table_name`), checked by the real parser of the database's dialect before anything runs (400 with the reason otherwise). Without it, the column comments the database keeps in its catalog for each dataset's table (PostgreSQL, MySQL)",
    ),
  schema: z.string().trim().min(1).max(250).optional().describe('`sqllab` only: schema the query runs in'),
  catalog: z.string().trim().min(1).max(250).optional().describe('`sqllab` only: catalog the query runs in'),
  upload_id: uuid
    .optional()
    .describe('`xlsx` sent as JSON: a workbook uploaded earlier (the `upload_id` in the params of the task that received it)'),
  dry_run: z.boolean().default(false).describe('report what would change without writing'),
  overwrite: z.boolean().default(false).describe('also replace labels and descriptions a person wrote (default: only fill empty ones)'),
  reviewed_task_id: z
    .string()
    .trim()
    .min(1)
    .max(200)
    .optional()
    .describe(
      'apply exactly the plan of this reviewed dry run; a dataset changed since that dry run read it is reported as a conflict and not written',
    ),
};

type MapColumnsBody = {
  source_type: 'sqllab' | 'xlsx';
  database_id?: number;
  sql?: string;
  schema?: string;
  catalog?: string;
  upload_id?: string;
  reviewed_task_id?: string;
};

function mapColumnsRules(b: MapColumnsBody, ctx: z.RefinementCtx, multipart: boolean): void {
  if (b.source_type === 'sqllab') {
    if (b.database_id === undefined)
      ctx.addIssue({ code: 'custom', path: ['database_id'], message: 'database_id is required when source_type is sqllab' });
    if (b.upload_id !== undefined) ctx.addIssue({ code: 'custom', path: ['upload_id'], message: 'upload_id belongs to source_type xlsx' });
  } else {
    for (const k of ['database_id', 'sql', 'schema', 'catalog'] as const)
      if (b[k] !== undefined) ctx.addIssue({ code: 'custom', path: [k], message: `${k} belongs to source_type sqllab` });
    if (!multipart && b.upload_id === undefined && b.reviewed_task_id === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['upload_id'],
        message:
          'source_type xlsx needs the workbook: send the request as multipart/form-data with the file in `file`, or name an earlier upload with upload_id',
      });
    }
  }
}

export const mapColumnsBody = z
  .object(mapColumnsFields)
  .strict()
  .superRefine((b, ctx) => mapColumnsRules(b, ctx, false));

/** Multipart text fields arrive as strings: ids comma-separated (or repeated), booleans as true/false. */
const formIds = z.preprocess(
  (v) =>
    (Array.isArray(v) ? v : typeof v === 'string' ? [v] : v === undefined ? [] : [v])
      .flatMap((s) => String(s).split(','))
      .map((s) => s.trim())
      .filter(Boolean)
      .map((s) => (/^\d{1,10}$/.test(s) ? Number(s) : s)),
  datasetIds,
);
const formInt = (schema: z.ZodType<number>) =>
  z.preprocess((v) => (typeof v === 'string' && /^\d{1,10}$/.test(v.trim()) ? Number(v) : v), schema);
const formBool = z
  .enum(['true', 'false'], { error: 'must be true or false' })
  .transform((v) => v === 'true')
  .default(false);

export const mapColumnsForm = z
  .object({
    env_id: envId,
    dataset_ids: formIds.describe('dataset ids: the field repeated, or comma-separated (`12,15`)'),
    source_type: z.enum(['xlsx'], { error: 'a workbook upload needs source_type xlsx (send sqllab requests as JSON)' }),
    database_id: formInt(databaseId).optional(),
    sheet: z.string().trim().min(1).max(31).optional().describe('worksheet to read (default: the first with rows)'),
    dry_run: formBool,
    overwrite: formBool,
    reviewed_task_id: mapColumnsFields.reviewed_task_id,
  })
  .strict()
  .superRefine((b, ctx) => mapColumnsRules(b, ctx, true));

export const generateDocsBody = z
  .object({
    env_id: envId,
    dataset_ids: datasetIds,
    llm_provider: z
      .string({ error: 'llm_provider is required' })
      .trim()
      .min(1, 'llm_provider is required')
      .max(200)
      .describe('a provider id from /api/admin/llm-providers, or `default` (the LLM_BASE_URL, LLM_API_KEY, LLM_MODEL variables)'),
    language: z.enum(['en', 'ru'], { error: 'language must be en or ru' }).default('en').describe('language of the descriptions'),
  })
  .strict();

export const datasetParams = z.object({ dataset_id: supersetIdParam('dataset').describe('Superset dataset id in the environment') });

export const changeParams = z.object({ change_id: z.string().min(1).max(200).describe('id of a dataset change') });

export const suggestionsQuery = z.object({
  env_id: envIdQuery,
  status: z
    .enum(['pending', 'accepted', 'rejected', 'superseded', 'all'], {
      error: 'status must be pending, accepted, rejected, superseded or all',
    })
    .default('pending'),
  ...pagination,
});

export const changesQuery = z.object({ env_id: envIdQuery, ...pagination });

export const acceptBody = z
  .object({
    env_id: envId,
    items: z
      .array(
        z
          .object({
            suggestion_id: uuid,
            value: z.string().trim().min(1).max(10_000).optional().describe("a person's edit, accepted instead of the suggestion"),
            overwrite: z.boolean().default(false).describe('replace a value a person wrote, or one changed since the suggestion was made'),
          })
          .strict(),
      )
      .min(1, 'items must not be empty (leave it out to accept every pending suggestion)')
      .max(1000)
      .optional()
      .describe('the suggestions to accept; all pending ones when left out'),
  })
  .strict();

export const rejectBody = z
  .object({
    env_id: envId,
    suggestion_ids: z.array(uuid).min(1).max(1000).optional().describe('the suggestions to reject; all pending ones when left out'),
  })
  .strict();

export const undoBody = z
  .object({
    force: z.boolean().default(false).describe('undo even fields changed after this change (their later values are replaced)'),
  })
  .strict();

// --- answers -------------------------------------------------------------------------------------

const fieldChange = z.object({
  target: z.enum(['dataset', 'column']),
  column_id: z.number().int().nullable(),
  column_name: z.string().nullable(),
  field: z.enum(['verbose_name', 'description']),
  before: z.string().nullable(),
  after: z.string().nullable(),
});

export const changeView = z.object({
  id: z.string(),
  env_id: z.string(),
  dataset_id: z.number().int(),
  dataset_name: z.string().nullable(),
  source: z.enum(['map_columns', 'suggestions', 'undo', 'dataset_launch']),
  task_id: z.string().nullable(),
  actor: z.object({ id: z.string().nullable(), username: z.string().nullable() }),
  status: z.enum(['pending', 'applied', 'failed', 'undone']),
  fields: z.array(fieldChange),
  verify_problems: z.array(z.string()).describe('what else moved in the dataset during the write (empty: only the intended fields)'),
  dropped_keys: z.array(z.string()),
  error: z.string().nullable(),
  undo_of: z.string().nullable(),
  undone_by_change: z.string().nullable(),
  undone_by: z.string().nullable(),
  created_at: z.string(),
  applied_at: z.string().nullable(),
  undone_at: z.string().nullable(),
});

const iso = (d: Date | null) => (d ? new Date(d).toISOString() : null);

export function toChangeView(c: DatasetChangeRow): z.infer<typeof changeView> {
  return {
    id: c.id,
    env_id: c.env_id,
    dataset_id: c.dataset_id,
    dataset_name: c.dataset_name,
    source: c.source,
    task_id: c.task_id,
    actor: { id: c.actor_id, username: c.actor_username },
    status: c.status,
    fields: c.fields,
    verify_problems: c.verify_problems ?? [],
    dropped_keys: c.dropped_keys ?? [],
    error: c.error,
    undo_of: c.undo_of,
    undone_by_change: c.undone_by_change,
    undone_by: c.undone_by_username,
    created_at: iso(c.created_at)!,
    applied_at: iso(c.applied_at),
    undone_at: iso(c.undone_at),
  };
}

export const changeList = pageEnvelope(changeView).extend({ env_id: z.string(), dataset_id: z.number().int() });

const tokens = z.object({ prompt_tokens: z.number(), completion_tokens: z.number(), total_tokens: z.number() });

export const suggestionView = z.object({
  id: z.string(),
  target: z.enum(['dataset', 'column']),
  column_name: z.string().nullable(),
  field: z.enum(['verbose_name', 'description']),
  value: z.string().describe('what the model suggests'),
  current_value: z.string().nullable().describe('what Superset holds now'),
  base_value: z.string().nullable().describe('what the field held when the suggestion was made'),
  changed_since: z.boolean().describe('the field changed in Superset after the suggestion was made'),
  person_written: z
    .boolean()
    .describe('the current value was written by a person, not by Switchyard: accepting replaces it only with overwrite'),
  column_exists: z.boolean(),
  status: z.enum(['pending', 'accepted', 'rejected', 'superseded']),
  provenance: z.object({
    task_id: z.string().nullable(),
    provider_id: z.string(),
    provider_name: z.string(),
    model: z.string(),
    prompt_version: z.string(),
    language: z.string(),
    generated_at: z.string(),
    tokens: tokens.nullable().describe("the call's tokens, shared by all suggestions of the dataset it made"),
  }),
  decided_by: z.string().nullable(),
  decided_at: z.string().nullable(),
  accepted_value: z.string().nullable(),
  change_id: z.string().nullable(),
});

export function toSuggestionView(
  s: SuggestionRow,
  live: { current: string | null | undefined; personWritten: boolean },
): z.infer<typeof suggestionView> {
  const current = live.current ?? null;
  return {
    id: s.id,
    target: s.target,
    column_name: s.column_name,
    field: s.field,
    value: s.value,
    current_value: current,
    base_value: s.base_value,
    changed_since: (s.base_value ?? null) !== current,
    person_written: live.personWritten,
    column_exists: live.current !== undefined,
    status: s.status,
    provenance: {
      task_id: s.task_id,
      provider_id: s.provider_id,
      provider_name: s.provider_name,
      model: s.model,
      prompt_version: s.prompt_version,
      language: s.language,
      generated_at: iso(s.generated_at)!,
      tokens: s.usage,
    },
    decided_by: s.decided_by_username,
    decided_at: iso(s.decided_at),
    accepted_value: s.accepted_value,
    change_id: s.change_id,
  };
}

export const suggestionList = pageEnvelope(suggestionView).extend({
  env_id: z.string(),
  dataset_id: z.number().int(),
  dataset_name: z.string(),
  dataset_description: z.string().nullable(),
});

export const acceptAnswer = z.object({
  env_id: z.string(),
  dataset_id: z.number().int(),
  change: changeView
    .nullable()
    .describe('the write into Superset (undo it with POST /api/datasets/changes/{id}/undo); null when nothing needed writing'),
  accepted: z.array(
    z.object({
      suggestion_id: z.string(),
      target: z.enum(['dataset', 'column']),
      column_name: z.string().nullable(),
      field: z.string(),
      value: z.string(),
      edited: z.boolean(),
    }),
  ),
  skipped: z.array(
    z.object({
      suggestion_id: z.string(),
      reason: z.enum(['not_pending', 'person_written', 'changed_since', 'no_such_column', 'unknown']),
      detail: z.string(),
    }),
  ),
});

export const rejectAnswer = z.object({ env_id: z.string(), dataset_id: z.number().int(), rejected: z.number().int() });

export const undoAnswer = z.object({ undo: changeView, undone: changeView });
