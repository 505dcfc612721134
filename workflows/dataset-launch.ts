import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities/index.ts';
import type { DatasetLaunchHandoff, DatasetLaunchInput, DatasetLaunchItem, DatasetLaunchResult } from '../contracts/dataset-review.ts';
import { NON_RETRYABLE_FAILURE_TYPES, type ItemFailure } from '../contracts/failures.ts';
import { failureOf } from './item-failure.ts';
import { endTaskWithResult, reportTaskProgress, runAsTask } from './task-run.ts';

const act = proxyActivities<Activities>({
  startToCloseTimeout: '5 minutes',
  retry: {
    initialInterval: '2 seconds',
    maximumInterval: '30 seconds',
    maximumAttempts: 3,
    nonRetryableErrorTypes: NON_RETRYABLE_FAILURE_TYPES,
  },
});

/**
 * Launches a reviewed dataset: writes its column labels and descriptions (one safe, undoable
 * change), saves the previewed query in SQL Lab, and records the handoff on the session. The
 * saved query is attempted even when the write fails, so the result names both outcomes.
 */
export async function datasetLaunchWorkflow(input: DatasetLaunchInput): Promise<DatasetLaunchResult> {
  return runAsTask(
    async () => {
      await reportTaskProgress({ done: 0, total: 2, message: `writing ${input.columns.length} reviewed column(s)` });
      let write: Awaited<ReturnType<Activities['writeReviewedLabels']>> | undefined;
      let writeFailure: ItemFailure | undefined;
      try {
        write = await act.writeReviewedLabels(input);
      } catch (err) {
        writeFailure = failureOf(err, 'write');
      }
      await reportTaskProgress({ done: 1, total: 2, message: 'saving the previewed query' });
      let saved: { id: number; label: string } | undefined;
      let saveFailure: ItemFailure | undefined;
      try {
        saved = await act.saveReviewedQuery(input);
      } catch (err) {
        saveFailure = failureOf(err, 'saved_query');
      }
      const links = await act.launchLinks({ envId: input.envId, datasetId: input.datasetId, savedQueryId: saved?.id ?? null });

      const item = launchItem(input, { write, writeFailure, saved, saveFailure });
      const handoff: DatasetLaunchHandoff = {
        session_id: input.sessionId,
        session_version: input.sessionVersion,
        launched_by: input.launchedBy,
        launched_at: new Date().toISOString(),
        dataset: { id: input.datasetId, name: input.datasetName, url: links.dataset },
        change: write?.change_id
          ? { id: write.change_id, fields: write.fields, undo: { method: 'POST', path: `/api/datasets/changes/${write.change_id}/undo` } }
          : null,
        saved_query: saved ? { id: saved.id, label: saved.label, url: links.saved_query! } : null,
        sqllab_url: links.sqllab,
      };
      const ok = item.outcome === 'succeeded';
      await act.recordLaunchHandoff({ sessionId: input.sessionId, handoff, launched: ok });
      await reportTaskProgress({ done: 2, total: 2, message: ok ? 'launched' : 'launch incomplete' });
      const result: DatasetLaunchResult = {
        env_id: input.envId,
        handoff,
        items: [item],
        not_started: 0,
        cancelled: false,
        next_actions: [],
      };
      if (!ok) await endTaskWithResult('FAILED', result, item.error ?? 'the launch did not complete', 'DatasetLaunchIncomplete');
      return result;
    },
    { gate: { approval: input.approval, what: `launching dataset ${input.datasetName}` } },
  );
}

type LaunchWrite = Awaited<ReturnType<Activities['writeReviewedLabels']>>;

/** The launch's one item from what its two steps did: a write that met a changed dataset is a conflict with its next action. */
function launchItem(
  input: DatasetLaunchInput,
  done: { write?: LaunchWrite; writeFailure?: ItemFailure; saved?: { id: number; label: string }; saveFailure?: ItemFailure },
): DatasetLaunchItem {
  const { write, writeFailure, saved, saveFailure } = done;
  const conflict = write?.status === 'conflict';
  const failure = writeFailure ?? saveFailure;
  return {
    kind: 'dataset',
    id: input.datasetId,
    title: input.datasetName,
    status: writeFailure ? 'failed' : conflict ? 'conflict' : write!.status,
    outcome: failure ? 'failed' : conflict ? 'skipped' : 'succeeded',
    change_id: write?.change_id ?? null,
    fields_written: write?.fields ?? 0,
    saved_query_id: saved?.id ?? null,
    ...(failure ? failure : {}),
    ...(conflict && !failure
      ? {
          error: `dataset ${input.datasetName} changed in Superset while it was written: ${write!.differences.slice(0, 5).join('; ')}; nothing was written`,
          step: 'write',
          next_actions: [
            {
              action: 'preview_again',
              description: 'Preview the review again and launch once more',
              request: { method: 'POST', path: `/api/dataset-review/sessions/${input.sessionId}/preview`, body: {} },
            },
          ],
        }
      : { next_actions: failure?.next_actions ?? [] }),
  };
}
