import { Context } from '@temporalio/activity';
import type { DatasetFieldChange, MapColumnsItem, MapColumnsResult } from '../../../contracts/datasets.ts';
import type { ItemFailure } from '../../../contracts/failures.ts';
import { isPersonWritten } from '../../../db/datasets/changes.ts';
import { writeDataset } from '../../../domain/datasets/index.ts';
import { matchDictionary } from '../../../lib/dictionary/entries.ts';
import type { SupersetClient } from '../../../lib/superset/client.ts';
import { datasetFingerprint, DatasetEditError, plannedChanges, valueOf, type FieldEdit } from '../../../lib/superset/dataset-edit.ts';
import type { DatasetDetail } from '../../../lib/superset/types.ts';
import type { ActivityDeps } from '../../deps.ts';
import { itemFailure } from '../../../domain/failures/index.ts';
import { currentTaskId } from '../../task-context.ts';
import { DictionaryQueryError } from '../dictionary-query.ts';
import { entriesFor, type MapDatasetInput } from './entries.ts';

/** One dataset being mapped: its item so far, the step it is at, and how it fails (logged). */
interface Mapping {
  input: MapDatasetInput;
  /** "dataset <id>", for log lines and failures. */
  item: string;
  base: MapColumnsItem;
  at: { step: string };
  fail(failure: ItemFailure, extra?: Partial<MapColumnsItem>): MapColumnsItem;
}

/** What would be written, and the values a person wrote that stay. */
interface Plan {
  edits: FieldEdit[];
  kept: DatasetFieldChange[];
}

/**
 * Maps one dataset's columns: matches the dictionary by column name, keeps values a person
 * wrote unless `overwrite`, then (unless a dry run) writes through the safe writer. Every
 * outcome, a refusal included, is this dataset's; only an outage is thrown for a retry.
 */
export async function mapDatasetColumns(deps: ActivityDeps, input: MapDatasetInput): Promise<MapColumnsItem> {
  const beat = setInterval(() => Context.current().heartbeat(), 3000);
  try {
    return await mapOne(deps, input);
  } finally {
    clearInterval(beat);
  }
}

async function mapOne(deps: ActivityDeps, input: MapDatasetInput): Promise<MapColumnsItem> {
  const m = startMapping(input);
  try {
    const client = await deps.superset(input.envId);
    const detail = await client.datasets.get(input.datasetId);
    m.base.title = detail.table_name;
    m.base.fingerprint = datasetFingerprint(detail);
    // Applying a reviewed dry run: exactly its plan, and only onto the dataset it was made for.
    const plan = input.reviewedTaskId
      ? await planFromReview(deps, m, detail, input.reviewedTaskId)
      : await planFromDictionary(deps, m, client, detail);
    if ('done' in plan) return plan.done;
    return await applyPlan(deps, m, client, detail, plan);
  } catch (err) {
    if (err instanceof DatasetEditError || err instanceof DictionaryQueryError)
      return m.fail({ step: m.at.step, error: err.message, next_actions: [] });
    return m.fail(itemFailure(err, { step: m.at.step, item: m.item, envId: input.envId, listPath: `/api/datasets?env_id=${input.envId}` }));
  }
}

function startMapping(input: MapDatasetInput): Mapping {
  const m: Mapping = {
    input,
    item: `dataset ${input.datasetId}`,
    base: {
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
    },
    at: { step: 'read' },
    fail: (failure, extra = {}) => {
      Context.current().log.error(
        `${m.item}${(extra.title ?? m.base.title) ? ` ('${extra.title ?? m.base.title}')` : ''}: ${failure.error}`,
      );
      return { ...m.base, ...extra, status: 'failed', outcome: 'failed', ...failure };
    },
  };
  return m;
}

/** The reviewed dry run's plan for this dataset, unless it has none or the dataset changed since it was read. */
async function planFromReview(
  deps: Pick<ActivityDeps, 'stores'>,
  m: Mapping,
  detail: DatasetDetail,
  reviewedTaskId: string,
): Promise<Plan | { done: MapColumnsItem }> {
  m.at.step = 'review';
  const task = await deps.stores.tasks.get(reviewedTaskId);
  const result = task?.result as MapColumnsResult | null | undefined;
  const reviewed = result?.items?.find((i) => i.id === m.input.datasetId && (i.status === 'planned' || i.status === 'unchanged'));
  if (!reviewed)
    return {
      done: m.fail({
        step: 'review',
        error: `the reviewed dry run ${reviewedTaskId} has no plan for ${m.item}`,
        next_actions: [rerunDryRun()],
      }),
    };
  if (reviewed.fingerprint !== m.base.fingerprint) {
    Context.current().log.warn(`${m.item} ('${detail.table_name}') changed in Superset since the reviewed dry run read it: not written`);
    return {
      done: {
        ...m.base,
        status: 'conflict',
        outcome: 'skipped',
        step: 'review',
        error: `dataset '${detail.table_name}' changed in Superset after the dry run ${reviewedTaskId} read it; its plan may no longer be right, so nothing was written`,
        next_actions: [rerunDryRun()],
      },
    };
  }
  m.base.unmatched = reviewed.unmatched;
  return {
    edits: reviewed.changes.map((c) => ({ target: c.target, column_name: c.column_name, field: c.field, value: c.after })),
    kept: reviewed.kept,
  };
}

