/**
 * The dataset_launch activities: the reviewed labels and descriptions written through the safe
 * dataset writer (undoable like any other change), the previewed query saved in SQL Lab, and the
 * handoff recorded on the session. Each is safe to repeat: the write is keyed by the task, the
 * saved query is looked up by its label (which carries the task id) before one is created.
 */
import type { DatasetLaunchHandoff, DatasetLaunchInput } from '../../contracts/dataset-review.ts';
import { writeDataset } from '../../domain/datasets/index.ts';
import type { FieldEdit } from '../../lib/superset/dataset-edit.ts';
import type { ActivityDeps } from '../deps.ts';
import { failItem, itemFailure } from '../../domain/failures/index.ts';
import { currentTaskId } from '../task-context.ts';

export function createDatasetLaunchActivities(deps: ActivityDeps) {
  const { datasetChanges: changes, environments } = deps.stores;
  const { sessions } = deps.stores.review;

  return {
    async writeReviewedLabels(input: DatasetLaunchInput): Promise<LabelsWritten> {
      return writeReviewedLabels(deps, changes, input);
    },

    async saveReviewedQuery(input: DatasetLaunchInput): Promise<{ id: number; label: string }> {
      const taskId = currentTaskId();
      const client = await deps.superset(input.envId);
      const label = `${input.savedQuery.label} [${taskId.slice(0, 8)}]`;
      try {
        const found = await client.request<{ result?: Array<{ id: number; label: string }> }>('GET', '/api/v1/saved_query/', {
          q: { filters: [{ col: 'label', opr: 'eq', value: label }], columns: ['id', 'label'], page: 0, page_size: 1 },
        });
        const held = found.result?.find((r) => r.label === label);
        if (held) return { id: held.id, label };
        const created = await client.sqlLab.save({ ...input.savedQuery, label });
        return { id: created.id, label };
      } catch (err) {
        failItem(itemFailure(err, { step: 'saved_query', item: `the saved query of dataset ${input.datasetId}`, envId: input.envId }));
      }
    },

    /** Links into Superset for the handoff, from the environment's base URL. */
    async launchLinks(input: {
      envId: string;
      datasetId: number;
      savedQueryId: number | null;
    }): Promise<{ dataset: string; saved_query: string | null; sqllab: string | null }> {
      const env = await environments.get(input.envId);
      const base = env.base_url.replace(/\/+$/, '');
      return {
        dataset: `${base}/explore/?datasource_type=table&datasource_id=${input.datasetId}`,
        saved_query: input.savedQueryId === null ? null : `${base}/sqllab/?savedQueryId=${input.savedQueryId}`,
        sqllab: input.savedQueryId === null ? null : `${base}/sqllab/?savedQueryId=${input.savedQueryId}`,
      };
    },

    async recordLaunchHandoff(input: { sessionId: string; handoff: DatasetLaunchHandoff; launched: boolean }): Promise<void> {
      await sessions.recordLaunch(input.sessionId, input.handoff as unknown as Record<string, unknown>, input.launched ? 'launched' : null);
    },
  };
}

type LabelsWritten = { status: 'updated' | 'unchanged' | 'conflict'; change_id: string | null; fields: number; differences: string[] };

/** The reviewed labels and descriptions as field edits: a null is a field the review left alone. */
function reviewedLabelEdits(input: DatasetLaunchInput): FieldEdit[] {
  const edits: FieldEdit[] = [];
  for (const c of input.columns) {
    if (c.verbose_name !== null) edits.push({ target: 'column', column_name: c.column_name, field: 'verbose_name', value: c.verbose_name });
    if (c.description !== null) edits.push({ target: 'column', column_name: c.column_name, field: 'description', value: c.description });
  }
  return edits;
}

/** Writes the edits of the columns the dataset still has, through the safe writer, keyed by the task. */
async function writeReviewedLabels(
  deps: ActivityDeps,
  changes: ActivityDeps['stores']['datasetChanges'],
  input: DatasetLaunchInput,
): Promise<LabelsWritten> {
  const taskId = currentTaskId();
  const client = await deps.superset(input.envId);
  const edits = reviewedLabelEdits(input);
  try {
    const current = await client.datasets.get(input.datasetId);
    const known = new Set(current.columns.map((c) => c.column_name));
    const out = await writeDataset(client, changes, {
      envId: input.envId,
      datasetId: input.datasetId,
      base: null,
      edits: edits.filter((e) => known.has(e.column_name!)),
      source: 'dataset_launch',
      taskId,
      idempotencyKey: `${taskId}:launch`,
      actor: { id: input.launchedBy.id, username: input.launchedBy.username },
    });
    if (out.status === 'conflict') return { status: 'conflict', change_id: null, fields: 0, differences: out.differences };
    if (out.status === 'unchanged') return { status: 'unchanged', change_id: null, fields: 0, differences: [] };
    return { status: 'updated', change_id: out.change.id, fields: out.changes.length, differences: [] };
  } catch (err) {
    failItem(
      itemFailure(err, {
        step: 'write',
        item: `dataset ${input.datasetId}`,
        envId: input.envId,
        listPath: `/api/datasets?env_id=${input.envId}`,
      }),
    );
  }
}
