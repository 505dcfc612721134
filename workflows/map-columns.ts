import { log, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities/index.ts';
import type { MapColumnsInput, MapColumnsItem, MapColumnsResult } from '../contracts/datasets.ts';
import { NON_RETRYABLE_FAILURE_TYPES, type ItemFailure } from '../contracts/failures.ts';
import { forEachItem } from './for-each-item.ts';
import { failureOf } from './item-failure.ts';
import { endTaskWithResult, reportTaskProgress, runAsTask } from './task-run.ts';

/** Superset outages are retried; a refusal comes back as the dataset's (or the dictionary's) outcome. */
const datasets = proxyActivities<Activities>({
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '15 seconds',
  retry: {
    initialInterval: '2 seconds',
    maximumInterval: '30 seconds',
    maximumAttempts: 4,
    nonRetryableErrorTypes: NON_RETRYABLE_FAILURE_TYPES,
  },
});

/**
 * Fills dataset column labels and descriptions from a dictionary (a SQL Lab query, the
 * database catalog's column comments, or an uploaded workbook), one dataset at a time, each on
 * its own: a dataset that fails, or changed in Superset meanwhile, never stops its siblings.
 * A dry run writes nothing and reports what would change. Cancellation lands between datasets.
 */
export async function mapColumnsWorkflow(input: MapColumnsInput): Promise<MapColumnsResult> {
  return runAsTask(
    async () => {
      const total = input.datasetIds.length;
      await reportTaskProgress({ done: 0, total, message: `${input.dryRun ? 'planning' : 'mapping'} ${total} dataset(s)` });

      let dictionaryId: string | null = null;
      let dictionaryFailure: ItemFailure | undefined;
      if (!input.reviewedTaskId) {
        try {
          const prepared = await datasets.prepareDictionary({ envId: input.envId, source: input.source });
          dictionaryId = prepared.dictionaryId;
          if (prepared.entries !== null) log.info(`dictionary ready: ${prepared.entries} entries`);
        } catch (err) {
          dictionaryFailure = failureOf(err, 'dictionary');
          log.error(`the dictionary could not be read: ${dictionaryFailure.error}`);
        }
      }

      const { items, cancelled } = await forEachItem(
        input.datasetIds,
        (id) => `dataset ${id}`,
        async (datasetId) => {
          if (dictionaryFailure) return failedItem(datasetId, dictionaryFailure);
          try {
            return await datasets.mapDatasetColumns({
              envId: input.envId,
              datasetId,
              source: input.source,
              dictionaryId,
              dryRun: input.dryRun,
              overwrite: input.overwrite,
              reviewedTaskId: input.reviewedTaskId,
            });
          } catch (err) {
            return failedItem(datasetId, failureOf(err, 'map'));
          }
        },
      );

      const result = resultOf(input, items, cancelled);
      // The report offers the request that runs the failed datasets again (from the task kind's registry entry).
      const unfinished = items.filter((i) => i.status === 'failed' || i.status === 'conflict');
      if (cancelled)
        await endTaskWithResult('CANCELLED', result, `cancelled after ${items.length} of ${total} datasets; the rest were not touched`);
      if (unfinished.length) {
        await endTaskWithResult(
          'FAILED',
          result,
          `${unfinished.length} of ${total} dataset(s) were not mapped: ${unfinished.map((f) => `${f.id} (${f.status}: ${f.error})`).join('; ')}`,
          'MapColumnsIncomplete',
        );
      }
      return result;
    },
    { gate: { approval: input.approval, what: `writing column labels into ${input.datasetIds.length} dataset(s)` } },
  );
}

/** The task's result: each dataset's outcome, counted by status, and the dictionary it was mapped from. */
function resultOf(input: MapColumnsInput, items: MapColumnsItem[], cancelled: boolean): MapColumnsResult {
  const total = input.datasetIds.length;
  const count = (s: MapColumnsItem['status']) => items.filter((i) => i.status === s).length;
  return {
    env_id: input.envId,
    dry_run: input.dryRun,
    source:
      input.source.type === 'xlsx'
        ? { type: 'xlsx', dictionary_id: input.source.dictionaryId }
        : { type: 'sqllab', database_id: input.source.databaseId, default_query: input.source.sql === null },
    totals: {
      requested: total,
      updated: count('updated'),
      planned: count('planned'),
      unchanged: count('unchanged'),
      conflict: count('conflict'),
      failed: count('failed'),
      fields_changed: items.reduce((n, i) => n + (i.status === 'updated' || i.status === 'planned' ? i.changes.length : 0), 0),
    },
    items,
    not_started: total - items.length,
    cancelled,
    next_actions: [],
  };
}

function failedItem(datasetId: number, failure: ItemFailure): MapColumnsItem {
  return {
    kind: 'dataset',
    id: datasetId,
    title: null,
    status: 'failed',
    outcome: 'failed',
    changes: [],
    kept: [],
    unmatched: { dictionary: [], dataset: [] },
    change_id: null,
    fingerprint: null,
    ...failure,
  };
}