/** The dictionary matched to the dataset's columns: a value a person wrote stays unless the caller asked to overwrite; one Switchyard wrote may be refreshed. */
async function planFromDictionary(
  deps: ActivityDeps,
  m: Mapping,
  client: SupersetClient,
  detail: DatasetDetail,
): Promise<Plan | { done: MapColumnsItem }> {
  const { input } = m;
  m.at.step = 'dictionary';
  const entries = await entriesFor(deps, client, detail, input);
  if ('failure' in entries) return { done: m.fail(entries.failure) };
  const matched = matchDictionary(entries.entries, detail);
  m.base.unmatched = { dictionary: matched.unmatched_dictionary, dataset: matched.unmatched_dataset };
  const lastWritten = await deps.stores.datasetChanges.lastWritten(input.envId, input.datasetId);
  const plan: Plan = { edits: [], kept: [] };
  for (const match of matched.matches) {
    for (const field of ['verbose_name', 'description'] as const) {
      const value = match.entry[field];
      if (value === null) continue;
      const ref = { target: 'column' as const, column_name: match.column_name, field };
      const current = valueOf(detail, ref) ?? null;
      if (current !== null && current !== value && !input.overwrite && isPersonWritten(current, ref, lastWritten)) {
        plan.kept.push({
          ...ref,
          column_id: detail.columns.find((c) => c.column_name === match.column_name)?.id ?? null,
          before: current,
          after: value,
        });
        continue;
      }
      if (current !== null && isPersonWritten(current, ref, lastWritten) && current !== value) {
        Context.current().log.info(
          `${m.item}: replacing the ${field} of column '${match.column_name}' a person wrote (overwrite is on; undo restores it)`,
        );
      }
      plan.edits.push({ ...ref, value });
    }
  }
  return plan;
}

/** The plan as a dry run's answer, or written through the safe writer (as the task's owner) and checked. */
async function applyPlan(
  deps: ActivityDeps,
  m: Mapping,
  client: SupersetClient,
  detail: DatasetDetail,
  plan: Plan,
): Promise<MapColumnsItem> {
  const { log } = Context.current();
  const { input, item, base } = m;
  const { edits, kept } = plan;
  const planned = plannedChanges(detail, edits);
  if (input.dryRun) {
    log.info(`dry run of ${item} ('${detail.table_name}'): ${planned.length} field(s) would change, ${kept.length} kept`);
    return {
      ...base,
      status: planned.length ? 'planned' : 'unchanged',
      outcome: planned.length ? 'planned' : 'succeeded',
      changes: planned,
      kept,
    };
  }
  if (!planned.length) {
    log.info(`${item} ('${detail.table_name}'): nothing to change`);
    return { ...base, status: 'unchanged', outcome: 'succeeded', kept };
  }
  m.at.step = 'write';
  const written = await writePlan(deps, m, client, detail, edits);
  return writtenItem(m, detail, kept, written);
}

type Written = Awaited<ReturnType<typeof writeDataset>>;

/** The plan's edits written through the safe writer, as the task's owner, keyed by the task and the dataset. */
async function writePlan(
  deps: ActivityDeps,
  m: Mapping,
  client: SupersetClient,
  detail: DatasetDetail,
  edits: FieldEdit[],
): Promise<Written> {
  const { input } = m;
  const taskId = currentTaskId();
  const owner = await deps.stores.tasks.get(taskId);
  return await writeDataset(client, deps.stores.datasetChanges, {
    envId: input.envId,
    datasetId: input.datasetId,
    base: detail,
    edits,
    source: 'map_columns',
    taskId,
    idempotencyKey: `${taskId}:${input.datasetId}`,
    actor: { id: owner?.owner_id ?? null, username: owner?.owner_username ?? null },
  });
}

/** The dataset's item from what the write answered: a conflict, nothing changed, or the change (with its undo), checked by the read back. */
function writtenItem(m: Mapping, detail: DatasetDetail, kept: DatasetFieldChange[], written: Written): MapColumnsItem {
  const { log } = Context.current();
  const { item, base } = m;
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
  log.info(
    `${item} ('${detail.table_name}'): wrote ${written.changes.length} field(s) as change ${written.change.id}${written.dropped.length ? ` (Superset refused the read-only keys ${written.dropped.join(', ')}, which were left out)` : ''}`,
  );
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
  return {
    ...base,
    status: 'updated',
    outcome: 'succeeded',
    changes: written.changes,
    kept,
    change_id: written.change.id,
    unexpected: [],
    next_actions: [undo],
  };
}

function rerunDryRun() {
  return {
    action: 'review_again',
    description: 'Run the mapping as a dry run again, review its plan, then apply that dry run with reviewed_task_id',
  };
}
