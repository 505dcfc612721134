import { Context } from '@temporalio/activity';
import type { DictionarySource } from '../../../contracts/datasets.ts';
import type { ItemFailure } from '../../../contracts/failures.ts';
import type { DictionaryEntry } from '../../../lib/dictionary/entries.ts';
import type { ActivityDeps } from '../../deps.ts';
import { failItem, itemFailure } from '../../../domain/failures/index.ts';
import { currentTaskId } from '../../task-context.ts';
import { DictionaryQueryError, runDictionaryQuery } from '../dictionary-query.ts';

/**
 * Makes the task's dictionary available by id: an upload is already stored; a caller's query
 * runs once here and its rows are stored for the task (a retry reuses them); the default
 * (catalog comments) is read per dataset, so there is nothing to prepare.
 */
export async function prepareDictionary(
  deps: ActivityDeps,
  input: { envId: string; source: DictionarySource },
): Promise<{ dictionaryId: string | null; entries: number | null }> {
  const { log } = Context.current();
  const dictionaries = deps.stores.datasetDictionaries;
  if (input.source.type === 'xlsx') {
    const info = await dictionaries.info(input.source.dictionaryId);
    if (!info) {
      failItem({
        step: 'dictionary',
        error: `the uploaded dictionary ${input.source.dictionaryId} does not exist (any more)`,
        next_actions: [{ action: 'upload_again', description: 'Send the workbook again with POST /api/datasets/map-columns (multipart)' }],
      });
    }
    return { dictionaryId: info.id, entries: info.row_count };
  }
  if (input.source.sql === null) return { dictionaryId: null, entries: null };
  const taskId = currentTaskId();
  const stored = await dictionaries.forTask(taskId);
  if (stored) return { dictionaryId: stored.id, entries: stored.row_count };
  let entries: DictionaryEntry[];
  try {
    const client = await deps.superset(input.envId);
    const backend = (await client.databases.find(input.source.databaseId))?.backend ?? null;
    log.info(`running the dictionary query in SQL Lab against database ${input.source.databaseId}`);
    entries = await runDictionaryQuery(client, { ...input.source, backend, sql: input.source.sql });
  } catch (err) {
    failItem(dictionaryFailure(err, input.envId, input.source.databaseId));
  }
  const info = await dictionaries.create({ source: 'sqllab', rows: entries, taskId });
  log.info(`the dictionary query returned ${entries.length} entries`);
  return { dictionaryId: info.id, entries: entries.length };
}

/** Why the task's dictionary query could not be used, as the failure of every dataset. */
function dictionaryFailure(err: unknown, envId: string, databaseId: number): ItemFailure {
  if (err instanceof DictionaryQueryError) {
    return {
      step: 'dictionary',
      error: err.message,
      next_actions: [
        {
          action: 'fix_query',
          description: 'Return one row per column: column_name, verbose_name, description (and optionally table_name)',
        },
      ],
    };
  }
  const failure = itemFailure(err, { step: 'dictionary', item: `the dictionary query on database ${databaseId}`, envId });
  return failure;
}
