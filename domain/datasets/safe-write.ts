/**
 * The one way Switchyard writes into a Superset dataset (column mapping, accepted suggestions,
 * undo). Each write:
 *   1. reads the dataset and, when the edits were planned on an earlier read, refuses to go on if
 *      anything in it changed since (a conflict: a person's work is never overwritten blindly);
 *   2. records the values it is about to replace (`dataset_changes`, status pending);
 *   3. sends the full column and metric lists with their ids, only the intended fields changed;
 *   4. reads the dataset again and proves nothing else moved (or records what did).
 * A write cut short (a worker killed between 2 and 4) is found again by its idempotency key and
 * finished instead of being applied twice.
 */
import type { SupersetClient } from '../../lib/superset/client.ts';
import {
  buildUpdate,
  datasetFingerprint,
  describeRef,
  plannedChanges,
  sameValue,
  unexpectedDifferences,
  valueOf,
  type FieldChange,
  type FieldEdit,
} from '../../lib/superset/dataset-edit.ts';
import type { DatasetDetail } from '../../lib/superset/types.ts';
import type { ChangeSource, DatasetChangeRow, DatasetChangeStore } from '../../db/datasets/changes.ts';

/** A client that can read and update datasets (a SupersetClient). */
export type DatasetWriter = { datasets: Pick<SupersetClient['datasets'], 'get' | 'update'> };

export interface WriteRequest {
  envId: string;
  datasetId: number;
  /** The dataset as read when the edits were planned; null: plan on the read made here. */
  base: DatasetDetail | null;
  edits: FieldEdit[];
  source: ChangeSource;
  taskId?: string | null;
  /** Makes the write safe to repeat (an activity attempt): the same key finds the same change. */
  idempotencyKey?: string | null;
  actor: { id: string | null; username: string | null };
  undoOf?: string | null;
}

export type WriteOutcome =
  | { status: 'applied'; change: DatasetChangeRow; changes: FieldChange[]; unexpected: string[]; dropped: string[]; after: DatasetDetail }
  | { status: 'unchanged'; current: DatasetDetail }
  | { status: 'conflict'; differences: string[]; current: DatasetDetail };

export async function writeDataset(client: DatasetWriter, store: DatasetChangeStore, req: WriteRequest): Promise<WriteOutcome> {
  const previous = req.idempotencyKey ? await store.findByKey(req.idempotencyKey) : undefined;
  const current = await client.datasets.get(req.datasetId);
  if (previous) {
    const resumed = await resumeEarlierAttempt(store, previous, current);
    if (resumed) return resumed;
  }
  if (req.base) {
    const conflict = changedSinceRead(req.base, current);
    if (conflict) return conflict;
  }

  const changes = plannedChanges(current, req.edits);
  if (!changes.length) return { status: 'unchanged', current };
  const change = await recordPlan(store, req, previous, current, changes);
  return await sendAndVerify(client, store, req.datasetId, current, changes, change);
}

/**
 * What an earlier attempt with the same idempotency key settles: its outcome when it finished, or
 * a conflict when the dataset moved under a write still pending. Undefined: plan and write afresh.
 */
async function resumeEarlierAttempt(
  store: DatasetChangeStore,
  previous: DatasetChangeRow,
  current: DatasetDetail,
): Promise<WriteOutcome | undefined> {
  if (previous.status === 'applied' || previous.status === 'undone') {
    return {
      status: 'applied',
      change: previous,
      changes: previous.fields,
      unexpected: previous.verify_problems ?? [],
      dropped: previous.dropped_keys ?? [],
      after: current,
    };
  }
  if (previous.status !== 'pending') return undefined;
  // An earlier attempt recorded its plan and may or may not have written it.
  const landed = previous.fields.every((f) => sameValue(valueOf(current, f), f.after));
  if (landed) {
    const change = await store.markApplied(previous.id, {
      fingerprintAfter: datasetFingerprint(current),
      verifyProblems: [],
      dropped: [],
    });
    return { status: 'applied', change, changes: change.fields, unexpected: [], dropped: [], after: current };
  }
  const untouched = previous.fields.every((f) => sameValue(valueOf(current, f), f.before));
  if (untouched) return undefined;
  return {
    status: 'conflict',
    differences: previous.fields
      .filter((f) => !sameValue(valueOf(current, f), f.before))
      .map((f) => `${describeRef(f)} changed while the write was in flight: it holds ${JSON.stringify(valueOf(current, f))}`),
    current,
  };
}

/** A conflict when the dataset changed since the read the edits were planned on. */
function changedSinceRead(base: DatasetDetail, current: DatasetDetail): WriteOutcome | undefined {
  if (datasetFingerprint(base) === datasetFingerprint(current)) return undefined;
  const differences = unexpectedDifferences(base, current, []);
  return {
    status: 'conflict',
    differences: differences.length ? differences : ['the dataset changed in Superset since it was read'],
    current,
  };
}

