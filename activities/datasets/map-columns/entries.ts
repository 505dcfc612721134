import type { DictionarySource } from '../../../contracts/datasets.ts';
import type { ItemFailure } from '../../../contracts/failures.ts';
import { catalogCommentsQuery } from '../../../lib/dictionary/catalog-query.ts';
import type { DictionaryEntry } from '../../../lib/dictionary/entries.ts';
import type { SupersetClient } from '../../../lib/superset/client.ts';
import type { DatasetDetail } from '../../../lib/superset/types.ts';
import type { ActivityDeps } from '../../deps.ts';
import { foreignDatabase, runDictionaryQuery } from '../dictionary-query.ts';

export interface MapDatasetInput {
  envId: string;
  datasetId: number;
  source: DictionarySource;
  /** The stored dictionary (upload, or the rows of the task's own query); null: the catalog's column comments. */
  dictionaryId: string | null;
  dryRun: boolean;
  overwrite: boolean;
  reviewedTaskId: string | null;
}

/** The dictionary entries for one dataset: the stored dictionary, or its table's column comments from the catalog. */
export async function entriesFor(
  deps: Pick<ActivityDeps, 'stores'>,
  client: SupersetClient,
  detail: DatasetDetail,
  input: MapDatasetInput,
): Promise<{ entries: DictionaryEntry[] } | { failure: ItemFailure }> {
  const foreign = foreignDatabase(detail, input.source);
  if (foreign) return { failure: foreign };
  if (input.dictionaryId) {
    const d = await deps.stores.datasetDictionaries.get(input.dictionaryId);
    if (!d) return { failure: { step: 'dictionary', error: `dictionary ${input.dictionaryId} is gone`, next_actions: [] } };
    return { entries: d.rows };
  }
  if (input.source.type !== 'sqllab') return { failure: { step: 'dictionary', error: 'no dictionary was prepared', next_actions: [] } };
  const source = input.source;
  const sendSql: ItemFailure['next_actions'][number] = {
    action: 'send_query',
    description:
      'Send your own `sql` returning column_name, verbose_name and description (for example from a dictionary table), or upload a workbook with source_type xlsx',
  };
  if (detail.sql || detail.kind === 'virtual') {
    return {
      failure: {
        step: 'dictionary',
        error: `dataset '${detail.table_name}' is virtual (defined by SQL): it has no table whose column comments could be read`,
        next_actions: [sendSql],
      },
    };
  }
  const backend = detail.database.backend ?? (await client.databases.find(source.databaseId))?.backend ?? null;
  const sql = catalogCommentsQuery(backend, { schema: detail.schema ?? null, table_name: detail.table_name });
  if (!sql) {
    return {
      failure: {
        step: 'dictionary',
        error: `database ${source.databaseId} (${backend ?? 'unknown engine'}) keeps no column comments Switchyard can read`,
        next_actions: [sendSql],
      },
    };
  }
  return {
    entries: await runDictionaryQuery(client, {
      databaseId: source.databaseId,
      backend,
      sql,
      schema: detail.schema ?? null,
      catalog: detail.catalog ?? null,
    }),
  };
}
