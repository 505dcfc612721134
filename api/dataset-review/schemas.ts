import { z } from 'zod';
import { impactPreviewSchema } from '../impact/schemas.ts';
import { pageEnvelope, pagination, supersetId } from '../http/schemas.ts';
import { taskAccepted } from '../tasks/schemas.ts';

const uuid = (what: string) => z.uuid({ error: `must be a ${what} id (a UUID)` });
export const version = z
  .number({ error: 'version is required: the session version you read (an integer)' })
  .int('version must be an integer')
  .min(1, 'version must be at least 1')
  .max(2_147_483_647)
  .describe('the session `version` this change was made against; a stale one is refused with 409 `version_conflict` and `current_version`');
const text = (max: number) => z.string().trim().max(max);

export const sessionParams = z.object({ session_id: uuid('session') });
export const fieldParams = z.object({ session_id: uuid('session'), field_id: uuid('field') });
export const mappingParams = z.object({ session_id: uuid('session'), mapping_id: uuid('mapping') });
export const dictionaryParams = z.object({ dictionary_id: uuid('dictionary') });

export const startBody = z.object({
  env_id: z.string({ error: 'env_id is required' }).trim().min(1, 'env_id is required').max(200),
  link: z
    .string({ error: 'link is required' })
    .trim()
    .min(1, 'link is required')
    .max(4000)
    .describe(
      'a Superset dashboard link: `/superset/dashboard/<id or slug>/` or a permalink `/superset/dashboard/p/<key>/` (absolute, or relative to the environment)',
    ),
});

export const listQuery = z.object(pagination);
export const versionQuery = z.object({
  version: z.coerce.number({ error: 'version is required (query)' }).int('version must be an integer').min(1).max(2_147_483_647),
});

export const patchBody = z.object({
  version,
  title: text(300).nullable().optional(),
  note: text(5000).nullable().optional(),
  dataset_id: supersetId('dataset').optional().describe("choose the reviewed dataset among the dashboard's (`candidate_datasets`)"),
});

export const versionBody = z.object({ version });

export const overrideBody = z
  .object({
    version,
    label: text(1024).nullable().optional().describe('the column label (Superset `verbose_name`)'),
    description: text(10_000).nullable().optional().describe('what the field means'),
  })
  .refine((b) => b.label !== undefined || b.description !== undefined, { message: 'send label and/or description', path: ['label'] });

export const feedbackBody = z.object({
  version,
  verdict: z.enum(['useful', 'wrong'], { error: 'verdict must be useful or wrong' }),
  comment: text(2000).nullable().optional(),
});

const filterValue = z.union([
  z.string().max(1000),
  z.number(),
  z.boolean(),
  z.array(z.union([z.string().max(1000), z.number(), z.boolean()])).max(1000),
]);
export const mappingPatchBody = z
  .object({
    version,
    variable: z
      .string()
      .trim()
      .min(1)
      .max(200)
      .nullable()
      .optional()
      .describe('a template variable of the dataset SQL, or null: the filter fills none'),
    value: filterValue.nullable().optional().describe('a value used instead of the imported one (null: back to the imported value)'),
  })
  .refine((b) => b.variable !== undefined || b.value !== undefined, { message: 'send variable and/or value', path: ['variable'] });

export const approveBody = z.object({
  version,
  mapping_ids: z.array(uuid('mapping')).max(500).optional().describe('the mappings to approve (default: all of the session)'),
});

export const answerBody = z.object({
  version,
  question_key: z.string().trim().min(1).max(300).describe('the `key` of the current question'),
  answer: z.object({
    option: z.string().trim().min(1).max(300).describe("one of the question's `options[].value`"),
    label: text(1024).nullable().optional(),
    description: text(10_000).nullable().optional(),
  }),
  feedback: z.enum(['useful', 'wrong']).optional().describe("whether the question was useful; stored on the answer's audit record"),
  feedback_comment: text(2000).nullable().optional(),
});

export const dictionaryBody = z.object({
  name: z.string({ error: 'name is required' }).trim().min(1, 'name is required').max(200),
  description: text(2000).nullable().optional(),
});
export const versionForm = z.object({});

// --- answers ------------------------------------------------------------------------------------