/** The values about to be replaced, recorded pending before the write: on an earlier attempt's row when there is one to reuse. */
async function recordPlan(
  store: DatasetChangeStore,
  req: WriteRequest,
  previous: DatasetChangeRow | undefined,
  current: DatasetDetail,
  changes: FieldChange[],
): Promise<DatasetChangeRow> {
  const fingerprintBefore = datasetFingerprint(current);
  return previous && (previous.status === 'pending' || previous.status === 'failed')
    ? await store.replan(previous.id, changes, fingerprintBefore)
    : await store.insertPending({
        envId: req.envId,
        datasetId: req.datasetId,
        datasetName: current.table_name ?? null,
        source: req.source,
        taskId: req.taskId ?? null,
        idempotencyKey: req.idempotencyKey ?? null,
        actor: req.actor,
        fields: changes,
        fingerprintBefore,
        undoOf: req.undoOf ?? null,
      });
}

/** The update sent, then the dataset read back to prove nothing else moved; the recorded change marked failed or applied. */
async function sendAndVerify(
  client: DatasetWriter,
  store: DatasetChangeStore,
  datasetId: number,
  current: DatasetDetail,
  changes: FieldChange[],
  change: DatasetChangeRow,
): Promise<WriteOutcome> {
  let dropped: string[];
  try {
    ({ dropped } = await client.datasets.update(datasetId, buildUpdate(current, changes)));
  } catch (err) {
    // Superset refused the update as a whole: nothing was written.
    await store.markFailed(change.id, err instanceof Error ? err.message : String(err));
    throw err;
  }
  const after = await client.datasets.get(datasetId);
  const unexpected = unexpectedDifferences(current, after, changes);
  const applied = await store.markApplied(change.id, { fingerprintAfter: datasetFingerprint(after), verifyProblems: unexpected, dropped });
  return { status: 'applied', change: applied, changes, unexpected, dropped, after };
}

export type UndoOutcome =
  | { status: 'undone'; undo: DatasetChangeRow; original: DatasetChangeRow; unexpected: string[] }
  | { status: 'conflict'; differences: string[] }
  | { status: 'not_undoable'; reason: string };

/**
 * Puts back the values a change replaced. Refused when a field no longer holds what the change
 * wrote (someone changed it since), unless `force`: a person's later work is not undone blindly.
 */
export async function undoChange(
  client: DatasetWriter,
  store: DatasetChangeStore,
  changeId: string,
  actor: { id: string | null; username: string | null },
  force = false,
): Promise<UndoOutcome> {
  const original = await store.get(changeId);
  if (!original) return { status: 'not_undoable', reason: 'not_found' };
  if (original.status !== 'applied') {
    return {
      status: 'not_undoable',
      reason: original.status === 'undone' ? 'already undone' : `the change is ${original.status}, nothing was written`,
    };
  }
  const current = await client.datasets.get(original.dataset_id);
  const moved = original.fields.filter((f) => !sameValue(valueOf(current, f), f.after));
  if (moved.length && !force) {
    return {
      status: 'conflict',
      differences: moved.map(
        (f) =>
          `${describeRef(f)} was changed after this change: it holds ${JSON.stringify(valueOf(current, f) ?? null)}, not ${JSON.stringify(f.after)}`,
      ),
    };
  }
  const outcome = await writeDataset(client, store, {
    envId: original.env_id,
    datasetId: original.dataset_id,
    base: current,
    edits: original.fields
      .filter((f) => valueOf(current, f) !== undefined)
      .map((f) => ({ target: f.target, column_name: f.column_name, field: f.field, value: f.before })),
    source: 'undo',
    actor,
    undoOf: original.id,
  });
  if (outcome.status === 'conflict') return { status: 'conflict', differences: outcome.differences };
  if (outcome.status === 'unchanged') return recordUndoWithoutWrite(store, original, actor, outcome.current);
  await store.markUndone(original.id, outcome.change.id, actor.username);
  return { status: 'undone', undo: outcome.change, original: (await store.get(original.id))!, unexpected: outcome.unexpected };
}

/** Every field already holds its previous value: the undo is recorded, applied and linked without writing to Superset. */
async function recordUndoWithoutWrite(
  store: DatasetChangeStore,
  original: DatasetChangeRow,
  actor: { id: string | null; username: string | null },
  current: DatasetDetail,
): Promise<UndoOutcome> {
  const undo = await store.insertPending({
    envId: original.env_id,
    datasetId: original.dataset_id,
    datasetName: original.dataset_name,
    source: 'undo',
    taskId: null,
    idempotencyKey: null,
    actor,
    fields: [],
    fingerprintBefore: datasetFingerprint(current),
    undoOf: original.id,
  });
  const applied = await store.markApplied(undo.id, { fingerprintAfter: datasetFingerprint(current), verifyProblems: [], dropped: [] });
  await store.markUndone(original.id, applied.id, actor.username);
  return { status: 'undone', undo: applied, original: (await store.get(original.id))!, unexpected: [] };
}
