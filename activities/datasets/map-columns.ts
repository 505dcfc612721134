import { Context } from '@temporalio/activity';
import type { DatasetFieldChange, DictionarySource, MapColumnsItem, MapColumnsResult } from '../../contracts/datasets.ts';
import type { ItemFailure } from '../../contracts/failures.ts';
import { isPersonWritten } from '../../db/datasets/changes.ts';
import { writeDataset } from '../../db/datasets/safe-write.ts';
import { catalogCommentsQuery } from '../../lib/dictionary/catalog-query.ts';
import { matchDictionary, type DictionaryEntry } from '../../lib/dictionary/entries.ts';
import type { SupersetClient } from '../../lib/superset/client.ts';
import { datasetFingerprint, DatasetEditError, plannedChanges, valueOf, type FieldEdit } from '../../lib/superset/dataset-edit.ts';
import type { DatasetDetail } from '../../lib/superset/types.ts';
import type { ActivityDeps } from '../deps.ts';
import { failItem, itemFailure } from '../item-failure.ts';
import { currentTaskId } from '../task-context.ts';
import { DictionaryQueryError, foreignDatabase, runDictionaryQuery } from './dictionary-query.ts';

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

export function createMapColumnsActivities(deps: ActivityDeps) {
  const { datasetDictionaries: dictionaries, datasetChanges: changes } = deps.stores;

  async function actorOfTask(taskId: string) {
    const task = await deps.stores.tasks.get(taskId);
    return { id: task?.owner_id ?? null, username: task?.owner_username ?? null };
  }

  return {
    /**
     * Makes the task's dictionary available by id: an upload is already stored; a caller's query
     * runs once here and its rows are stored for the task (a retry reuses them); the default
     * (catalog comments) is read per dataset, so there is nothing to prepare.
     */
    async prepareDictionary(input: { envId: string; source: DictionarySource }): Promise<{ dictionaryId: string | null; entries: number | null }> {
      const { log } = Context.current();
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
    },

    /**
     * Maps one dataset's columns: matches the dictionary by column name, keeps values a person
     * wrote unless `overwrite`, then (unless a dry run) writes through the safe writer. Every
     * outcome, a refusal included, is this dataset's; only an outage is thrown for a retry.
     */
    async mapDatasetColumns(input: MapDatasetInput): Promise<MapColumnsItem> {
      const beat = setInterval(() => Context.current().heartbeat(), 3000);
      try {
        return await mapOne(input);
      } finally {
        clearInterval(beat);
      }
    },
  };

  async function mapOne(input: MapDatasetInput): Promise<MapColumnsItem> {
    const { log } = Context.current();
    const taskId = currentTaskId();
    const item = `dataset ${input.datasetId}`;
    const base: MapColumnsItem = {
      kind: 'dataset',
      id: input.datasetId,
      title: null,
      status: 'failed',
      outcome: 'failed',
      next_actions: [],
      changes: [],
      kept: [],
      unmatched: { dictionary: [], dataset: [] },
      change_id: null,
      fingerprint: null,
    };
    const fail = (failure: ItemFailure, extra: Partial<MapColumnsItem> = {}): MapColumnsItem => {
      log.error(`${item}${extra.title ?? base.title ? ` ('${extra.title ?? base.title}')` : ''}: ${failure.error}`);
      return { ...base, ...extra, status: 'failed', outcome: 'failed', ...failure };
    };
    const at = { step: 'read' };
    try {
      const client = await deps.superset(input.envId);
      const detail = await client.datasets.get(input.datasetId);
      base.title = detail.table_name;
      base.fingerprint = datasetFingerprint(detail);

      // Applying a reviewed dry run: exactly its plan, and only onto the dataset it was made for.
      let edits: FieldEdit[];
      let kept: DatasetFieldChange[] = [];
      if (input.reviewedTaskId) {
        at.step = 'review';
        const reviewed = await reviewedItem(input.reviewedTaskId, input.datasetId);
        if (!reviewed) {
          return fail({
            step: 'review',
            error: `the reviewed dry run ${input.reviewedTaskId} has no plan for ${item}`,
            next_actions: [rerunDryRun()],
          });
        }
        if (reviewed.fingerprint !== base.fingerprint) {
          log.warn(`${item} ('${detail.table_name}') changed in Superset since the reviewed dry run read it: not written`);
          return {
            ...base,
            status: 'conflict',
            outcome: 'skipped',
            step: 'review',
            error: `dataset '${detail.table_name}' changed in Superset after the dry run ${input.reviewedTaskId} read it; its plan may no longer be right, so nothing was written`,
            next_actions: [rerunDryRun()],
          };
        }
        edits = reviewed.changes.map((c) => ({ target: c.target, column_name: c.column_name, field: c.field, value: c.after }));
        kept = reviewed.kept;
        base.unmatched = reviewed.unmatched;
      } else {
        at.step = 'dictionary';
        const entries = await entriesFor(client, detail, input);
        if ('failure' in entries) return fail(entries.failure);
        const matched = matchDictionary(entries.entries, detail);
        base.unmatched = { dictionary: matched.unmatched_dictionary, dataset: matched.unmatched_dataset };
        const lastWritten = await changes.lastWritten(input.envId, input.datasetId);
        edits = [];
        for (const m of matched.matches) {
          for (const field of ['verbose_name', 'description'] as const) {
            const value = m.entry[field];
            if (value === null) continue;
            const ref = { target: 'column' as const, column_name: m.column_name, field };
            const current = valueOf(detail, ref) ?? null;
            // A value a person wrote stays unless the caller asked to overwrite; one Switchyard wrote may be refreshed.
            if (current !== null && current !== value && !input.overwrite && isPersonWritten(current, ref, lastWritten)) {
              kept.push({
                ...ref,
                column_id: detail.columns.find((c) => c.column_name === m.column_name)?.id ?? null,
                before: current,
                after: value,
              });
              continue;
            }
            if (current !== null && isPersonWritten(current, ref, lastWritten) && current !== value) {
              log.info(`${item}: replacing the ${field} of column '${m.column_name}' a person wrote (overwrite is on; undo restores it)`);
            }
            edits.push({ ...ref, value });
          }
        }
      }

      const planned = plannedChanges(detail, edits);
      if (input.dryRun) {
        log.info(`dry run of ${item} ('${detail.table_name}'): ${planned.length} field(s) would change, ${kept.length} kept`);
        return { ...base, status: planned.length ? 'planned' : 'unchanged', outcome: planned.length ? 'planned' : 'succeeded', changes: planned, kept };
      }
      if (!planned.length) {
        log.info(`${item} ('${detail.table_name}'): nothing to change`);
        return { ...base, status: 'unchanged', outcome: 'succeeded', kept };
      }
      at.step = 'write';
      const written = await writeDataset(client, changes, {
        envId: input.envId,
        datasetId: input.datasetId,
        base: detail,
        edits,
        source: 'map_columns',
        taskId,
        idempotencyKey: `${taskId}:${input.datasetId}`,
        actor: await actorOfTask(taskId),
      });
      if (written.status === 'conflict') {
        log.warn(`${item} ('${detail.table_name}') changed in Superset while it was being mapped: ${written.differences.join('; ')}`);
        return {
          ...base,
          status: 'conflict',
          outcome: 'skipped',
          step: 'write',
          error: `dataset '${detail.table_name}' changed in Superset while it was being mapped (${written.differences.slice(0, 5).join('; ')}); nothing was written`,
          next_actions: [rerunDryRun()],
        };
      }
      if (written.status === 'unchanged') return { ...base, status: 'unchanged', outcome: 'succeeded', kept };
      const unexpected = written.unexpected;
      if (unexpected.length) log.error(`${item}: after the write, more than the intended fields differ: ${unexpected.join('; ')}`);
      log.info(`${item} ('${detail.table_name}'): wrote ${written.changes.length} field(s) as change ${written.change.id}${written.dropped.length ? ` (Superset refused the read-only keys ${written.dropped.join(', ')}, which were left out)` : ''}`);
      const undo = {
        action: 'undo',
        description: 'Restore the values this task replaced',
        request: { method: 'POST', path: `/api/datasets/changes/${written.change.id}/undo`, body: {} },
      };
      if (unexpected.length) {
        return {
          ...base,
          status: 'failed',
          outcome: 'failed',
          step: 'verify',
          error: `the write landed, but reading the dataset back shows other changes too: ${unexpected.slice(0, 10).join('; ')}`,
          changes: written.changes,
          kept,
          change_id: written.change.id,
          unexpected,
          next_actions: [undo],
        };
      }
      return { ...base, status: 'updated', outcome: 'succeeded', changes: written.changes, kept, change_id: written.change.id, unexpected: [], next_actions: [undo] };
    } catch (err) {
      if (err instanceof DatasetEditError || err instanceof DictionaryQueryError) return fail({ step: at.step, error: err.message, next_actions: [] });
      return fail(itemFailure(err, { step: at.step, item, envId: input.envId, listPath: `/api/datasets?env_id=${input.envId}` }));
    }
  }

  /** The dictionary entries for one dataset: the stored dictionary, or its table's column comments from the catalog. */
  async function entriesFor(client: SupersetClient, detail: DatasetDetail, input: MapDatasetInput): Promise<{ entries: DictionaryEntry[] } | { failure: ItemFailure }> {
    const foreign = foreignDatabase(detail, input.source);
    if (foreign) return { failure: foreign };
    if (input.dictionaryId) {
      const d = await dictionaries.get(input.dictionaryId);
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
    return { entries: await runDictionaryQuery(client, { databaseId: source.databaseId, backend, sql, schema: detail.schema ?? null, catalog: detail.catalog ?? null }) };
  }

  async function reviewedItem(taskId: string, datasetId: number): Promise<MapColumnsItem | undefined> {
    const task = await deps.stores.tasks.get(taskId);
    const result = task?.result as MapColumnsResult | null | undefined;
    return result?.items?.find((i) => i.id === datasetId && (i.status === 'planned' || i.status === 'unchanged'));
  }
}

function rerunDryRun() {
  return {
    action: 'review_again',
    description: 'Run the mapping as a dry run again, review its plan, then apply that dry run with reviewed_task_id',
  };
}

/** Why the task's dictionary query could not be used, as the failure of every dataset. */
function dictionaryFailure(err: unknown, envId: string, databaseId: number): ItemFailure {
  if (err instanceof DictionaryQueryError) {
    return {
      step: 'dictionary',
      error: err.message,
      next_actions: [{ action: 'fix_query', description: 'Return one row per column: column_name, verbose_name, description (and optionally table_name)' }],
    };
  }
  const failure = itemFailure(err, { step: 'dictionary', item: `the dictionary query on database ${databaseId}`, envId });
  return failure;
}
