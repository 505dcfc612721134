/**
 * A dictionary query through SQL Lab (a caller's, or the catalog's column comments). It passes
 * lib/sql's decider for the database's dialect right before it runs (the API checked a caller's
 * query when the task was created), and what runs is the parser's rendering; the rows are checked
 * like a workbook's.
 */
import type { ItemFailure } from '../../contracts/failures.ts';
import type { DictionarySource } from '../../contracts/datasets.ts';
import { normaliseEntries, type DictionaryEntry } from '../../lib/dictionary/entries.ts';
import { checkReadOnlyQuery } from '../../lib/sql/read-only.ts';
import type { SupersetClient } from '../../lib/superset/client.ts';
import type { DatasetDetail } from '../../lib/superset/types.ts';

/** Rows a dictionary query may return; more is refused rather than cut silently. */
const MAX_QUERY_ROWS = 20_000;

export class DictionaryQueryError extends Error {
  override name = 'DictionaryQueryError';
}

export interface DictionaryQuery {
  databaseId: number;
  backend: string | null;
  sql: string;
  schema: string | null;
  catalog: string | null;
}

export async function runDictionaryQuery(client: SupersetClient, q: DictionaryQuery): Promise<DictionaryEntry[]> {
  const verdict = await checkReadOnlyQuery(q.sql, q.backend);
  if (!verdict.ok) throw new DictionaryQueryError(`the dictionary query ${verdict.reason}; nothing was run`);
  const result = await client.sqlLab.execute({
    databaseId: q.databaseId,
    sql: verdict.sql,
    schema: q.schema,
    catalog: q.catalog,
    limit: MAX_QUERY_ROWS,
  });
  if (!result.columns.some((c) => c.trim().toLowerCase() === 'column_name')) {
    throw new DictionaryQueryError(
      `the query returned the columns ${result.columns.join(', ') || '(none)'}; it must return column_name, and verbose_name and/or description`,
    );
  }
  if (result.limited) throw new DictionaryQueryError(`the query returned more than ${MAX_QUERY_ROWS} rows; narrow it`);
  const { entries, problems } = normaliseEntries(result.rows, (i) => `query row ${i + 1}`);
  if (problems.length)
    throw new DictionaryQueryError(
      `the query's rows are not a usable dictionary: ${problems
        .slice(0, 10)
        .map((p) => `${p.field} ${p.message}`)
        .join('; ')}`,
    );
  return entries;
}

/** A SQL Lab dictionary runs only against the database of the datasets it maps (the API refuses the rest): this dataset's failure otherwise. */
export function foreignDatabase(detail: DatasetDetail, source: DictionarySource): ItemFailure | undefined {
  if (source.type !== 'sqllab' || detail.database?.id === source.databaseId) return undefined;
  return {
    step: 'dictionary',
    error: `dataset '${detail.table_name}' belongs to database ${detail.database?.id}, not to database ${source.databaseId} the dictionary query runs against`,
    next_actions: [],
  };
}
