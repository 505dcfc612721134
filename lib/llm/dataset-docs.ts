/**
 * The documentation prompt: what a dataset looks like to the model, the JSON it must answer and
 * the check of that answer. PROMPT_VERSION is stored with every suggestion; change it whenever
 * the prompt or the schema changes, so suggestions say which prompt made them.
 */
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { AnswerSchema } from './chat.ts';

export const PROMPT_VERSION = 'dataset-docs/1';

export const MAX_DATASET_DESCRIPTION = 2_000;
export const MAX_COLUMN_DESCRIPTION = 1_000;
const MAX_SQL = 8_000;
const MAX_SAMPLE_CHARS = 80;

export interface DatasetContext {
  name: string;
  kind: 'physical' | 'virtual';
  database_backend: string | null;
  schema: string | null;
  sql: string | null;
  description: string | null;
  columns: Array<{
    name: string;
    type: string | null;
    is_temporal: boolean;
    expression: string | null;
    label: string | null;
    description: string | null;
    /** A few distinct values, only when the environment allows sending data to the provider. */
    sample_values?: string[];
  }>;
  metrics: Array<{ name: string; expression: string; label: string | null; description: string | null }>;
}

export interface DocsAnswer {
  dataset_description: string;
  columns: Array<{ column_name: string; description: string }>;
}

const LANGUAGE = { en: 'English', ru: 'Russian' } as const;

export function docsMessages(ctx: DatasetContext, language: keyof typeof LANGUAGE): ChatCompletionMessageParam[] {
  const dataset = { ...ctx, sql: ctx.sql ? ctx.sql.slice(0, MAX_SQL) : null };
  return [
    {
      role: 'system',
      content: [
        'You document datasets of an analytics platform (Apache Superset) for the business people who build charts on them.',
        `Write in ${LANGUAGE[language]}.`,
        'Describe what the dataset holds and what each column means, from the names, types, SQL, metrics, existing labels and descriptions given (and sample values when present).',
        'Do not invent facts that cannot be inferred; say what a column is, its unit or format when evident, and how it relates to others.',
        `Keep the dataset description under ${MAX_DATASET_DESCRIPTION} characters (at most four sentences) and each column description to one or two sentences.`,
        'Answer with one JSON object only, following the given schema; name columns exactly as given.',
      ].join(' '),
    },
    { role: 'user', content: JSON.stringify({ dataset }) },
  ];
}

/** The answer's JSON Schema (strict structured output) and its check against the dataset's columns. */
export function docsSchema(columnNames: readonly string[]): AnswerSchema<DocsAnswer> {
  const known = new Set(columnNames);
  return {
    name: 'dataset_documentation',
    jsonSchema: {
      type: 'object',
      additionalProperties: false,
      required: ['dataset_description', 'columns'],
      properties: {
        dataset_description: { type: 'string', description: 'What the dataset holds, for business users' },
        columns: {
          type: 'array',
          items: {
            type: 'object',
            additionalProperties: false,
            required: ['column_name', 'description'],
            properties: {
              column_name: columnNames.length ? { type: 'string', enum: [...columnNames] } : { type: 'string' },
              description: { type: 'string' },
            },
          },
        },
      },
    },
    check(value) {
      if (!value || typeof value !== 'object' || Array.isArray(value)) return { ok: false, error: 'the answer is not a JSON object' };
      const v = value as Record<string, unknown>;
      const desc = typeof v.dataset_description === 'string' ? v.dataset_description.trim() : undefined;
      if (!desc) return { ok: false, error: 'dataset_description is missing or empty' };
      if (desc.length > MAX_DATASET_DESCRIPTION)
        return { ok: false, error: `dataset_description is longer than ${MAX_DATASET_DESCRIPTION} characters` };
      if (!Array.isArray(v.columns)) return { ok: false, error: 'columns is not an array' };
      const out: DocsAnswer['columns'] = [];
      const seen = new Set<string>();
      for (const [i, c] of v.columns.entries()) {
        const col = c as Record<string, unknown> | null;
        const name = typeof col?.column_name === 'string' ? col.column_name : undefined;
        const d = typeof col?.description === 'string' ? col.description.trim() : undefined;
        if (!name) return { ok: false, error: `columns[${i}].column_name is missing` };
        if (!known.has(name)) return { ok: false, error: `columns[${i}].column_name '${name}' is not a column of the dataset` };
        if (seen.has(name)) return { ok: false, error: `column '${name}' is described twice` };
        seen.add(name);
        if (!d) return { ok: false, error: `columns[${i}].description is missing or empty` };
        if (d.length > MAX_COLUMN_DESCRIPTION)
          return { ok: false, error: `the description of column '${name}' is longer than ${MAX_COLUMN_DESCRIPTION} characters` };
        out.push({ column_name: name, description: d });
      }
      return { ok: true, value: { dataset_description: desc, columns: out } };
    },
  };
}

/** A few distinct, short sample values per column from raw rows. */
export function sampleValues(rows: ReadonlyArray<Record<string, unknown>>, column: string, max = 5): string[] {
  const out: string[] = [];
  for (const r of rows) {
    const v = r[column];
    if (v === null || v === undefined) continue;
    const s = (typeof v === 'object' ? JSON.stringify(v) : String(v)).slice(0, MAX_SAMPLE_CHARS);
    if (!out.includes(s)) out.push(s);
    if (out.length >= max) break;
  }
  return out;
}