const marker = z.looseObject({ kind: z.string(), ref: z.string().nullable(), detail: z.string() });
const field = z.looseObject({
  id: z.string(),
  kind: z.enum(['column', 'metric']),
  name: z.string(),
  label: z.string().nullable(),
  description: z.string().nullable(),
  provenance: z.enum(['dictionary', 'fuzzy', 'superset', 'llm', 'manual', 'unresolved']),
  status: z.enum(['proposed', 'unresolved', 'needs_review', 'manual']),
  locked: z.boolean(),
  candidates: z.array(z.looseObject({ provenance: z.string() })),
});
const mapping = z.looseObject({
  id: z.string(),
  filter_id: z.string(),
  variable: z.string().nullable(),
  variable_kind: z.string().nullable(),
  origin: z.enum(['proposed', 'manual']),
  approved: z.boolean(),
});
export const sessionAnswer = z.looseObject({
  id: z.string(),
  version: z.number().int(),
  state: z.enum(['ready', 'recovery-required', 'launched']),
  env_id: z.string(),
  link: z.string(),
  dashboard: z.looseObject({ id: z.number() }).nullable(),
  dataset: z.looseObject({ id: z.number(), table_name: z.string() }).nullable(),
  imported_filters: z.array(z.looseObject({ id: z.string(), name: z.string() })),
  template_variables: z.array(z.looseObject({ name: z.string(), kind: z.string() })),
  recovery_markers: z.array(marker),
  fields: z.array(field),
  mappings: z.array(mapping),
  clarification: z.looseObject({ blocking: z.boolean(), remaining: z.number().int() }),
});
export const sessionSummary = z.looseObject({ id: z.string(), version: z.number().int(), state: z.string(), env_id: z.string() });
export const sessionList = pageEnvelope(sessionSummary);
export const fieldAnswer = z.looseObject({ version: z.number().int(), field });
export const feedbackAnswer = z.looseObject({
  version: z.number().int(),
  feedback: z.looseObject({ id: z.string(), verdict: z.string() }),
});
export const mappingAnswer = z.looseObject({ version: z.number().int(), mapping });
export const mappingsAnswer = z.looseObject({ version: z.number().int(), mappings: z.array(mapping) });
export const clarificationAnswer = z.looseObject({
  session_id: z.string(),
  version: z.number().int(),
  blocking: z.boolean(),
  question: z
    .looseObject({ key: z.string(), kind: z.string(), text: z.string(), options: z.array(z.looseObject({ value: z.string() })) })
    .nullable(),
  remaining: z.number().int(),
});
export const previewAnswer = z.looseObject({
  version: z.number().int(),
  impact: impactPreviewSchema.nullable().optional(),
  preview: z.looseObject({
    status: z.enum(['succeeded', 'failed']),
    compiled_sql: z.string().nullable(),
    columns: z.array(z.string()),
    rows: z.array(z.record(z.string(), z.unknown())),
    row_count: z.number().nullable(),
    error: z.string().nullable().optional(),
  }),
});
export const validationAnswer = z.looseObject({
  session_id: z.string(),
  version: z.number().int(),
  passed: z.boolean(),
  checks: z.array(z.object({ id: z.string(), passed: z.boolean(), detail: z.string() })),
});
const dictionary = z.looseObject({ id: z.string(), name: z.string(), current_version: z.number().int() });
export const dictionaryAnswer = dictionary;
export const dictionaryList = pageEnvelope(dictionary);
export const dictionaryVersionAnswer = z.looseObject({
  id: z.string(),
  version: z.number().int(),
  entry_count: z.number().int(),
  sessions_updated: z.number().int(),
});

/** The launch's 202: the task, and the audited handoff written as it was accepted. */
export const launchAccepted = taskAccepted.extend({
  handoff: z
    .object({
      audit_id: z.string().describe('the audit record of this launch, written as it was accepted'),
      session_id: z.string(),
      session_version: z.number().int().describe('the session version the launch holds'),
      launched_by: z.object({ id: z.string().nullable(), username: z.string() }),
      launched_at: z.string(),
      will_create: z
        .object({
          env_id: z.string().describe('the environment written into'),
          dataset_change: z.object({
            dataset_id: z.number().int(),
            dataset_name: z.string(),
            columns: z.array(z.string()).describe('the columns whose reviewed label or description is written'),
          }),
          saved_query: z.object({
            label: z.string(),
            database_id: z.number().int(),
            schema: z.string().nullable(),
            catalog: z.string().nullable(),
          }),
        })
        .describe('what the task will create, and where'),
    })
    .describe('the audited handoff; the task result adds what was created (ids, links, the undo request)'),
});
